// The append transaction: what a backend must provide so that appends to one company's
// chain are serialized and gap-free. The chain logic itself lives in src/ledger/appender.ts
// and is the same for both backends.
import type { KeyObject } from 'node:crypto';
import type { CheckpointsTable, LogEntriesTable } from './schema.js';
import { DomainError } from '../kernel/domain-error.js';

export type LogEntryRow = LogEntriesTable;
export type CheckpointRow = CheckpointsTable;

export interface ChainHead {
  /** -1 for an empty chain. */
  lastSeq: number;
  lastHash: string;
  lastCreatedAt: string;
}

/** Operations available inside one locked append transaction for one company. */
export interface ChainTx {
  /** The head as of the lock: no other append for this company can run until commit. */
  readonly head: ChainHead;
  /** Entries of this company already holding any of these idempotency keys. */
  findByIdempotencyKeys(keys: string[]): Promise<LogEntryRow[]>;
  /** Inserts the entries and their tree hashes (treeHashes[i] at stored-hash index treeIndexes[i]) and moves the head: one round trip where the backend allows. */
  append(rows: LogEntryRow[], head: ChainHead, treeIndexes: number[], treeHashes: string[]): Promise<void>;
  /** Stored Merkle hashes (hex) by stored-hash index; absent indexes are missing from the map. */
  readTreeHashes(indexes: number[]): Promise<Map<number, string>>;
  /** Entry hashes (hex) by seq, the tree's leaves (core's layeredReader); absent seqs are missing from the map. */
  readEntryHashes(seqs: number[]): Promise<Map<number, string>>;
  latestCheckpoint(): Promise<CheckpointRow | undefined>;
  insertCheckpoint(row: CheckpointRow): Promise<void>;
}

/** Runs fn in one transaction holding the company's chain-head lock; commits when fn resolves. */
export type WithChain = <T>(companyId: string, fn: (tx: ChainTx) => Promise<T>) => Promise<T>;

export const EMPTY_HEAD: ChainHead = { lastSeq: -1, lastHash: '0'.repeat(64), lastCreatedAt: '' };

/** One group's writes, built outside any transaction from a head the appender knew. */
export interface ChainWrite {
  companyId: string;
  /** The head the group was built on: the write commits only if the stored head still is this one. */
  expect: ChainHead;
  rows: LogEntryRow[];
  head: ChainHead;
  /** The stored levels' hashes the group completes (core's isStoredLevel), at these stored-hash indexes. */
  treeIndexes: number[];
  treeHashes: string[];
  checkpoint?: CheckpointRow;
}

/** The stored head was not the one a write was built on (another writer appended first); nothing was written. */
export class HeadMovedError extends DomainError<'head_moved'> {
  constructor(companyId: string) {
    super('head_moved', `company ${companyId}: the chain head moved under a prepared append; nothing was written`, { companyId });
  }
}

/**
 * The key a write's entries or checkpoint were signed with is no longer the active key: a
 * rotation committed first (store/keys.ts). Nothing was written; the caller loads the new key
 * (Keyring.reload) and builds the write again.
 */
export class KeyRetiredError extends DomainError<'key_retired'> {
  constructor(keyId: string) {
    super('key_retired', `signing key ${keyId} has been retired; nothing was written`, { keyId });
  }
}

/** The key ids a write signs with: every entry's, and its checkpoint's. */
export function signingKeyIds(rows: Array<{ key_id: string }>, checkpoint?: { key_id: string } | null): string[] {
  const ids = new Set<string>();
  for (const r of rows) ids.add(r.key_id);
  if (checkpoint) ids.add(checkpoint.key_id);
  return [...ids];
}

/**
 * A backend that commits appends off the request thread (SQLite: a writer thread with its
 * own connection, so inserts and fsyncs never stall request handling). Writes commit in
 * submission order, each in one transaction that first checks the head, so the appender can
 * build the next group while the previous one commits and still never forks the chain.
 */
export interface ChainWriter {
  write(w: ChainWrite): Promise<void>;
  /** Committed entries of this company holding any of these idempotency keys. */
  findByIdempotencyKeys(companyId: string, keys: string[]): Promise<LogEntryRow[]>;
  /**
   * Lets the writer sign rows handed over unsigned (signature ''), with this key for rows
   * whose key_id is its: Ed25519 over `context + hash` (UTF-8), base64 (core/signature.ts).
   * For a small group that saves a round trip to a signing thread.
   */
  signUnsignedWith(key: EntrySigningKey): void;
  close(): Promise<void>;
}

/** What a ChainWriter needs to sign entries. */
export interface EntrySigningKey {
  keyId: string;
  privateKey: KeyObject;
}
