// The SQLite writer thread of SqliteChainWriter (sqlite-writer.ts). One message carries every
// write that queued while the last one committed: one transaction, one fsync, and a savepoint
// each, so a write that fails (or finds its head moved) takes nothing else with it. Rows sent
// unsigned are signed here first, outside the transaction, by the same function as everywhere
// (crypto/signing.ts); the write itself is sqlite-append.ts's, as on the store's own connection.
import type { KeyObject } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import { signEntryHash } from '../crypto/signing.js';
import { COLUMN, prepareAppend, SQLITE_PRAGMAS, writeGroup } from './sqlite-append.js';
import type { EntrySigningKey } from './chain.js';
import type { WriteMessage, WriteResult, WriterMessage } from './sqlite-writer.js';

const port = parentPort;
if (!port) throw new Error('sqlite-writer-thread.ts runs as a worker thread (SqliteChainWriter)');
const { file, keys: initialKeys } = workerData as { file: string; keys: EntrySigningKey[] };
const keys = new Map<string, KeyObject>(initialKeys.map((k) => [k.keyId, k.privateKey]));
const db = new SQLite(file);
for (const p of SQLITE_PRAGMAS) db.pragma(p);
const s = prepareAppend(db);
const GENESIS = '0'.repeat(64);

const failure = (err: unknown): WriteResult => ({ error: { message: String((err as Error | undefined)?.message), ...((err as { code?: string } | undefined)?.code ? { code: (err as { code: string }).code } : {}) } });

/** Signs a write's unsigned rows in place; the write's failure, or undefined. */
function signRows(w: WriteMessage): WriteResult | undefined {
  try {
    for (const r of w.rows) {
      if (r[COLUMN.signature] !== '') continue;
      const key = keys.get(r[COLUMN.keyId] as string);
      if (!key) throw new Error(`no signing key ${String(r[COLUMN.keyId])} in the writer`);
      r[COLUMN.signature] = signEntryHash(key, r[COLUMN.hash] as string);
    }
    return undefined;
  } catch (err) {
    return failure(err);
  }
}

function apply(w: WriteMessage): WriteResult {
  const h = s.head.get(w.companyId) as { last_seq: number; last_hash: string } | undefined;
  if ((h?.last_seq ?? -1) !== w.expect.lastSeq || (h?.last_hash ?? GENESIS) !== w.expect.lastHash) return { moved: true };
  const retired = writeGroup(s, w);
  return retired === undefined ? {} : { retired };
}

port.on('message', (m: WriterMessage) => {
  if (m === 'close') {
    db.close();
    port.close();
    return;
  }
  if (!Array.isArray(m)) {
    keys.set(m.keyId, m.privateKey);
    return;
  }
  // Signed before the transaction, so the write lock is held only for the SQL.
  const unsigned = m.map(signRows);
  let results: WriteResult[];
  try {
    db.exec('BEGIN IMMEDIATE');
    results = m.map((w, i) => {
      const refused = unsigned[i];
      if (refused) return refused;
      db.exec('SAVEPOINT w');
      let r: WriteResult;
      try {
        r = apply(w);
      } catch (err) {
        r = failure(err);
      }
      if (r.moved || r.retired || r.error) db.exec('ROLLBACK TO w');
      db.exec('RELEASE w');
      return r;
    });
    db.exec('COMMIT');
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    results = m.map(() => failure(err));
  }
  port.postMessage(results);
});
