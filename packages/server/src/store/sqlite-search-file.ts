// The SQLite search index's own file, beside the ledger (`ledger.db` → `ledger.search.db`): a
// contentless FTS5 table (the words of each entry's data, by the entry's rowid, the text itself
// never kept; contentless_delete lets an erasure remove an entry's words, secure-delete removes
// them from every segment at once), the indexer's position (the last rowid indexed and that
// entry's hash) and the entries kept out of it while their erasure is under way. It is derived
// data: never in a backup, rebuilt from the ledger when missing, when its position does not match
// the ledger's entry there (a restored or replaced ledger), or when SEARCH_INDEX=off removed it.
// A file of its own because FTS5's tokenizing is most of an indexed append's cost and holds the
// write lock of the file it writes: here it never holds the ledger's (docs/performance.md, "Search").
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { ensurePrivateFile } from '../kernel/files.js';

/** The index file's pragmas: WAL, and NORMAL sync (a lost tail after a power cut is re-indexed: words and position commit together). */
export const INDEX_PRAGMAS = ['journal_mode = WAL', 'synchronous = NORMAL', 'busy_timeout = 5000', 'secure_delete = ON'];

/** Where the index of a ledger file lives. */
export function searchFileOf(ledgerFile: string): string {
  return path.join(path.dirname(ledgerFile), `${path.basename(ledgerFile).replace(/\.db$/, '')}.search.db`);
}

/** Removes the index file and its WAL (SEARCH_INDEX=off, a restore, or a position that no longer matches). */
export function removeSearchFile(ledgerFile: string): boolean {
  const file = searchFileOf(ledgerFile);
  const existed = fs.existsSync(file);
  for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
  return existed;
}

/**
 * Makes the index file ready for the indexer: created when missing, and emptied (made anew) when
 * its position is not an entry of this ledger with the hash it recorded. `ledger` is a connection
 * to the ledger file. Answers whether it was (re)built from nothing.
 */
export function prepareSearchFile(ledgerFile: string, ledger: SQLite.Database): { rebuilt: boolean; position: number } {
  const file = searchFileOf(ledgerFile);
  if (fs.existsSync(file)) {
    let position = -1;
    try {
      const db = new SQLite(file, { fileMustExist: true });
      try {
        const p = db.prepare<[], { position: number; anchor: string | null }>('SELECT position, anchor FROM search_progress WHERE id = 1').get();
        if (p && p.position === 0) position = 0;
        else if (p) {
          const row = ledger.prepare<[number], { hash: string }>('SELECT hash FROM log_entries WHERE rowid = ?').get(p.position);
          if (row && row.hash === p.anchor) position = p.position;
        }
      } finally {
        db.close();
      }
    } catch {
      position = -1;
    }
    if (position >= 0) return { rebuilt: false, position };
    removeSearchFile(ledgerFile);
  }
  ensurePrivateFile(file);
  const db = new SQLite(file);
  try {
    for (const p of INDEX_PRAGMAS) db.pragma(p);
    db.exec(`CREATE VIRTUAL TABLE log_search USING fts5(data, content='', contentless_delete=1, tokenize='unicode61');
      INSERT INTO log_search(log_search, rank) VALUES ('secure-delete', 1);
      INSERT INTO log_search(log_search, rank) VALUES ('automerge', 8);
      CREATE TABLE search_progress (id INTEGER PRIMARY KEY CHECK (id = 1), position INTEGER NOT NULL, anchor TEXT);
      INSERT INTO search_progress (id, position, anchor) VALUES (1, 0, NULL);
      CREATE TABLE search_blocked (entry_rowid INTEGER PRIMARY KEY);`);
  } finally {
    db.close();
  }
  return { rebuilt: true, position: 0 };
}

/** What the indexer thread does for `forget`, done here when no thread runs: the entries kept out of the index and their words removed. */
export function forgetInFile(ledgerFile: string, ledger: SQLite.Database, companyId: string, logIds: string[]): void {
  const file = searchFileOf(ledgerFile);
  if (!fs.existsSync(file)) return;
  const rowids = ledger.prepare<[string, string], { r: number }>('SELECT rowid AS r FROM log_entries WHERE company_id = ? AND log_id IN (SELECT value FROM json_each(?))').all(companyId, JSON.stringify(logIds)).map((r) => r.r);
  const db = new SQLite(file, { fileMustExist: true });
  try {
    for (const p of INDEX_PRAGMAS) db.pragma(p);
    const block = db.prepare<[number]>('INSERT OR IGNORE INTO search_blocked (entry_rowid) VALUES (?)');
    const remove = db.prepare<[number]>('DELETE FROM log_search WHERE rowid = ?');
    db.transaction(() => {
      for (const r of rowids) {
        block.run(r);
        remove.run(r);
      }
    })();
  } finally {
    db.close();
  }
}

/**
 * After erasures: what the index file still holds of erased words goes. Removing an entry (with
 * secure-delete) takes it out of every word's list at once, so no search finds it; but FTS5 keeps
 * a word whose list became empty in its segment, bytes and all, until the segment is rewritten.
 * `optimize` rewrites every segment (about 0.5 s for 300,000 entries; docs/performance.md), and the
 * write-ahead log, which holds the pages as they were, is folded into the file (where
 * secure_delete zeroed the freed ones) and emptied, as the ledger's is (store/compliance.ts).
 */
export function purgeIndex(db: SQLite.Database): void {
  db.exec("INSERT INTO log_search(log_search) VALUES ('optimize')");
  db.pragma('wal_checkpoint(TRUNCATE)');
}

/** purgeIndex on the index file, when no indexer thread runs. */
export function purgeInFile(ledgerFile: string): void {
  const file = searchFileOf(ledgerFile);
  if (!fs.existsSync(file)) return;
  const db = new SQLite(file, { fileMustExist: true });
  try {
    for (const p of INDEX_PRAGMAS) db.pragma(p);
    purgeIndex(db);
  } finally {
    db.close();
  }
}
