// The verifier's core: walks a company's entries in seq order, page by page, and checks
// everything the ledger promises. Pure (the caller reads the pages), so the background
// verifier, full verification jobs and tests all run the same checks.
//
// Per entry: the hash recomputes, prev_hash links to the previous entry, no seq is
// missing, and (optionally) the signature verifies. The Merkle tree is rebuilt from the
// entries' hashes and compared with every stored tree hash, and with the root of every
// signed checkpoint, whose signature is checked too. One checkpoint signature covers
// every entry below it, so a full check needs O(n) hashing and few signature checks.
import { idempotencyMarkProblem, type MarkedEntry } from './idempotency-mark.js';
import { fromHex, toHex } from '#crypto';
import { checkpointProblems } from './checkpoint.js';
import { checkRecordAlone } from './entry-check.js';
import { GENESIS_PREV_HASH } from './entry.js';
import { entryLeafHash, type Hash, storedHashCount, storedHashIndex, TREE_STRIDE, TreeEdge } from './merkle.js';
import { erasureRecordProblem } from './content.js';
import type { JsonObject } from './json.js';
import { type CheckpointRecord, type EntryRecord } from './record.js';
import { instantOf, type KeyPeriod } from './key-periods.js';
import type { ViolationKind } from './violations.js';

const HEX_HASH = /^[0-9a-f]{64}$/;
/** Leaves per stored hash of the lowest stored level. */
const BLOCK = 2 ** TREE_STRIDE;

export interface ScanViolation {
  seq: number | null;
  log_id: string | null;
  kind: ViolationKind;
  detail: string;
}

/** Where a scan stands: entries [0, size) are done. Persisted between background runs. */
export interface ScanState {
  size: number;
  /** Stored hash of entry size − 1; null when it is missing (the next link is then not judged). */
  lastHash: string | null;
  /** Hex hashes of the tree edge rebuilt from entries; null once the tree cannot be rebuilt. */
  edge: string[] | null;
  /**
   * Set while a block of 2^TREE_STRIDE leaves with a missing entry is being passed: the seq the
   * block ends at; `edge` is then the edge at the block's start, and the block's stored hash will
   * stand in for its leaves.
   */
  gapEnd?: number | null;
}

export const START: ScanState = { size: 0, lastHash: GENESIS_PREV_HASH, edge: [] };

/** One page of input, covering seqs [from, to). */
export interface ScanPage {
  from: number;
  to: number;
  /** Stored entries with seq in [from, to), ascending. */
  entries: EntryRecord[];
  /** Stored tree hashes with index in [storedHashIndex(0, from), storedHashCount(to)). */
  treeHashes: Map<number, string>;
  /** Checkpoints with tree_size in (from, to], ascending. */
  checkpoints: CheckpointRecord[];
  /** The erasure records the page's erased entries name, by log_id (the caller reads them). */
  erasureRecords?: Map<string, EntryRecord>;
  /**
   * For each idempotency_key of the page's marked entries (idempotency_conflict_of not null), the
   * earliest entry of the chain with that key (the caller reads them). An unmarked entry is not
   * looked up: a removed mark leaves two unmarked entries with one key, which the store's unique
   * index log_entries_idempotency_uq refuses.
   */
  firstOfKeys?: Map<string, { log_id: string; seq: number }>;
}

export interface ScanOptions {
  /** LEDGER_ORIGIN: the note key name checkpoints are signed under. */
  keyName: string;
  /** Raw public keys by key_id. */
  publicKeys: Map<string, Uint8Array>;
  /** When each key may sign, from the signed transitions (key-periods.ts); a key without one: any time. */
  keyPeriods?: Map<string, KeyPeriod>;
  /** Also verify every entry's Ed25519 signature (about 60 µs each). */
  entrySignatures: boolean;
}

export interface ScanCounts {
  entries: number;
  /** Version 2 entries whose content was erased (and accounted for). */
  erased: number;
  treeHashes: number;
  checkpoints: number;
  signatures: number;
}

