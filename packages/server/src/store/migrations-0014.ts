// Migrations 0014 and 0015 (issue 32): whether a company's C2SP tlog-tiles API is public, and
// the RFC 3161 timestamps of checkpoints. Never edit a migration once released.
import type { Kysely, Migration } from 'kysely';

export const tlogPublic0014: Migration = {
  async up(db: Kysely<unknown>) {
    // The company's C2SP tlog-tiles API (docs/transparency.md) readable without a credential: 1 when its admin published it.
    await db.schema.alterTable('companies').addColumn('tlog_public', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  },
};

export const checkpointTimestamps0015: Migration = {
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
