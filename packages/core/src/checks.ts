// What offline verification reports (bundles, exports, reports, witness quorums): one Check per
// thing checked, and the report over them.
/** What one check is about. A client branches on this, never on the message. */
export type CheckCode =
  /** No key was pinned: the document's own keys were used (status note). */
  | 'unpinned'
  /** The document is not an evidence bundle of this format. */
  | 'not_a_bundle'
  /** A key transition from a trusted key: followed (ok) or refused (fail). */
  | 'key_transition'
  /** The checkpoint note: signed by a trusted key for this company (ok), or not (fail). */
  | 'checkpoint'
  /** The checkpoint's unsigned JSON fields disagree with its signed note. */
  | 'checkpoint_fields'
  /** An entry lacks a hashed field, or its fields cannot be hashed. */
  | 'entry_malformed'
  /** An entry's fields do not hash to its hash. */
  | 'hash_mismatch'
  /** A version 2 entry's data, extra and salt do not rebuild its content commitment. */
  | 'content_mismatch'
  /** A version 2 entry whose content was erased (status note, or a failure when its erasure record does not account for it). */
  | 'erased'
  /** An entry is signed by a key that is not trusted. */
  | 'untrusted_key'
  /** An entry's signature does not verify. */
  | 'bad_signature'
  /** A signature (of an entry, a checkpoint or a key transition) made outside its key's period: after the key was retired, or before it was introduced (docs/ledger-format.md §12). */
  | 'key_not_active'
  /** An entry belongs to another company than the bundle's. */
  | 'wrong_company'
  /** An entry's inclusion proof is for another leaf or tree size, or does not reach the signed root. */
  | 'not_included'
  /** prev_hash does not link to the entry before it (or entry 0's is not 64 zeros). */
  | 'broken_link'
  /** An entry's created_at is earlier than the entry's before it (it never decreases along a chain, docs/ledger-format.md §2). */
  | 'created_at_order'
  /** An entry's idempotency_conflict_of mark is not what the chain's idempotency keys make it (added, changed or removed). */
  | 'idempotency_mark'
  /** An export line that is not JSON, or out of seq order. */
  | 'line_unreadable'
  /** The export holds fewer entries than the checkpoint covers. */
  | 'entries_missing'
  /** The tree rebuilt from the export differs from the signed root. */
  | 'root_mismatch'
  /** An RFC 3161 timestamp of an earlier checkpoint the bundle's tree extends (docs/ledger-format.md §19): its imprint, its TSTInfo digest, the consistency proof, and (with the TSA pinned) its signature. */
  | 'timestamp'
  /** The export runs past the checkpoint (status note). */
  | 'beyond_checkpoint'
  /** The checkpoint's witness cosignatures against the quorum asked for. */
  | 'witnesses'
  /** A signed compliance report: its digest and signature. */
  | 'report'
  /** A stream copy's batch: its header missing, its entry count, an entry outside its range (docs/ledger-format.md §17). */
  | 'stream_batch'
  /** A stream copy lacks a range of seqs between two batches. */
  | 'stream_gap'
  /** Two batches of a stream copy disagree about an entry number or a tree size's root: two histories (a fork or a rollback). */
  | 'stream_fork'
  /** A consistency proof between two checkpoints does not verify. */
  | 'consistency'
  /** An entry's agent signature (format version 4, docs/ledger-format.md §20) against the agent key register, and the line over them. */
  | 'agent_signature'
  /** The summary over every entry. */
  | 'entries';

export interface Check {
  status: 'ok' | 'fail' | 'note';
  code: CheckCode;
  /** One sentence for a person. */
  message: string;
  /** The entry it concerns, when it concerns one. */
  seq?: number;
}

export interface VerificationReport {
  /** True when no check failed. */
  ok: boolean;
  /** False when no trusted key was given and the document's own keys were used: consistent, not proven. */
  pinned: boolean;
  /** In the order checked. */
  checks: Check[];
}
