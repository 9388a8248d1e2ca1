// The stored tree rows a run of new leaves adds (merkle_hashes: the hashes of every TREE_STRIDE-th
// level, core's isStoredLevel; level 0 is read from the entries themselves). One way to grow the
// stored tree, for appends (appender/planner.ts) and for ledgers rebuilt from an export (continuity/).
import { entryLeafHash, type Hash, storedHashIndex, toHex, TREE_STRIDE, type TreeEdge } from '@audit-ledger/core';

/** Appends each entry hash's leaf to `edge` (advancing it) and returns the merkle_hashes rows they complete. */
export function growTree(edge: TreeEdge, entryHashes: readonly string[]): { indexes: number[]; hashes: string[] } {
  const indexes: number[] = [];
  const hashes: string[] = [];
  // A leaf's hashes are written from storedHashIndex(0, its seq) on, one per hash it completes.
  let first = storedHashIndex(0, edge.size);
  for (const h of entryHashes) {
    const completed = edge.append(entryLeafHash(h));
    for (let level = TREE_STRIDE; level < completed.length; level += TREE_STRIDE) {
      indexes.push(first + level);
      hashes.push(toHex(completed[level] as Hash));
    }
    first += completed.length;
  }
  return { indexes, hashes };
}
