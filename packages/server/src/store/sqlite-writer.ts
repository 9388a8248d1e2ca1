// SQLite appends on a writer thread. better-sqlite3 is synchronous: on the request thread,
// every group's inserts and its commit's fsync would stop request handling (a third of
// its time under batch load). The writer thread has its own connection to the same file
// (WAL, synchronous=FULL), takes one message per group, checks the head, writes, commits
// and answers; the request thread meanwhile parses, hashes and signs the next groups.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';
import { type ChainWrite, type ChainWriter, type CheckpointRow, type EntrySigningKey, HeadMovedError, KeyRetiredError, type LogEntryRow } from './chain.js';
import { LOG_ENTRY_COLUMNS } from './columns.js';

/**
 * Connection settings both connections share (see openSqliteStore). secure_delete: a row's old
 * bytes are overwritten with zeros when it is changed or deleted, so erased content (and its salt)
 * does not stay in a page's free space (GDPR Art. 17; docs/compliance.md). The ledger only
 * appends, so it costs nothing on the write path; it makes erasure and tree pruning zero what they free.
 */
export const SQLITE_PRAGMAS = ['journal_mode = WAL', 'synchronous = FULL', 'foreign_keys = ON', 'busy_timeout = 5000', 'cache_size = -65536', 'secure_delete = ON'];

/** The statements of an append, shared with the store's own connection (see sqlite.ts). */
export const APPEND_SQL = {
  head: 'SELECT last_seq, last_hash FROM chain_heads WHERE company_id = ?',
  setHead: `INSERT INTO chain_heads (company_id, last_seq, last_hash, last_created_at) VALUES (?, ?, ?, ?)
    ON CONFLICT (company_id) DO UPDATE SET last_seq = excluded.last_seq, last_hash = excluded.last_hash, last_created_at = excluded.last_created_at`,
  insert: `INSERT INTO log_entries (${LOG_ENTRY_COLUMNS.join(', ')}) VALUES (${LOG_ENTRY_COLUMNS.map(() => '?').join(', ')})`,
  // All of a write's tree hashes in one statement: half the cost of one insert each.
  insertTreeHashes: 'INSERT INTO merkle_hashes (company_id, idx, hash) SELECT ?, i.value, h.value FROM json_each(?) AS i JOIN json_each(?) AS h ON h.key = i.key',
  // The tree's leaves are the entries' hashes (core's layeredReader).
  entryHashes: 'SELECT seq, hash FROM log_entries WHERE company_id = ? AND seq IN (SELECT value FROM json_each(?))',
  // A checkpoint of a tree another writer already signed stores nothing (both sign the same root).
  byIdempotency: 'SELECT * FROM log_entries WHERE company_id = ? AND idempotency_key IN (SELECT value FROM json_each(?))',
  insertCheckpoint: 'INSERT INTO checkpoints (company_id, tree_size, root_hash, timestamp, key_id, note) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (company_id, tree_size) DO NOTHING',
  // Inside the write transaction: the key a write signed with must still be active (store/keys.ts).
  keyActive: 'SELECT 1 AS ok FROM signing_keys WHERE key_id = ? AND active_to IS NULL',
};

/** An entry's values in APPEND_SQL.insert's order. */
export const entryValues = (r: LogEntryRow): unknown[] => LOG_ENTRY_COLUMNS.map((c) => r[c]);
/** A checkpoint's values in APPEND_SQL.insertCheckpoint's order. */
export const checkpointValues = (c: CheckpointRow): unknown[] => [c.company_id, c.tree_size, c.root_hash, c.timestamp, c.key_id, c.note];

/** What crosses to the writer: rows as arrays in LOG_ENTRY_COLUMNS order (cheaper to copy than objects). */
interface WriteMessage {
  companyId: string;
  expect: [number, string];
  rows: unknown[][];
  head: [number, string, string];
  treeIndexes: number[];
  treeHashes: string[];
  checkpoint: unknown[] | null;
}

