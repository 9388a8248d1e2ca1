// The SQLite append, written once: the statements, the connection settings, and the write of one
// group (key check, entries, tree hashes, head, checkpoint). Both ways of appending run it: the
// writer thread (sqlite-writer-thread.ts, the normal path) and the locked transaction on the
// store's own connection (sqlite.ts, for an in-memory database, which a thread cannot open).
import type SQLite from 'better-sqlite3';
import type { ChainHead, CheckpointRow, LogEntryRow } from './chain.js';
import { LOG_ENTRY_COLUMNS } from './columns.js';

/**
 * Connection settings both connections share (see openSqliteStore). secure_delete: a row's old
 * bytes are overwritten with zeros when it is changed or deleted, so erased content (and its salt)
 * does not stay in a page's free space (GDPR Art. 17; docs/compliance.md). The ledger only
 * appends, so it costs nothing on the write path; it makes erasure and tree pruning zero what they free.
 */
export const SQLITE_PRAGMAS = ['journal_mode = WAL', 'synchronous = FULL', 'foreign_keys = ON', 'busy_timeout = 5000', 'cache_size = -65536', 'secure_delete = ON'];

/** The checkpoint columns an append writes, in the order of checkpointValues. */
const CHECKPOINT_COLUMNS = ['company_id', 'tree_size', 'root_hash', 'timestamp', 'key_id', 'note'] as const satisfies ReadonlyArray<keyof CheckpointRow>;

/** The statements of an append. */
export const APPEND_SQL = {
  head: 'SELECT last_seq, last_hash FROM chain_heads WHERE company_id = ?',
  setHead: `INSERT INTO chain_heads (company_id, last_seq, last_hash, last_created_at) VALUES (?, ?, ?, ?)
    ON CONFLICT (company_id) DO UPDATE SET last_seq = excluded.last_seq, last_hash = excluded.last_hash, last_created_at = excluded.last_created_at`,
  insert: `INSERT INTO log_entries (${LOG_ENTRY_COLUMNS.join(', ')}) VALUES (${LOG_ENTRY_COLUMNS.map(() => '?').join(', ')})`,
  // All of a write's tree hashes in one statement: half the cost of one insert each.
  insertTreeHashes: 'INSERT INTO merkle_hashes (company_id, idx, hash) SELECT ?, i.value, h.value FROM json_each(?) AS i JOIN json_each(?) AS h ON h.key = i.key',
  // The tree's leaves are the entries' hashes (core's layeredReader).
  entryHashes: 'SELECT seq, hash FROM log_entries WHERE company_id = ? AND seq IN (SELECT value FROM json_each(?))',
  byIdempotency: 'SELECT * FROM log_entries WHERE company_id = ? AND idempotency_key IN (SELECT value FROM json_each(?))',
  // A checkpoint of a tree another writer already signed stores nothing (both sign the same root).
  insertCheckpoint: `INSERT INTO checkpoints (${CHECKPOINT_COLUMNS.join(', ')}) VALUES (${CHECKPOINT_COLUMNS.map(() => '?').join(', ')}) ON CONFLICT (company_id, tree_size) DO NOTHING`,
  // Inside the write transaction: the key a write signed with must still be active (store/keys.ts).
  keyActive: 'SELECT 1 AS ok FROM signing_keys WHERE key_id = ? AND active_to IS NULL',
};

/** An entry's values in APPEND_SQL.insert's order (arrays: cheaper than objects to send to the writer thread). */
export const entryValues = (r: LogEntryRow): unknown[] => LOG_ENTRY_COLUMNS.map((c) => r[c]);
/** A checkpoint's values in APPEND_SQL.insertCheckpoint's order. */
export const checkpointValues = (c: CheckpointRow): unknown[] => CHECKPOINT_COLUMNS.map((k) => c[k]);

/** Where a value sits in entryValues and checkpointValues. */
export const COLUMN = {
  hash: LOG_ENTRY_COLUMNS.indexOf('hash'),
  signature: LOG_ENTRY_COLUMNS.indexOf('signature'),
  keyId: LOG_ENTRY_COLUMNS.indexOf('key_id'),
  checkpointKeyId: CHECKPOINT_COLUMNS.indexOf('key_id'),
};

export type AppendStatements = { [K in keyof typeof APPEND_SQL]: SQLite.Statement };

export function prepareAppend(db: SQLite.Database): AppendStatements {
  return Object.fromEntries(Object.entries(APPEND_SQL).map(([k, sql]) => [k, db.prepare(sql)])) as AppendStatements;
}

/** One group's write, as values: entry rows (entryValues) and checkpoint (checkpointValues). */
export interface GroupValues {
  companyId: string;
  rows: unknown[][];
  head: ChainHead;
  treeIndexes: number[];
  treeHashes: string[];
  checkpoint: unknown[] | null;
}

/**
 * Writes one group inside the caller's transaction. Returns the id of a key that signed part of
 * it and is no longer active (nothing written then: the caller rolls back), or undefined.
 */
export function writeGroup(s: AppendStatements, w: GroupValues): string | undefined {
  const keyIds = new Set(w.rows.map((r) => r[COLUMN.keyId] as string));
  if (w.checkpoint) keyIds.add(w.checkpoint[COLUMN.checkpointKeyId] as string);
  for (const k of keyIds) if (!s.keyActive.get(k)) return k;
  for (const r of w.rows) s.insert.run(r);
  if (w.treeHashes.length > 0) s.insertTreeHashes.run(w.companyId, JSON.stringify(w.treeIndexes), JSON.stringify(w.treeHashes));
  if (w.rows.length > 0) s.setHead.run(w.companyId, w.head.lastSeq, w.head.lastHash, w.head.lastCreatedAt);
  if (w.checkpoint) s.insertCheckpoint.run(w.checkpoint);
  return undefined;
}
