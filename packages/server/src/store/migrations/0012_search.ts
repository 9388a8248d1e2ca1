// Migration 0012: search inside events (issue 30). SQLite: an FTS5 index over each entry's data
// (external content: the text stays in log_entries only), kept by triggers in the same
// transaction as the row, so an erasure (data set to NULL) leaves the index in the transaction
// that erases; `secure-delete` removes the erased tokens from the index at once instead of
// leaving them in older segments. PostgreSQL: a GIN index over to_tsvector('simple', data), which
// the database keeps with the row. Never edit this migration once released.
import { type Kysely, type Migration, SqliteAdapter, sql } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    if (db.getExecutor().adapter instanceof SqliteAdapter) {
      await sql`CREATE VIRTUAL TABLE log_search USING fts5(data, content='log_entries', content_rowid='rowid', tokenize='unicode61')`.execute(db);
      await sql`INSERT INTO log_search(log_search, rank) VALUES ('secure-delete', 1)`.execute(db);
      await sql`CREATE TRIGGER log_search_insert AFTER INSERT ON log_entries WHEN new.data IS NOT NULL BEGIN
        INSERT INTO log_search(rowid, data) VALUES (new.rowid, new.data);
      END`.execute(db);
      await sql`CREATE TRIGGER log_search_update AFTER UPDATE OF data ON log_entries BEGIN
        INSERT INTO log_search(log_search, rowid, data) SELECT 'delete', old.rowid, old.data WHERE old.data IS NOT NULL;
        INSERT INTO log_search(rowid, data) SELECT new.rowid, new.data WHERE new.data IS NOT NULL;
      END`.execute(db);
      await sql`CREATE TRIGGER log_search_delete AFTER DELETE ON log_entries WHEN old.data IS NOT NULL BEGIN
        INSERT INTO log_search(log_search, rowid, data) VALUES ('delete', old.rowid, old.data);
      END`.execute(db);
      await sql`INSERT INTO log_search(log_search) VALUES ('rebuild')`.execute(db);
    } else {
      await sql`CREATE INDEX log_entries_search_idx ON log_entries USING gin (to_tsvector('simple', coalesce(data, '')))`.execute(db);
    }
  },
};