/** The writer's answer for each write of a message: committed ({}), head moved, signed with a retired key, or failed. */
type WriteResult = { moved?: true; retired?: string; error?: { message: string; code?: string } };

/** Where the signing inputs and output sit in a row as sent (entryValues). */
const COLUMN = { hash: LOG_ENTRY_COLUMNS.indexOf('hash'), signature: LOG_ENTRY_COLUMNS.indexOf('signature'), keyId: LOG_ENTRY_COLUMNS.indexOf('key_id'), checkpointKeyId: 4 };

// Plain JavaScript evaluated in the worker (no build step, so it runs the same under tsx,
// vitest and dist); the SQL and driver path come from this module. One message carries
// every write that queued while the last one committed: one transaction, one fsync, and a
// savepoint each, so a write that fails (or finds its head moved) takes nothing else with it.
// Rows sent unsigned are signed here, before the transaction (signUnsignedWith gives the keys).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { sign } = require('node:crypto');
const Database = require(workerData.driver);
const C = workerData.column;
const keys = new Map(workerData.keys.map((k) => [k.keyId, k]));
// Signs a write's unsigned rows; undefined when done, else the write's failure.
function signRows(w) {
  try {
    for (const r of w.rows) {
      if (r[C.signature] !== '') continue;
      const k = keys.get(r[C.keyId]);
      if (!k) throw new Error('no signing key ' + r[C.keyId] + ' in the writer');
      r[C.signature] = sign(null, Buffer.from(k.context + r[C.hash], 'utf8'), k.privateKey).toString('base64');
    }
  } catch (err) {
    return failure(err);
  }
}
const db = new Database(workerData.file);
for (const p of workerData.pragmas) db.pragma(p);
const s = {};
for (const [k, sql] of Object.entries(workerData.sql)) s[k] = db.prepare(sql);
const GENESIS = '0'.repeat(64);
const failure = (err) => ({ error: { message: String(err && err.message), code: err && err.code } });
function apply(w) {
  const h = s.head.get(w.companyId);
  if ((h ? h.last_seq : -1) !== w.expect[0] || (h ? h.last_hash : GENESIS) !== w.expect[1]) return { moved: true };
  const keyIds = new Set(w.rows.map((r) => r[C.keyId]));
  if (w.checkpoint) keyIds.add(w.checkpoint[C.checkpointKeyId]);
  for (const k of keyIds) if (!s.keyActive.get(k)) return { retired: k };
  for (const r of w.rows) s.insert.run(r);
  if (w.treeHashes.length > 0) s.insertTreeHashes.run(w.companyId, JSON.stringify(w.treeIndexes), JSON.stringify(w.treeHashes));
  if (w.rows.length > 0) s.setHead.run(w.companyId, w.head[0], w.head[1], w.head[2]);
  if (w.checkpoint) s.insertCheckpoint.run(w.checkpoint);
  return {};
}
parentPort.on('message', (writes) => {
  if (writes === 'close') { db.close(); parentPort.close(); return; }
  if (!Array.isArray(writes)) { keys.set(writes.keyId, writes); return; }
  // Signed before the transaction, so the write lock is held only for the SQL.
  const unsigned = writes.map(signRows);
  let results;
  try {
    db.exec('BEGIN IMMEDIATE');
    results = writes.map((w, i) => {
      if (unsigned[i]) return unsigned[i];
      db.exec('SAVEPOINT w');
      let r;
      try { r = apply(w); } catch (err) { r = failure(err); }
      if (r.moved || r.retired || r.error) db.exec('ROLLBACK TO w');
      db.exec('RELEASE w');
      return r;
    });
    db.exec('COMMIT');
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    results = writes.map(() => failure(err));
  }
  parentPort.postMessage(results);
});
`;

interface Queued {
  message: WriteMessage;
  resolve(): void;
  reject(err: unknown): void;
}

export class SqliteChainWriter implements ChainWriter {
  private worker: Worker | undefined;
  /** Writes waiting for the writer to finish its current message. */
  private queued: Queued[] = [];
  /** The writes of the message the writer is working on. */
  private sent: Queued[] | undefined;
  private closing = false;
  private byIdempotency: SQLite.Statement<[string, string], LogEntryRow> | undefined;
  /** Keys the writer signs unsigned rows with (given to each writer thread it starts). */
  private readonly keys = new Map<string, EntrySigningKey>();

  constructor(
    private readonly file: string,
    /** The store's own connection, for reads. */
    private readonly database: SQLite.Database,
  ) {}

  // Started on the first write, so the migrations (run on the store's connection) come first.
  private start(): Worker {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const w = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, file: this.file, pragmas: SQLITE_PRAGMAS, sql: APPEND_SQL, column: COLUMN, keys: [...this.keys.values()] } });
    // Idle, the writer does not keep the process alive; with writes in hand it does (flush),
    // or a process awaiting a commit with nothing else to do would exit before it comes.
    w.unref();
    w.on('message', (results: WriteResult[]) => {
      const sent = this.sent ?? [];
      this.sent = undefined;
      sent.forEach((q, i) => {
        const r = results[i] as WriteResult;
        if (r.moved) q.reject(new HeadMovedError(q.message.companyId));
        else if (r.retired) q.reject(new KeyRetiredError(r.retired));
        else if (r.error) q.reject(Object.assign(new Error(`SQLite writer: ${r.error.message}`), { code: r.error.code }));
        else q.resolve();
      });
      this.flush();
      if (!this.sent) w.unref();
    });
    const fail = (err: unknown) => {
      // Never leave an append waiting on a writer that is gone; the next write starts a new one.
      if (this.worker === w) this.worker = undefined;
      const sent = this.sent ?? [];
      this.sent = undefined;
      for (const q of sent) q.reject(err);
      this.flush();
    };
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`SQLite writer thread exited with code ${code}`)));
    return w;
  }

  /** Sends everything queued as one message, unless the writer is still busy with the last. */
  private flush(): void {
    if (this.sent || this.queued.length === 0 || this.closing) return;
    this.worker ??= this.start();
    this.sent = this.queued;
    this.queued = [];
    this.worker.ref();
    this.worker.postMessage(this.sent.map((q) => q.message));
  }

  write(w: ChainWrite): Promise<void> {
    return new Promise((resolve, reject) => {
      const message: WriteMessage = {
        companyId: w.companyId,
        expect: [w.expect.lastSeq, w.expect.lastHash],
        rows: w.rows.map(entryValues),
        head: [w.head.lastSeq, w.head.lastHash, w.head.lastCreatedAt],
        treeIndexes: w.treeIndexes,
        treeHashes: w.treeHashes,
        checkpoint: w.checkpoint ? checkpointValues(w.checkpoint) : null,
      };
      this.queued.push({ message, resolve, reject });
      this.flush();
    });
  }

  signUnsignedWith(key: EntrySigningKey): void {
    this.keys.set(key.keyId, key);
    this.worker?.postMessage(key);
  }

  async findByIdempotencyKeys(companyId: string, keys: string[]): Promise<LogEntryRow[]> {
    if (keys.length === 0) return [];
    this.byIdempotency ??= this.database.prepare(APPEND_SQL.byIdempotency);
    return this.byIdempotency.all(companyId, JSON.stringify(keys));
  }

  /** Call once nothing is being appended: the writer finishes what it was sent, then closes its connection. */
  async close(): Promise<void> {
    const w = this.worker;
    if (!w) return;
    if (this.sent) await new Promise<void>((r) => w.once('message', () => r()));
    this.closing = true;
    this.worker = undefined;
    const exited = new Promise((r) => w.once('exit', r));
    w.ref(); // until it has closed its connection
    w.postMessage('close');
    await exited;
  }
}
