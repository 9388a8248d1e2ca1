// Migration 0018 (issue 33): the index diet. Never edit a migration once released.
import type { Kysely, Migration } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    // A time range is found by searching the primary key (store/time-bounds.ts): created_at never
    // decreases along seq. One B-tree fewer for every append (docs/performance.md, "Indexes").
    await db.schema.dropIndex('log_entries_created_at_idx').execute();
  },
};
