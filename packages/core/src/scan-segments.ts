// The full scan in parallel: the entries are cut into aligned segments of SEGMENT_SIZE seqs,
// each scanned on its own (in a worker thread, say) with everything that depends only on its
// entries: hashes, content, signatures, links inside it, checkpoint signatures, and every
// stored tree hash of its own complete subtrees. The joiner then takes the results in seq
// order and does what needs the whole history: the tree hashes above a segment, and the roots
// of the checkpoints. Same checks and the same violations as one Scanner over the same pages,
// with one difference: after a point where the tree cannot be rebuilt (an entry and its stored
// leaf both missing), a sequential scan stops comparing tree hashes; segments after it still
// compare their own.
import { fromHex, toHex } from '#crypto';
import { foldSubtrees, isStoredLevel, storedHashIndex, TreeEdge } from './merkle.js';
import { checkpointRootViolation, type ScanCounts, Scanner, type ScanOptions, type ScanPage, type ScanState, type ScanViolation, type SegmentCheckpoint, treeHashViolation } from './scan.js';
import { GENESIS_PREV_HASH } from './entry.js';

/** A segment is a complete subtree of 2^SEGMENT_LEVEL leaves. */
export const SEGMENT_LEVEL = 11;
export const SEGMENT_SIZE = 2 ** SEGMENT_LEVEL;

/** What a segment scan hands the joiner: plain data, so it crosses threads as it is. */
export interface SegmentResult {
  from: number;
  to: number;
  violations: ScanViolation[];
  counts: ScanCounts;
  /** The stored hash of entry to − 1 (null when it is missing). */
  lastHash: string | null;
  /** Its log_id (null when it is missing). */
  lastLogId: string | null;
  /** Hex hashes of the segment's own tree edge at its end; null when it cannot be rebuilt. */
  edge: string[] | null;
  checkpoints: SegmentCheckpoint[];
  /** For a full segment: the stored hashes (null: missing or not a stored level) of the levels above SEGMENT_LEVEL its last leaf completes, lowest first. */
  upper: Array<string | null>;
}

/** Trailing one bits of n. */
function trailingOnes(n: number): number {
  let k = 0;
  for (; n % 2 === 1; n = Math.floor(n / 2)) k++;
  return k;
}

/**
 * Scans one segment: `page` covers [from, to) with from a multiple of SEGMENT_SIZE and at most
 * SEGMENT_SIZE entries; `lastHash` is the stored hash of entry from − 1 (the genesis value for
 * 0, null when that entry is missing), and the page's tree hashes must reach storedHashCount(to).
 */
export function scanSegment(page: ScanPage, lastHash: string | null, opts: ScanOptions): SegmentResult {
  if (page.from % SEGMENT_SIZE !== 0 || page.to <= page.from || page.to - page.from > SEGMENT_SIZE) {
    throw new Error(`a segment is [k·${SEGMENT_SIZE}, at most ${SEGMENT_SIZE} further), not [${page.from}, ${page.to})`);
  }
  const scanner = new Scanner({ size: page.from, lastHash: page.from === 0 ? GENESIS_PREV_HASH : lastHash, edge: [] }, opts, true);
  const violations = scanner.scanPage(page);
  const state = scanner.state();
  const upper: Array<string | null> = [];
  if (page.to - page.from === SEGMENT_SIZE) {
    const first = storedHashIndex(0, page.to - 1);
    const levels = trailingOnes(page.to / SEGMENT_SIZE - 1);
    for (let i = 1; i <= levels; i++) upper.push(isStoredLevel(SEGMENT_LEVEL + i) ? (page.treeHashes.get(first + SEGMENT_LEVEL + i) ?? null) : null);
  }
  const last = page.entries.at(-1);
  return {
    from: page.from,
    to: page.to,
    violations,
    counts: scanner.counts,
    lastHash: state.lastHash,
    lastLogId: last && last.seq === page.to - 1 ? last.log_id : null,
    // A segment that ends inside a gap (scan.ts) has no edge at its end.
    edge: state.gapEnd == null ? state.edge : null,
    checkpoints: scanner.segmentCheckpoints,
    upper,
  };
}

/** Takes segment results in seq order and completes the scan: the same state and counts a Scanner would reach. */
export class SegmentJoiner {
  readonly counts: ScanCounts = { entries: 0, erased: 0, treeHashes: 0, checkpoints: 0, signatures: 0 };
  private size = 0;
  private lastHash: string | null = GENESIS_PREV_HASH;
  private edge: TreeEdge | null = TreeEdge.empty();

  /** The segment's violations and those only the whole tree shows, in seq order. */
  join(r: SegmentResult): ScanViolation[] {
    if (r.from !== this.size) throw new Error(`segment starts at ${r.from}, the join is at ${this.size}`);
    for (const k of Object.keys(this.counts) as Array<keyof ScanCounts>) this.counts[k] += r.counts[k];
    const out = [...r.violations];
    for (const c of r.checkpoints) {
      if (this.edge === null || c.edge === null) continue;
      const v = checkpointRootViolation(c, toHex(foldSubtrees([...this.edge.hashes(), ...c.edge.map(fromHex)])));
      if (v) out.push(v);
    }
    if (this.edge === null || r.edge === null) this.edge = null;
    else if (r.to - r.from === SEGMENT_SIZE) {
      const seq = r.to - 1;
      const first = storedHashIndex(0, seq);
      this.edge.appendSubtree(fromHex(r.edge[0] as string), SEGMENT_LEVEL).forEach((h, i) => {
        if (!isStoredLevel(SEGMENT_LEVEL + 1 + i)) return;
        this.counts.treeHashes++;
        const stored = r.upper[i];
        const v = treeHashViolation(seq, r.lastLogId, first, SEGMENT_LEVEL + 1 + i, stored ?? undefined, toHex(h));
        if (v) out.push(v);
      });
    } else {
      this.edge = TreeEdge.of(r.to, [...this.edge.hashes(), ...r.edge.map(fromHex)]);
    }
    this.size = r.to;
    this.lastHash = r.lastHash;
    // Stable: a seq's own violations keep their order, the joiner's come after them.
    return out.sort((a, b) => (a.seq ?? -1) - (b.seq ?? -1));
  }

  state(): ScanState {
    return { size: this.size, lastHash: this.lastHash, edge: this.edge ? this.edge.hashes().map(toHex) : null };
  }
}
