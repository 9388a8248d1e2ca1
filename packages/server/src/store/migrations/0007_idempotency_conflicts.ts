// Migration 0007_idempotency_conflicts. Never edit a migration once released: add a new one.
import { type Kysely, type Migration, sql } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    // A body idempotency_key reused for different content is appended anyway and marked
    // (docs/integrations.md): the key stays unique among originals; each conflict is told
    // apart by its seq. One index still serves every lookup by (company, key).
    await db.schema.alterTable('log_entries').addColumn('idempotency_conflict_of', 'text').execute();
    await db.schema.dropIndex('log_entries_idempotency_uq').execute();
    await sql`CREATE UNIQUE INDEX log_entries_idempotency_uq ON log_entries (company_id, idempotency_key, (CASE WHEN idempotency_conflict_of IS NULL THEN 0 ELSE seq END)) WHERE idempotency_key IS NOT NULL`.execute(db);
  },
};
