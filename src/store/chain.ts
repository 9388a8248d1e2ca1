// The append transaction: what a backend must provide so that appends to one company's
// chain are serialized and gap-free. The chain logic itself lives in src/ledger/appender.ts
// and is the same for both backends.
import type { CheckpointsTable, LogEntriesTable } from './schema.js';

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
  insert(rows: LogEntryRow[]): Promise<void>;
  setHead(head: ChainHead): Promise<void>;
  /** Stored Merkle hashes (hex) by stored-hash index; absent indexes are missing from the map. */
  readTreeHashes(indexes: number[]): Promise<Map<number, string>>;
  /** Stores hashes at firstIdx, firstIdx + 1, … */
  insertTreeHashes(firstIdx: number, hashes: string[]): Promise<void>;
  latestCheckpoint(): Promise<CheckpointRow | undefined>;
  insertCheckpoint(row: CheckpointRow): Promise<void>;
}

/** Runs fn in one transaction holding the company's chain-head lock; commits when fn resolves. */
export type WithChain = <T>(companyId: string, fn: (tx: ChainTx) => Promise<T>) => Promise<T>;

export const EMPTY_HEAD: ChainHead = { lastSeq: -1, lastHash: '0'.repeat(64), lastCreatedAt: '' };
