// The SQLite search thread of SqliteSearchReader (sqlite-reader.ts): its own read-only connection
// to the same file (WAL: it reads a committed snapshot while the writer appends), one query at a
// time. A search with `where` conditions can scan a whole company's entries; here it never holds
// up the request thread, and the reader ends the thread when the search runs past its budget.
import { parentPort, workerData } from 'node:worker_threads';
import fs from 'node:fs';
import SQLite from 'better-sqlite3';

const port = parentPort;
if (!port) throw new Error('sqlite-reader-thread.ts runs as a worker thread (SqliteSearchReader)');
const { file, indexFile } = workerData as { file: string; indexFile: string };
const db = new SQLite(file, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 5000');
// The search index (sqlite-search-file.ts), read-only like the ledger: words are found there.
if (fs.existsSync(indexFile)) db.prepare('ATTACH DATABASE ? AS idx').run(indexFile);
const statements = new Map<string, SQLite.Statement>();

port.on('message', (m: { sql: string; parameters: unknown[] }) => {
  try {
    let s = statements.get(m.sql);
    if (!s) {
      s = db.prepare(m.sql);
      if (statements.size >= 100) statements.delete(statements.keys().next().value as string);
      statements.set(m.sql, s);
    }
    port.postMessage({ rows: s.all(...m.parameters) });
  } catch (err) {
    port.postMessage({ error: String((err as Error | undefined)?.message ?? err) });
  }
});
