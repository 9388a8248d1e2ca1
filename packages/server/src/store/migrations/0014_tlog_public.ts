// Migration 0014 (issue 32): whether a company's C2SP tlog-tiles API is public. Never edit a migration once released.
import type { Kysely, Migration } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    // The company's C2SP tlog-tiles API (docs/transparency.md) readable without a credential: 1 when its admin published it.
    await db.schema.alterTable('companies').addColumn('tlog_public', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  },
};