/** A checkpoint whose signature a segment scan checked, with the segment's own edge at its size (scan-segments.ts). */
export interface SegmentCheckpoint {
  tree_size: number;
  root_hash: string;
  /** Hex hashes of the segment's edge at tree_size; null once the segment's tree cannot be rebuilt. */
  edge: string[] | null;
}

export class Scanner {
  readonly counts: ScanCounts = { entries: 0, erased: 0, treeHashes: 0, checkpoints: 0, signatures: 0 };
  /** Segment scans only: the checkpoints whose roots the joiner compares. */
  readonly segmentCheckpoints: SegmentCheckpoint[] = [];
  private size: number;
  private lastHash: string | null;
  /** created_at of the entry before (null at the start of a run or segment: not judged there). */
  private lastCreatedAt: string | null = null;
  private edge: TreeEdge | null;
  /** See ScanState.gapEnd. */
  private gapEnd: number | null;
  /** The seq of the edge's first leaf: 0, or the segment's start. */
  private readonly base: number;

  /**
   * With `segment` (scan-segments.ts), the tree holds only the leaves scanned by this scanner,
   * from state.size on (a multiple of the segment size, state.edge ignored): every stored hash
   * inside the segment is compared, and checkpoint roots are left to the joiner.
   */
  constructor(
    state: ScanState,
    private readonly opts: ScanOptions,
    private readonly segment = false,
  ) {
    this.size = state.size;
    this.lastHash = state.lastHash;
    this.gapEnd = segment ? null : (state.gapEnd ?? null);
    this.base = segment ? state.size : 0;
    const edgeSize = this.gapEnd === null ? state.size : this.gapEnd - BLOCK;
    this.edge = segment ? TreeEdge.empty() : state.edge === null ? null : TreeEdge.of(edgeSize, state.edge.map(fromHex));
  }

  state(): ScanState {
    const edge = this.edge ? this.edge.hashes().map(toHex) : null;
    return this.gapEnd === null ? { size: this.size, lastHash: this.lastHash, edge } : { size: this.size, lastHash: this.lastHash, edge, gapEnd: this.gapEnd };
  }

  scanPage(page: ScanPage): ScanViolation[] {
    if (page.from !== this.size) throw new Error(`page starts at ${page.from}, scan is at ${this.size}`);
    const out: ScanViolation[] = [];
    const checkpoints = [...page.checkpoints];
    let i = 0;
    for (let seq = page.from; seq < page.to; ) {
      const row = page.entries[i];
      if (row === undefined || row.seq > seq) {
        // A run of missing entries: one violation for the run.
        const end = row === undefined ? page.to : row.seq;
        out.push({ seq, log_id: null, kind: 'missing_entry', detail: end - seq === 1 ? `entry ${seq} is missing` : `entries ${seq}–${end - 1} are missing (${end - seq})` });
        for (; seq < end; seq++) {
          // Keep the tree going on the stored hash of the missing entry's block, so one deletion
          // does not hide later damage.
          this.extendTree(seq, null, null, page, out);
          this.lastHash = null;
          this.checkCheckpoints(seq + 1, checkpoints, out);
        }
        continue;
      }
      i++;
      if (row.seq < seq) continue; // duplicate seq cannot happen (primary key); skip defensively
      const recomputed = this.checkEntry(row, page, out);
      // The tree was built from the stored hash; one that is not even hex is already a
      // hash_mismatch, and the rebuild goes on from what the fields hash to.
      this.extendTree(seq, row, entryLeafHash(recomputed === row.hash || HEX_HASH.test(row.hash) ? row.hash : recomputed), page, out);
      this.lastHash = row.hash;
      this.counts.entries++;
      this.checkCheckpoints(seq + 1, checkpoints, out);
      seq++;
    }
    return out;
  }

