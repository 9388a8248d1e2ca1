// Roots, edges and proofs read from the stored hashes: the core says which stored hashes
// are needed, one read fetches them all (O(log n) rows), the core folds them. The reader is a
// function, so the same code runs over SQLite, PostgreSQL, files or HTTP (as tessera's
// TileFetcherFunc).
import { fromHex } from '#crypto';
import { CoreError } from './errors.js';
import {
  consistencyRanges,
  foldSubtrees,
  type Hash,
  inclusionRanges,
  type LeafRange,
  storedHashIndex,
  subtreesOf,
  TreeEdge,
} from './merkle.js';

/** Stored hashes (hex) by stored-hash index. */
export type HashReader = (indexes: number[]) => Promise<Map<number, string>>;

/** A stored hash a proof needs is not there (the tree in the store is damaged): CoreError missing_tree_hash. */
export function missingTreeHash(index: number): CoreError {
  return new CoreError('missing_tree_hash', `stored Merkle hash ${index} is missing`, index);
}

async function readRanges(read: HashReader, ranges: LeafRange[]): Promise<Hash[][]> {
  const plans = ranges.map((r) => subtreesOf(r.lo, r.hi).map((s) => storedHashIndex(s.level, s.index)));
  const found = await read([...new Set(plans.flat())]);
  return plans.map((idxs) =>
    idxs.map((i) => {
      const hex = found.get(i);
      if (hex === undefined) throw missingTreeHash(i);
      return fromHex(hex);
    }),
  );
}

export async function readEdge(read: HashReader, size: number): Promise<TreeEdge> {
  if (size === 0) return TreeEdge.empty();
  const [hashes] = await readRanges(read, [{ lo: 0, hi: size }]);
  return TreeEdge.of(size, hashes as Hash[]);
}

export async function readRoot(read: HashReader, size: number): Promise<Hash> {
  return (await readEdge(read, size)).root();
}

export async function inclusionProof(read: HashReader, index: number, size: number): Promise<Hash[]> {
  return (await inclusionProofs(read, [index], size))[0] as Hash[];
}

/** Proofs for many leaves to one tree size, from a single read of every hash they need. */
export async function inclusionProofs(read: HashReader, indexes: number[], size: number): Promise<Hash[][]> {
  const perLeaf = indexes.map((i) => inclusionRanges(i, size));
  const folded = (await readRanges(read, perLeaf.flat())).map(foldSubtrees);
  let at = 0;
  return perLeaf.map((ranges) => folded.slice(at, (at += ranges.length)));
}

export async function consistencyProof(read: HashReader, first: number, second: number): Promise<Hash[]> {
  if (first === 0 || first === second) return [];
  return (await readRanges(read, consistencyRanges(first, second))).map(foldSubtrees);
}
