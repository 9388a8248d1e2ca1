// What the search index (store/search-index.ts) holds, read beside the service: how many entries
// a word is indexed for, and how many entries the index holds in all. SQLite: the index file the
// indexer thread writes; PostgreSQL: log_search.
import fs from 'node:fs';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import type { Store } from '../../src/store/store.js';

function indexFile(store: Store): string | undefined {
  const file = (store.searchIndex as { file?: string } | undefined)?.file;
  return file !== undefined && fs.existsSync(file) ? file : undefined;
}

/** How many entries the index holds `word` for (0 when there is no index). */
export async function entriesIndexedFor(store: Store, word: string): Promise<number> {
  if (store.kind === 'sqlite') {
    const file = indexFile(store);
    if (!file) return 0;
    const db = new SQLite(file, { readonly: true });
    try {
      return db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM log_search WHERE log_search MATCH ?').get(`"${word.replace(/"/g, '""')}"`)?.n ?? 0;
    } finally {
      db.close();
    }
  }
  const r = await sql<{ n: string }>`SELECT count(*) AS n FROM log_search WHERE tsv @@ plainto_tsquery('simple', ${word})`.execute(store.db);
  return Number(r.rows[0]?.n ?? 0);
}

/** Every entry id the index holds (SQLite: rowids; PostgreSQL: company and seq), with repeats if there were any. */
export async function indexedEntries(store: Store): Promise<string[]> {
  if (store.kind === 'sqlite') {
    const file = indexFile(store);
    if (!file) return [];
    const db = new SQLite(file, { readonly: true });
    try {
      return db.prepare<[], { r: number }>('SELECT rowid AS r FROM log_search').all().map((x) => String(x.r));
    } finally {
      db.close();
    }
  }
  const r = await sql<{ company_id: string; seq: string }>`SELECT company_id, seq FROM log_search`.execute(store.db);
  return r.rows.map((x) => `${x.company_id}:${x.seq}`);
}

/** Waits for everything committed so far: a search with wait_for_seq past the head waits for the head. */
export const EVERYTHING = String(Number.MAX_SAFE_INTEGER);