  /** Checks one entry (its own checks are entry-check.ts's, then its link and order); returns the hash its fields give. */
  private checkEntry(row: EntryRecord, page: ScanPage, out: ScanViolation[]): string {
    const at = { seq: row.seq, log_id: row.log_id };
    const signatures = this.opts.entrySignatures === true;
    const raw = signatures ? this.opts.publicKeys.get(row.key_id) : undefined;
    const alone = checkRecordAlone(row, raw && { raw, period: this.opts.keyPeriods?.get(row.key_id) }, { signature: signatures });
    if (signatures) this.counts.signatures++;
    // A stored entry always has its fields; an unknown key is a bad signature among the stored kinds.
    for (const p of alone.problems) out.push({ ...at, kind: p.code === 'unknown_key' ? 'bad_signature' : p.code === 'entry_malformed' ? 'hash_mismatch' : p.code, detail: p.detail });
    if (alone.content === 'erased') this.checkErasure(row, page, out);
    const mark = (row as MarkedEntry).idempotency_conflict_of;
    if (mark !== undefined && mark !== null) {
      const first = typeof row.idempotency_key === 'string' ? page.firstOfKeys?.get(row.idempotency_key) : undefined;
      const problem = idempotencyMarkProblem(row, first && first.seq < row.seq ? first.log_id : null);
      if (problem) out.push({ ...at, kind: 'idempotency_mark', detail: problem });
    }
    const recomputed = alone.hash as string;
    if (row.seq === 0 && row.prev_hash !== GENESIS_PREV_HASH) out.push({ ...at, kind: 'broken_link', detail: 'entry 0 must have prev_hash of 64 zeros' });
    else if (row.seq > 0 && this.lastHash !== null && row.prev_hash !== this.lastHash) {
      out.push({ ...at, kind: 'broken_link', detail: `prev_hash ${row.prev_hash} differs from the stored hash of entry ${row.seq - 1} (${this.lastHash})` });
    }
    // created_at never decreases along a chain (§2). The service writes one fixed-width UTC form,
    // compared as text on that fast path (the same order as instants); anything else is parsed.
    const prev = this.lastCreatedAt;
    if (prev !== null) {
      const cur = row.created_at;
      const ordered = prev.length === 24 && cur.length === 24 && prev.endsWith('Z') && cur.endsWith('Z') ? cur >= prev : instantOf(cur) >= instantOf(prev);
      if (!ordered) out.push({ ...at, kind: 'created_at_order', detail: `created_at ${cur} is earlier than the previous entry's (${prev})` });
    }
    this.lastCreatedAt = row.created_at;
    return recomputed;
  }

  /** An erased entry (versions 2 and 3) against the erasure record its erasure_id names, from the page. */
  private checkErasure(row: EntryRecord, page: ScanPage, out: ScanViolation[]): void {
    const at = { seq: row.seq, log_id: row.log_id };
    const record = row.erasure_id ? page.erasureRecords?.get(row.erasure_id) : undefined;
    let problem: string | null;
    try {
      problem = erasureRecordProblem(row, record && { ...record, data: record.data === null ? null : (JSON.parse(record.data) as JsonObject) });
    } catch {
      problem = 'its erasure record has data that is not JSON';
    }
    if (problem) out.push({ ...at, kind: 'unrecorded_erasure', detail: problem });
    else this.counts.erased++;
  }

  /**
   * Adds leaf `seq` (null: its entry is missing) to the rebuilt tree and compares every stored
   * hash it completes. A missing leaf opens a gap to the end of its block of 2^TREE_STRIDE
   * leaves, where the block's stored hash takes the place of its leaves.
   */
  private extendTree(seq: number, row: EntryRecord | null, leaf: Hash | null, page: ScanPage, out: ScanViolation[]): void {
    if (this.edge === null) return;
    if (leaf === null && this.gapEnd === null) {
      const start = seq - (seq % BLOCK);
      this.edge.rewind(start - this.base);
      this.gapEnd = start + BLOCK;
    }
    const first = storedHashIndex(0, seq);
    if (this.gapEnd === null) {
      this.compareStored(seq, row, first, 0, this.edge.append(leaf as Hash), page, out);
      return;
    }
    if (seq + 1 < this.gapEnd) return;
    // The block ends here: its stored hash stands in for the leaves it was built from.
    this.gapEnd = null;
    const stored = page.treeHashes.get(first + TREE_STRIDE);
    if (stored === undefined || !HEX_HASH.test(stored)) {
      this.edge = null;
      out.push({ seq, log_id: null, kind: 'merkle_mismatch', detail: `an entry of leaves ${seq + 1 - BLOCK}–${seq} is missing and so is their stored tree hash ${first + TREE_STRIDE}: the tree cannot be rebuilt from here on` });
      return;
    }
    this.compareStored(seq, row, first, TREE_STRIDE + 1, this.edge.appendSubtree(fromHex(stored), TREE_STRIDE), page, out);
  }

