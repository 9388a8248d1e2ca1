// Verification of one entry against its neighbours. Pure: the caller fetches the entry,
// entry seq-1, entry seq+1, the chain head and the public key named by key_id. The entry's own
// checks (hash, content, signature) are entry-check.ts's, shared by every verifier.
import { erasureRecordProblem } from './content.js';
import { checkEntryAlone, checkRecordAlone, type EntryAlone, isSignatureCode } from './entry-check.js';
import { GENESIS_PREV_HASH, type LedgerEntry } from './entry.js';
import { instantOf, type KeyPeriod } from './key-periods.js';
import { type EntryRecord, recordToEntry } from './record.js';
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
  const alone = checkEntryAlone(n.entry, n.publicKey ? { raw: n.publicKey, period: n.keyPeriod } : undefined);
  return withNeighbours(n.entry, alone, () => erasureRecordProblem(n.entry, n.erasureRecord), n);
}

/** What verifyRecord needs of an entry's neighbours: only their links. */
export interface RecordNeighbourhood {
  record: EntryRecord;
  /** Entry seq-1's hash and created_at; null when it should exist but does not. Ignored for seq 0. */
  prev: { hash: string; created_at: string } | null;
  /** Entry seq+1's prev_hash, or null when there is none. */
  next: { prev_hash: string } | null;
  headSeq: number | null;
  publicKey: Uint8Array | undefined;
  keyPeriod?: KeyPeriod | undefined;
  /** For an erased entry: the stored record its erasure_id names. */
  erasureRecord?: EntryRecord | undefined;
}

/** verifyEntry for a stored record: hashes the stored text directly (no parse), and reads only its neighbours' links. */
export function verifyRecord(n: RecordNeighbourhood): EntryVerdict {
  const alone = checkRecordAlone(n.record, n.publicKey ? { raw: n.publicKey, period: n.keyPeriod } : undefined);
  return withNeighbours(n.record, alone, () => erasureRecordProblem(n.record, n.erasureRecord ? recordToEntry(n.erasureRecord) : undefined), n);
}

/** The problems of an entry on its own, as the ledger's violation kinds (a malformed entry does not hash to its hash). */
const asViolations = (alone: EntryAlone): Violation[] => alone.problems.map((p) => ({ kind: p.code === 'entry_malformed' ? 'hash_mismatch' : p.code, detail: p.detail }));

/** Adds what the neighbours say (links, the head, created_at order, the erasure record) to the entry's own checks. */
function withNeighbours(
  entry: { seq: number; hash: string; prev_hash: string; created_at: string },
  alone: EntryAlone,
  erasureProblem: () => string | null,
  n: { prev: { hash: string; created_at: string } | null; next: { prev_hash: string } | null; headSeq: number | null },
): EntryVerdict {
  const own = asViolations(alone);
  const chain: Violation[] = own.filter((v) => !isSignatureCode(v.kind));
  const sig: Violation[] = own.filter((v) => isSignatureCode(v.kind));
  if (alone.content === 'erased') {
    const problem = erasureProblem();
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
  if (n.prev !== null && entry.seq > 0 && !(instantOf(entry.created_at) >= instantOf(n.prev.created_at))) {
    chain.push({ kind: 'created_at_order', detail: `created_at ${entry.created_at} is earlier than entry ${entry.seq - 1}'s (${n.prev.created_at})` });
  }

  // Erased means accounted for (docs/compliance.md): content gone with no record is a problem, not an erasure.
  const erased = alone.content === 'erased' && !chain.some((p) => p.kind === 'unrecorded_erasure');
  return { chain_valid: chain.length === 0, signature_valid: sig.length === 0, erased, problems: [...chain, ...sig] };
}
