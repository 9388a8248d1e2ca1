// The SQLite search indexer's thread (SqliteSearchIndex, sqlite-indexer.ts). Two connections: the
// ledger read-only (a committed snapshot in WAL, never a lock the appends wait for) and the index
// file (sqlite-search-file.ts) it alone writes. It reads entries by rowid after its position, in
// rowid order (appends commit one at a time under SQLite's write lock, so rowids are committed in
// order and none is skipped), and writes their words and the new position in one transaction of
// the index file: a restart resumes from the position, and nothing is indexed twice or skipped.
// Messages are handled one at a time between batches: a `forget` (an erasure about to happen) is
// never overtaken by a batch that read the content before it.
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import { INDEX_PRAGMAS } from './sqlite-search-file.js';

export type IndexerMessage = { kind: 'kick' } | { kind: 'forget'; id: number; companyId: string; logIds: string[] } | { kind: 'close' };
export type IndexerAnswer = { kind: 'progress'; position: number } | { kind: 'forgotten'; id: number; error?: string } | { kind: 'error'; message: string } | { kind: 'closed' };

if (!parentPort) throw new Error('sqlite-indexer-thread.ts runs as a worker thread (SqliteSearchIndex)');
const port = parentPort;
const { ledgerFile, indexFile, batch, pollMs } = workerData as { ledgerFile: string; indexFile: string; batch: number; pollMs: number };

const ledger = new SQLite(ledgerFile, { readonly: true, fileMustExist: true });
ledger.pragma('busy_timeout = 5000');
const index = new SQLite(indexFile, { fileMustExist: true });
for (const p of INDEX_PRAGMAS) index.pragma(p);

const next = ledger.prepare<[number, number], { r: number; data: string | null; hash: string }>('SELECT rowid AS r, data, hash FROM log_entries WHERE rowid > ? ORDER BY rowid LIMIT ?');
const rowidsOf = ledger.prepare<[string, string], { r: number }>('SELECT rowid AS r FROM log_entries WHERE company_id = ? AND log_id IN (SELECT value FROM json_each(?))');
const erasedOf = ledger.prepare<[string], { r: number }>('SELECT rowid AS r FROM log_entries WHERE rowid IN (SELECT value FROM json_each(?)) AND data IS NULL');
const insert = index.prepare<[number, string]>('INSERT INTO log_search (rowid, data) VALUES (?, ?)');
const remove = index.prepare<[number]>('DELETE FROM log_search WHERE rowid = ?');
const setProgress = index.prepare<[number, string]>('UPDATE search_progress SET position = ?, anchor = ? WHERE id = 1');
const block = index.prepare<[number]>('INSERT OR IGNORE INTO search_blocked (entry_rowid) VALUES (?)');
const unblock = index.prepare<[number]>('DELETE FROM search_blocked WHERE entry_rowid = ?');
const progress = index.prepare<[], { position: number }>('SELECT position FROM search_progress WHERE id = 1');

let position = progress.get()?.position ?? 0;
/** Entries whose content is being erased: kept out of the index (few; mirrored from search_blocked). */
const blocked = new Set(index.prepare<[], { entry_rowid: number }>('SELECT entry_rowid FROM search_blocked').all().map((r) => r.entry_rowid));

/** Blocked entries whose erasure is applied (data NULL) need blocking no more: the batches skip NULL data. */
function tidyBlocked(): void {
  if (blocked.size === 0) return;
  const done = erasedOf.all(JSON.stringify([...blocked])).map((r) => r.r);
  if (done.length === 0) return;
  index.transaction(() => {
    for (const r of done) unblock.run(r);
  })();
  for (const r of done) blocked.delete(r);
}

/** One batch: the next entries' words and the position after them, in one transaction. Whether a full batch was read. */
function indexBatch(): boolean {
  const rows = next.all(position, batch);
  const last = rows.at(-1);
  if (!last) return false;
  index.transaction(() => {
    for (const row of rows) if (row.data !== null && !blocked.has(row.r)) insert.run(row.r, row.data);
    setProgress.run(last.r, last.hash);
  })();
  position = last.r;
  port.postMessage({ kind: 'progress', position } satisfies IndexerAnswer);
  return rows.length === batch;
}

/** Keeps these entries out of the index (their content is about to be erased) and removes what it holds of them. */
function forget(companyId: string, logIds: string[]): void {
  const rowids = rowidsOf.all(companyId, JSON.stringify(logIds)).map((r) => r.r);
  index.transaction(() => {
    for (const r of rowids) {
      block.run(r);
      remove.run(r);
    }
  })();
  for (const r of rowids) blocked.add(r);
}

const inbox: IndexerMessage[] = [];
let scheduled = false;
let closing = false;
let batches = 0;

/** Handles the messages that came, then one batch; again at once while batches are full. */
function work(): void {
  scheduled = false;
  try {
    for (let m = inbox.shift(); m; m = inbox.shift()) {
      if (m.kind === 'close') closing = true;
      else if (m.kind === 'forget') {
        try {
          forget(m.companyId, m.logIds);
          port.postMessage({ kind: 'forgotten', id: m.id } satisfies IndexerAnswer);
        } catch (err) {
          port.postMessage({ kind: 'forgotten', id: m.id, error: (err as Error).message } satisfies IndexerAnswer);
        }
      }
    }
    if (closing) return finish();
    const full = indexBatch();
    if (++batches % 100 === 0) tidyBlocked();
    if (full) schedule();
  } catch (err) {
    port.postMessage({ kind: 'error', message: (err as Error).message } satisfies IndexerAnswer);
  }
}

function schedule(): void {
  if (scheduled || closing) return;
  scheduled = true;
  setImmediate(work);
}

function finish(): void {
  clearInterval(poll);
  ledger.close();
  index.close();
  port.postMessage({ kind: 'closed' } satisfies IndexerAnswer);
  port.close();
}

// New entries are found by looking: the index needs nothing from the append path.
const poll = setInterval(schedule, pollMs);
port.on('message', (m: IndexerMessage) => {
  inbox.push(m);
  if (m.kind === 'close' && !scheduled) work();
  else schedule();
});
tidyBlocked();
schedule();