  /** Compares hashes completed by leaf `seq`, from level `from` up, with the stored ones (stored levels only). */
  private compareStored(seq: number, row: EntryRecord | null, first: number, from: number, completed: Hash[], page: ScanPage, out: ScanViolation[]): void {
    for (let level = from + ((TREE_STRIDE - (from % TREE_STRIDE)) % TREE_STRIDE); level - from < completed.length; level += TREE_STRIDE) {
      if (level === 0) continue;
      this.counts.treeHashes++;
      const v = treeHashViolation(seq, row?.log_id ?? null, first, level, page.treeHashes.get(first + level), toHex(completed[level - from] as Hash));
      if (v) out.push(v);
    }
  }

  private checkCheckpoints(size: number, pending: CheckpointRecord[], out: ScanViolation[]): void {
    this.size = size;
    while (pending.length > 0 && (pending[0] as CheckpointRecord).tree_size <= size) {
      const c = pending.shift() as CheckpointRecord;
      if (c.tree_size < size) continue;
      this.counts.checkpoints++;
      const at = { seq: size - 1, log_id: null };
      const problems = checkpointProblems(c, this.opts.keyName, this.opts.publicKeys.get(c.key_id), this.opts.keyPeriods?.get(c.key_id));
      for (const p of problems) out.push({ ...at, kind: 'checkpoint_inconsistent', detail: p });
      // Inside a gap the edge is the block's start: the root at this size cannot be rebuilt.
      const edge = this.gapEnd === null ? this.edge : null;
      if (problems.length === 0 && this.segment) {
        this.segmentCheckpoints.push({ tree_size: size, root_hash: c.root_hash, edge: edge ? edge.hashes().map(toHex) : null });
      } else if (problems.length === 0 && edge !== null) {
        const v = checkpointRootViolation(c, toHex(edge.root()));
        if (v) out.push(v);
      }
    }
  }
}

/** A stored tree hash against the one rebuilt from the entries (`first`: the stored index of the leaf that completes it). */
export function treeHashViolation(seq: number, logId: string | null, first: number, level: number, stored: string | undefined, want: string): ScanViolation | null {
  if (stored === want) return null;
  const where = `stored tree hash ${first + level} (level ${level}, completed by entry ${seq})`;
  return { seq, log_id: logId, kind: 'merkle_mismatch', detail: stored === undefined ? `${where} is missing` : `${where} is ${stored}; rebuilt from the entries it is ${want}` };
}

/** A signed checkpoint's root against the root rebuilt from the entries. */
export function checkpointRootViolation(c: { tree_size: number; root_hash: string }, rebuilt: string): ScanViolation | null {
  if (rebuilt === c.root_hash) return null;
  return {
    seq: c.tree_size - 1,
    log_id: null,
    kind: 'checkpoint_inconsistent',
    detail: `checkpoint at tree size ${c.tree_size} signs root ${c.root_hash}; the tree rebuilt from the entries has root ${rebuilt}`,
  };
}

/** The stored-hash index range [start, end) a page of seqs [from, to) needs. */
export function treeHashRange(from: number, to: number): [number, number] {
  return [storedHashIndex(0, from), storedHashCount(to)];
}
