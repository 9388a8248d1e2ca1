// Verification of one entry against its neighbours. Pure: the caller fetches the entry,
// entry seq-1, entry seq+1, the chain head and the public key named by key_id.
import { contentState, erasureRecordProblem } from './content.js';
import { entryHash, GENESIS_PREV_HASH, type LedgerEntry } from './entry.js';
import { instantOf, type KeyPeriod, keyNotActive } from './key-periods.js';
import { verifyEntrySignature } from './signature.js';
import type { ViolationKind } from './violations.js';

export interface Violation {
  kind: ViolationKind;
  detail: string;
}

export interface EntryNeighbourhood {
  entry: LedgerEntry;
  /** Entry seq-1; null when it should exist but does not. Ignored for seq 0. */
  prev: LedgerEntry | null;
  /** Entry seq+1, or null when there is none. */
  next: LedgerEntry | null;
  /** The last seq the chain head records (null: the company has no head). */
  headSeq: number | null;
  /** The raw public key for entry.key_id, or undefined when no such key is known. */
  publicKey: Uint8Array | undefined;
  /** When that key may sign, from the signed transitions (key-periods.ts); undefined: any time. */
  keyPeriod?: KeyPeriod | undefined;
  /** For an erased entry: the entry its erasure_id names (undefined when there is none). */
  erasureRecord?: LedgerEntry | undefined;
}

export interface EntryVerdict {
  chain_valid: boolean;
  signature_valid: boolean;
  /** A version 2 entry whose content was erased, accounted for by its erasure record. */
  erased: boolean;
  problems: Violation[];
}

export function verifyEntry(n: EntryNeighbourhood): EntryVerdict {
  const { entry } = n;
  const chain: Violation[] = [];
  const sig: Violation[] = [];

  const recomputed = entryHash(entry);
  if (recomputed !== entry.hash) {
    chain.push({ kind: 'hash_mismatch', detail: `recomputed hash ${recomputed} differs from stored hash ${entry.hash}` });
  }

  const content = contentState(entry);
  if (content.state === 'mismatch') chain.push({ kind: 'content_mismatch', detail: content.detail });
  if (content.state === 'erased') {
    const problem = erasureRecordProblem(entry, n.erasureRecord);
    if (problem) chain.push({ kind: 'unrecorded_erasure', detail: problem });
  }

  if (entry.seq === 0) {
    if (entry.prev_hash !== GENESIS_PREV_HASH) chain.push({ kind: 'broken_link', detail: 'entry 0 must have prev_hash of 64 zeros' });
  } else if (n.prev === null) {
    chain.push({ kind: 'missing_entry', detail: `entry ${entry.seq - 1} (the previous entry) does not exist` });
  } else if (n.prev.hash !== entry.prev_hash) {
    chain.push({ kind: 'broken_link', detail: `prev_hash ${entry.prev_hash} differs from the stored hash of entry ${entry.seq - 1} (${n.prev.hash})` });
  }

  if (n.next !== null) {
    if (n.next.prev_hash !== entry.hash) {
      chain.push({ kind: 'broken_link', detail: `entry ${entry.seq + 1} does not link to this entry: its prev_hash is ${n.next.prev_hash}` });
    }
  } else if (n.headSeq !== null && entry.seq < n.headSeq) {
    chain.push({ kind: 'missing_entry', detail: `entry ${entry.seq + 1} (the next entry) does not exist, though the chain runs to ${n.headSeq}` });
  }

  if (n.headSeq === null || entry.seq > n.headSeq) {
    chain.push({ kind: 'beyond_head', detail: `entry ${entry.seq} lies beyond the recorded chain head (${n.headSeq ?? 'none'}): it was not appended by the service` });
  }

  if (!n.publicKey) {
    sig.push({ kind: 'unknown_key', detail: `no signing key with key_id ${entry.key_id}` });
  } else if (!verifyEntrySignature(n.publicKey, entry.hash, entry.signature)) {
    sig.push({ kind: 'bad_signature', detail: `signature does not verify over the stored hash with key ${entry.key_id}` });
  } else {
    const inactive = keyNotActive(entry.key_id, n.keyPeriod, entry.created_at, 'an entry created at');
    if (inactive) sig.push({ kind: 'key_not_active', detail: inactive });
  }
  if (n.prev !== null && entry.seq > 0 && !(instantOf(entry.created_at) >= instantOf(n.prev.created_at))) {
    chain.push({ kind: 'created_at_order', detail: `created_at ${entry.created_at} is earlier than entry ${entry.seq - 1}'s (${n.prev.created_at})` });
  }

  // Erased means accounted for (docs/compliance.md): content gone with no record is a problem, not an erasure.
  const erased = content.state === 'erased' && !chain.some((p) => p.kind === 'unrecorded_erasure');
  return { chain_valid: chain.length === 0, signature_valid: sig.length === 0, erased, problems: [...chain, ...sig] };
}
