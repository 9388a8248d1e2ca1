// Migration 0020 (issue 42's restore and failover guarantees): the companies whose stored ledger
// is behind a checkpoint seen outside it. Never edit a migration once released.
import type { Kysely, Migration } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    // A company whose stored ledger is behind a checkpoint seen outside it (a failover to a replica
    // that lagged, a restored copy): appends refused until an operator decides (continuity/guard.ts).
    await db.schema
      .createTable('continuity_holds')
      .addColumn('company_id', 'text', (c) => c.notNull())
      .addColumn('seen_size', 'bigint', (c) => c.notNull())
      .addColumn('stored_size', 'bigint', (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('note', 'text')
      .addColumn('detected_at', 'text', (c) => c.notNull())
      // null while it holds; 'supplied' (the missing entries were appended) or 'loss_accepted'
      .addColumn('decision', 'text')
      .addColumn('reason', 'text')
      .addColumn('decided_at', 'text')
      // When the service recorded the decision in the company's chain (ledger.continuity_loss_accepted).
      .addColumn('recorded_at', 'text')
      .addPrimaryKeyConstraint('continuity_holds_pk', ['company_id', 'seen_size'])
      .execute();
  },
};
