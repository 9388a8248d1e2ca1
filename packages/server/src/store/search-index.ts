// SEARCH_INDEX (kernel/config-table.ts): whether the index of words inside events that
// GET /logs/search reads (migration 0012) is kept. Applied at start, after the migrations: `off`
// removes it (SQLite: the triggers that keep the FTS5 index, then every token in it, so nothing of
// any content stays there; PostgreSQL: the GIN index), and appends stop paying for it (4 KB events:
// most of the writer's time; docs/performance.md, "Search"). `on` puts it back and rebuilds it from
// what is stored, so erased content (NULL data) stays out. The state lives in the database: every
// process of one database must be started with the same setting.
import { sql } from 'kysely';
import type { DbHandle } from './handle.js';

const SQLITE_TRIGGERS = {
  log_search_insert: sql`CREATE TRIGGER log_search_insert AFTER INSERT ON log_entries WHEN new.data IS NOT NULL BEGIN
        INSERT INTO log_search(rowid, data) VALUES (new.rowid, new.data);
      END`,
  log_search_update: sql`CREATE TRIGGER log_search_update AFTER UPDATE OF data ON log_entries BEGIN
        INSERT INTO log_search(log_search, rowid, data) SELECT 'delete', old.rowid, old.data WHERE old.data IS NOT NULL;
        INSERT INTO log_search(rowid, data) SELECT new.rowid, new.data WHERE new.data IS NOT NULL;
      END`,
  log_search_delete: sql`CREATE TRIGGER log_search_delete AFTER DELETE ON log_entries WHEN old.data IS NOT NULL BEGIN
        INSERT INTO log_search(log_search, rowid, data) VALUES ('delete', old.rowid, old.data);
      END`,
};

/** Whether the search index is kept now (the triggers, or the GIN index, exist). */
export async function searchIndexKept(h: DbHandle): Promise<boolean> {
  if (h.kind === 'sqlite') {
    const r = await sql<{ n: number }>`SELECT count(*) AS n FROM sqlite_master WHERE type = 'trigger' AND name = 'log_search_insert'`.execute(h.db);
    return Number(r.rows[0]?.n) > 0;
  }
  const r = await sql<{ n: string }>`SELECT count(*) AS n FROM pg_indexes WHERE indexname = 'log_entries_search_idx' AND schemaname = current_schema()`.execute(h.db);
  return Number(r.rows[0]?.n) > 0;
}

/** Makes the database keep the search index or not; answers what changed ('built', 'dropped' or null). */
export async function applySearchIndex(h: DbHandle, keep: boolean): Promise<'built' | 'dropped' | null> {
  if ((await searchIndexKept(h)) === keep) return null;
  if (h.kind === 'sqlite') {
    await h.db.transaction().execute(async (trx) => {
      if (keep) {
        for (const create of Object.values(SQLITE_TRIGGERS)) await create.execute(trx);
        await sql`INSERT INTO log_search(log_search) VALUES ('rebuild')`.execute(trx);
      } else {
        for (const name of Object.keys(SQLITE_TRIGGERS)) await sql`DROP TRIGGER IF EXISTS ${sql.id(name)}`.execute(trx);
        await sql`INSERT INTO log_search(log_search) VALUES ('delete-all')`.execute(trx);
      }
    });
  } else if (keep) {
    await sql`CREATE INDEX IF NOT EXISTS log_entries_search_idx ON log_entries USING gin (to_tsvector('simple', coalesce(data, '')))`.execute(h.db);
  } else {
    await sql`DROP INDEX IF EXISTS log_entries_search_idx`.execute(h.db);
  }
  return keep ? 'built' : 'dropped';
}
