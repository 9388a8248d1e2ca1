// Roots, edges and proofs read from the stored hashes: the core says which stored hashes
// are needed, one read fetches them all (O(log n) rows), the core folds them. The reader is a
// function, so the same code runs over SQLite, PostgreSQL, files or HTTP (as tessera's
// TileFetcherFunc).
import { fromHex, toHex } from '#crypto';
import { CoreError } from './errors.js';
import {
  consistencyRanges,
  entryLeafHash,
  foldSubtrees,
  type Hash,
  inclusionRanges,
  type LeafRange,
  nodeHash,
  splitStoredHashIndex,
  storedHashIndex,
  subtreesOf,
  TREE_STRIDE,
  TreeEdge,
} from './merkle.js';

/** Stored hashes (hex) by stored-hash index. */
export type HashReader = (indexes: number[]) => Promise<Map<number, string>>;

/** Entry hashes (hex) by seq; a seq with no entry is left out. */
export type EntryHashReader = (seqs: number[]) => Promise<Map<number, string>>;

/**
 * A HashReader for any subtree over storage that keeps only the stored levels (isStoredLevel)
 * and the entries: a subtree of level L is folded from the 2^(L − B) hashes of level B below it,
 * B the highest stored level under L (0: the leaves, from the entries' hashes). Two reads for
 * any set of indexes. A subtree whose hashes below are not all there is left out, as a missing
 * stored hash is.
 */
export function layeredReader(readStored: HashReader, readEntries: EntryHashReader): HashReader {
  return async (indexes) => {
    const plans = [...new Set(indexes)].map((i) => {
      const s = splitStoredHashIndex(i);
      const base = s.level - (s.level % TREE_STRIDE);
      return { i, ...s, base, first: s.index * 2 ** (s.level - base), count: 2 ** (s.level - base) };
    });
    const seqs = new Set<number>();
    const stored = new Set<number>();
    for (const p of plans) {
      if (p.base === p.level && p.level > 0) stored.add(p.i);
      else if (p.base === 0) for (let k = p.first; k < p.first + p.count; k++) seqs.add(k);
      else for (let k = p.first; k < p.first + p.count; k++) stored.add(storedHashIndex(p.base, k));
    }
    const [hashes, entries] = await Promise.all([stored.size > 0 ? readStored([...stored]) : new Map<number, string>(), seqs.size > 0 ? readEntries([...seqs]) : new Map<number, string>()]);
    const out = new Map<number, string>();
    for (const p of plans) {
      if (p.base === p.level && p.level > 0) {
        const h = hashes.get(p.i);
        if (h !== undefined) out.set(p.i, h);
        continue;
      }
      const below: Hash[] = [];
      for (let k = p.first; k < p.first + p.count; k++) {
        const hex = p.base === 0 ? entries.get(k) : hashes.get(storedHashIndex(p.base, k));
        if (hex === undefined || !HEX_HASH.test(hex)) break;
        below.push(p.base === 0 ? entryLeafHash(hex) : fromHex(hex));
      }
      if (below.length === p.count) out.set(p.i, toHex(foldComplete(below)));
    }
    return out;
  };
}

const HEX_HASH = /^[0-9a-f]{64}$/;

/** The root of a complete subtree from its 2^k hashes one level of 2^k down. */
function foldComplete(hashes: Hash[]): Hash {
  let level = hashes;
  while (level.length > 1) {
    const up: Hash[] = [];
    for (let i = 0; i < level.length; i += 2) up.push(nodeHash(level[i] as Hash, level[i + 1] as Hash));
    level = up;
  }
  return level[0] as Hash;
}

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
