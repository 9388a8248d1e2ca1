// The one vocabulary of what verification can find wrong, used by the single-entry check
// (verify.ts), the full scan (scan.ts), the stored integrity reports and the API. A client
// branches on `kind`; `detail` is for people.
export const VIOLATION_KINDS = [
  /** The entry's fields do not hash to its stored hash: its content was changed. */
  'hash_mismatch',
  /** A version 2 entry's data, extra and salt do not rebuild its content commitment: its content was changed. */
  'content_mismatch',
  /** A version 2 entry's content is gone, and no erasure record of the chain accounts for it. */
  'unrecorded_erasure',
  /** prev_hash does not equal the previous entry's hash (or entry 0's is not 64 zeros). */
  'broken_link',
  /** A seq below the chain head has no entry: an entry was deleted. */
  'missing_entry',
  /** The entry signature does not verify, or names no known key (in a full scan). */
  'bad_signature',
  /** The entry names a key_id no signing key has (single-entry check). */
  'unknown_key',
  /** The signature verifies, but the key was not active at the entry's created_at (or the checkpoint's timestamp): retired by then, or not yet introduced. Periods come from the signed key transitions (docs/ledger-format.md §12). */
  'key_not_active',
  /** created_at is earlier than the previous entry's: it never decreases along a chain (docs/ledger-format.md §2). */
  'created_at_order',
  /** The entry lies beyond the recorded chain head: it was not appended by the service. */
  'beyond_head',
  /** A stored Merkle tree hash differs from the tree rebuilt from the entries, or is missing. */
  'merkle_mismatch',
  /** A signed checkpoint does not verify, or signs a root the entries do not rebuild. */
  'checkpoint_inconsistent',
  /** idempotency_conflict_of is not what the keys before it derive (docs/ledger-format.md §10): a mark was added, changed or removed. */
  'idempotency_mark',
] as const;

export type ViolationKind = (typeof VIOLATION_KINDS)[number];
