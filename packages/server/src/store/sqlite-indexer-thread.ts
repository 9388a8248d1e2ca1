// The SQLite search indexer's thread (SqliteSearchIndex, sqlite-indexer.ts). One connection to the
// index file (sqlite-search-file.ts), which it alone writes, with the ledger attached to read (a
// committed snapshot in WAL, never a lock the appends wait for). It reads entries by rowid after its position, in
// rowid order (appends commit one at a time under SQLite's write lock, so rowids are committed in
// order and none is skipped), and writes their words and the new position in one transaction of
// the index file: a restart resumes from the position, and nothing is indexed twice or skipped.
// Messages are handled one at a time between batches: a `forget` (an erasure about to happen) is
// never overtaken by a batch that read the content before it.
import fs from 'node:fs';
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import { INDEX_PRAGMAS, purgeIndex } from './sqlite-search-file.js';

/** The indexer thread's nice value (0 is the process's; 19 the lowest priority). */
export const INDEXER_NICE = 5;

export type IndexerMessage = { kind: 'kick' } | { kind: 'forget'; id: number; companyId: string; logIds: string[] } | { kind: 'purge'; id: number } | { kind: 'close' };
export type IndexerAnswer = { kind: 'progress'; position: number } | { kind: 'forgotten'; id: number; error?: string } | { kind: 'error'; message: string } | { kind: 'closed' };

if (!parentPort) throw new Error('sqlite-indexer-thread.ts runs as a worker thread (SqliteSearchIndex)');
const port = parentPort;
const { ledgerFile, indexFile, batch, pollMs } = workerData as { ledgerFile: string; indexFile: string; batch: number; pollMs: number };

// Below the appends: under a full load the cores go to committing and answering first, and the
// index catches up as soon as they leave it time (Linux: this thread's nice value, its own; where
// a thread cannot be told apart, it keeps the process's).
try {
  const tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
  if (Number.isSafeInteger(tid) && tid > 0) os.setPriority(tid, Math.max(os.getPriority(tid), INDEXER_NICE));
} catch {
  // Not Linux: the thread runs at the process's priority.
}

const index = new SQLite(indexFile, { fileMustExist: true });
for (const p of INDEX_PRAGMAS) index.pragma(p);
// The ledger, attached to read it (never written here: a transaction takes the write lock only
// of the file it writes, the index's). Words go from the ledger's rows to FTS5 inside SQLite:
// through JavaScript they cost twice the CPU (8.9 against 4.4 µs an entry, docs/performance.md).
index.prepare('ATTACH DATABASE ? AS ledger').run(ledgerFile);

const upTo = index.prepare<[number, number], { r: number | null }>('SELECT max(rowid) AS r FROM (SELECT rowid FROM ledger.log_entries WHERE rowid > ? ORDER BY rowid LIMIT ?)');
const hashAt = index.prepare<[number], { hash: string }>('SELECT hash FROM ledger.log_entries WHERE rowid = ?');
const insertRange = index.prepare<[number, number]>(
  'INSERT INTO log_search (rowid, data) SELECT rowid, data FROM ledger.log_entries WHERE rowid > ? AND rowid <= ? AND data IS NOT NULL AND rowid NOT IN (SELECT entry_rowid FROM search_blocked)',
);
const rowidsOf = index.prepare<[string, string], { r: number }>('SELECT rowid AS r FROM ledger.log_entries WHERE company_id = ? AND log_id IN (SELECT value FROM json_each(?))');
const erasedOf = index.prepare<[string], { r: number }>('SELECT rowid AS r FROM ledger.log_entries WHERE rowid IN (SELECT value FROM json_each(?)) AND data IS NULL');
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

/** One batch: the next entries' words and the position after them, in one transaction. Whether a full batch was there. */
function indexBatch(): boolean {
  const last = upTo.get(position, batch)?.r ?? null;
  if (last === null || last <= position) return false;
  const anchor = hashAt.get(last)?.hash ?? '';
  const from = position;
  index.transaction(() => {
    insertRange.run(from, last);
    setProgress.run(last, anchor);
  })();
  position = last;
  port.postMessage({ kind: 'progress', position } satisfies IndexerAnswer);
  return last - from >= batch;
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
      } else if (m.kind === 'purge') {
        try {
          purgeIndex(index);
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
