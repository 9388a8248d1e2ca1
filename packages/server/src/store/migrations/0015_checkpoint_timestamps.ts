// Migration 0015 (issue 32): the RFC 3161 timestamps of checkpoints. Never edit a migration once released.
import type { Kysely, Migration } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    // RFC 3161 timestamps of checkpoints (docs/ledger-format.md §19), kept like the witnesses' cosignatures.
    await db.schema
      .createTable('checkpoint_timestamps')
      .addColumn('company_id', 'text', (c) => c.notNull())
      .addColumn('tree_size', 'bigint', (c) => c.notNull())
      .addColumn('tsa', 'text', (c) => c.notNull())
      .addColumn('token', 'text', (c) => c.notNull())
      .addColumn('gen_time', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('checkpoint_timestamps_pk', ['company_id', 'tree_size', 'tsa'])
      .execute();
  },
};
