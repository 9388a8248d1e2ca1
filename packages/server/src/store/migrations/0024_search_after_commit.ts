// Migration 0024 (issue 44): the search index is kept after the commit, no longer by the append
// itself (store/search-index.ts). SQLite: the FTS5 table of 0012 and its triggers leave the ledger
// file (the index is now a file of its own, ledger.search.db, built by the indexer thread from the
// stored entries). PostgreSQL: the GIN expression index over log_entries goes; log_search holds
// each entry's words by (company_id, seq) under a GIN index, search_positions each company's last
// indexed seq, both keyed by company first (distributed by company on Citus); the indexer fills
// them from the stored entries. Never edit a migration once released.
import { type Kysely, type Migration, SqliteAdapter, sql } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    if (db.getExecutor().adapter instanceof SqliteAdapter) {
      for (const name of ['log_search_insert', 'log_search_update', 'log_search_delete']) await sql`DROP TRIGGER IF EXISTS ${sql.id(name)}`.execute(db);
      await sql`DROP TABLE IF EXISTS log_search`.execute(db);
      return;
    }
    await sql`DROP INDEX IF EXISTS log_entries_search_idx`.execute(db);
    await sql`CREATE TABLE log_search (company_id text NOT NULL, seq bigint NOT NULL, tsv tsvector NOT NULL, CONSTRAINT log_search_pk PRIMARY KEY (company_id, seq))`.execute(db);
    await sql`CREATE INDEX log_search_tsv_idx ON log_search USING gin (tsv)`.execute(db);
    await sql`CREATE TABLE search_positions (company_id text NOT NULL, indexed_seq bigint NOT NULL, CONSTRAINT search_positions_pk PRIMARY KEY (company_id))`.execute(db);
  },
};
