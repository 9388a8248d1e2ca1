// The per-company Merkle tree (RFC 6962 / RFC 9162 hashing) and its proofs. Pure: storage
// keeps the hashes in Go sumdb tlog's "stored hash" order (tree.ts reads them through a
// HashReader); here is the arithmetic that says which stored hashes a root or a proof needs,
// and how to check one.
import { bytesEqual, fromHex, sha256 } from '#crypto';
import { CoreError } from './errors.js';

/** 32 raw bytes. */
export type Hash = Uint8Array;

export const HASH_SIZE = 32;

/** SHA-256 of the empty string: the root of the empty tree. */
export const EMPTY_ROOT: Hash = sha256(new Uint8Array(0));

/** RFC 6962 leaf hash: SHA-256(0x00 ‖ data). */
export function leafHash(data: Uint8Array): Hash {
  const input = new Uint8Array(1 + data.length);
  input[0] = 0x00;
  input.set(data, 1);
  return sha256(input);
}

/** The leaf of a ledger entry: the 32 raw bytes of its entry hash (not the hex text). */
export function entryLeafHash(entryHashHex: string): Hash {
  return leafHash(fromHex(entryHashHex));
}

/** RFC 6962 interior node: SHA-256(0x01 ‖ left ‖ right). */
export function nodeHash(left: Uint8Array, right: Uint8Array): Hash {
  // One buffer and one hash call: cheaper than an incremental hash with three updates.
  const input = new Uint8Array(1 + left.length + right.length);
  input[0] = 0x01;
  input.set(left, 1);
  input.set(right, 1 + left.length);
  return sha256(input);
}

/** A complete subtree: 2^level leaves starting at leaf index << level. */
export interface Subtree {
  level: number;
  index: number;
}

/** A leaf range [lo, hi) whose RFC 6962 hash (MTH) a proof needs. */
export interface LeafRange {
  lo: number;
  hi: number;
}

// Leaf counts stay below 2^53, so plain numbers are exact; bit tricks use arithmetic, not
// 32-bit operators.
const pow2 = (k: number) => 2 ** k;

/** Largest power of two strictly below n (n ≥ 2). */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * Where the hash of subtree (level, n) sits in the stored-hash sequence: hashes are
 * written in the order an append-only tree completes them (leaf n, then every subtree
 * that leaf completes), so storage only ever appends.
 */
export function storedHashIndex(level: number, n: number): number {
  for (let l = level; l > 0; l--) n = 2 * n + 1;
  let i = 0;
  for (; n > 0; n = Math.floor(n / 2)) i += n;
  return i + level;
}

/**
 * Which levels storage keeps: every TREE_STRIDE-th level above the leaves (4, 8, 12, …), as
 * C2SP tlog-tiles keeps one level of every tile. A leaf is SHA-256(0x00 ‖ entry hash), so the
 * entries keep the leaves; any other subtree is folded from at most 2^TREE_STRIDE − 1 hashes
 * of the stored level (or the leaves) below it. A tree of n leaves stores about n/15 hashes.
 */
export const TREE_STRIDE = 4;

export function isStoredLevel(level: number): boolean {
  return level > 0 && level % TREE_STRIDE === 0;
}

/** The subtree whose hash sits at stored-hash index `index` (the inverse of storedHashIndex). */
export function splitStoredHashIndex(index: number): Subtree {
  // storedHashIndex(0, n) ≤ index < storedHashIndex(0, n + 1) for the leaf n whose append wrote it.
  // storedHashIndex(0, n) = 2n − popcount(n) ≤ index for n = ⌊index / 2⌋: start there and walk up.
  let n = Math.floor(index / 2);
  let at = storedHashIndex(0, n);
  for (;;) {
    const next = storedHashIndex(0, n + 1);
    if (next > index) break;
    n++;
    at = next;
  }
  const level = index - at;
  return { level, index: Math.floor(n / pow2(level)) };
}

/** The stored-hash indexes in [from, to) whose level storage keeps (isStoredLevel), ascending. */
export function storedLevelIndexes(from: number, to: number): number[] {
  const out: number[] = [];
  if (from >= to) return out;
  // The leaf whose append wrote index `from`, then each leaf on: leaf n writes from storedHashIndex(0, n) on.
  const s = splitStoredHashIndex(from);
  for (let n = (s.index + 1) * pow2(s.level) - 1; ; n++) {
    const first = storedHashIndex(0, n);
    if (first >= to) return out;
    for (let level = TREE_STRIDE; (n + 1) % pow2(level) === 0; level += TREE_STRIDE) {
      if (first + level >= from && first + level < to) out.push(first + level);
    }
  }
}

/** How many stored hashes a tree of n leaves has. */
export function storedHashCount(n: number): number {
  if (n === 0) return 0;
  let count = storedHashIndex(0, n - 1) + 1;
  for (let i = n - 1; i % 2 === 1; i = Math.floor(i / 2)) count++;
  return count;
}

/** The maximal complete subtrees covering [lo, hi), left to right. lo must be aligned as RFC 6962's recursion leaves it. */
export function subtreesOf(lo: number, hi: number): Subtree[] {
  const out: Subtree[] = [];
  while (lo < hi) {
    let level = 0;
    while (lo % pow2(level + 1) === 0 && lo + pow2(level + 1) <= hi) level++;
    out.push({ level, index: lo / pow2(level) });
    lo += pow2(level);
  }
  return out;
}

/** MTH of a range from the hashes of subtreesOf(range), folded right to left. */
export function foldSubtrees(hashes: Hash[]): Hash {
  if (hashes.length === 0) return EMPTY_ROOT;
  let h = hashes[hashes.length - 1] as Hash;
  for (let i = hashes.length - 2; i >= 0; i--) h = nodeHash(hashes[i] as Hash, h);
  return h;
}

/** RFC 6962 PATH(m, D[lo:hi]) as the leaf ranges whose hashes make up the inclusion proof, leaf first. */
export function inclusionRanges(m: number, size: number): LeafRange[] {
  if (m < 0 || m >= size) throw new CoreError('out_of_range', `leaf ${m} is not in a tree of size ${size}`);
  const out: LeafRange[] = [];
  let lo = 0;
  let hi = size;
  // Walk down from the root, collecting siblings; the proof lists them bottom-up.
  while (hi - lo > 1) {
    const k = splitPoint(hi - lo);
    if (m < lo + k) {
      out.push({ lo: lo + k, hi });
      hi = lo + k;
    } else {
      out.push({ lo, hi: lo + k });
      lo += k;
    }
  }
  return out.reverse();
}

/** RFC 6962 PROOF(m, D[0:n]) as leaf ranges, in proof order. 0 < m ≤ n. */
export function consistencyRanges(m: number, n: number): LeafRange[] {
  if (m < 1 || m > n) throw new CoreError('out_of_range', `no consistency proof from size ${m} to size ${n}`);
  const out: LeafRange[] = [];
  let lo = 0;
  let hi = n;
  let complete = true; // SUBPROOF's b
  // SUBPROOF recursion unrolled: each step appends one range after the recursive part.
  const tail: LeafRange[] = [];
  while (m !== hi - lo) {
    const k = splitPoint(hi - lo);
    if (m <= k) {
      tail.push({ lo: lo + k, hi });
      hi = lo + k;
    } else {
      tail.push({ lo, hi: lo + k });
      m -= k;
      lo += k;
      complete = false;
    }
  }
  if (!complete) out.push({ lo, hi });
  return out.concat(tail.reverse());
}

function isHash(h: unknown): h is Hash {
  return h instanceof Uint8Array && h.length === HASH_SIZE;
}

/** RFC 9162 §2.1.3.2: does proof show leaf (at index) in the tree of size with this root? */
export function verifyInclusion(index: number, size: number, leaf: Hash, proof: Hash[], root: Hash): boolean {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return false;
  if (!isHash(leaf) || !isHash(root) || !proof.every(isHash)) return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn /= 2;
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && bytesEqual(r, root);
}

/** RFC 9162 §2.1.4.2: is the tree (size2, root2) an extension of (size1, root1)? */
export function verifyConsistency(size1: number, size2: number, proof: Hash[], root1: Hash, root2: Hash): boolean {
  if (!Number.isSafeInteger(size1) || !Number.isSafeInteger(size2) || size1 < 0 || size1 > size2) return false;
  if (!isHash(root1) || !isHash(root2) || !proof.every(isHash)) return false;
  if (size1 === size2) return proof.length === 0 && bytesEqual(root1, root2);
  if (size1 === 0) return proof.length === 0;
  if (proof.length === 0) return false;
  // When size1 is a power of two its root is a node of the larger tree and the proof omits it.
  const path = isPow2(size1) ? [root1, ...proof] : proof;
  let fn = size1 - 1;
  let sn = size2 - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0] as Hash;
  let sr = path[0] as Hash;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn /= 2;
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && bytesEqual(fr, root1) && bytesEqual(sr, root2);
}

function isPow2(n: number): boolean {
  while (n > 1 && n % 2 === 0) n /= 2;
  return n === 1;
}

/**
 * The right edge of an append-only tree ("compact range" of [0, size)): the roots of its
 * maximal complete subtrees, largest first. Appending a leaf yields exactly the hashes
 * storage must add, in stored-hash order, and the root of any size is a fold of the edge.
 */
export class TreeEdge {
  private constructor(
    private size_: number,
    private readonly nodes: Hash[],
  ) {}

  /** An edge for a tree of `size` leaves from the hashes of subtreesOf(0, size), in order. */
  static of(size: number, hashes: Hash[]): TreeEdge {
    if (hashes.length !== subtreesOf(0, size).length) throw new Error(`a tree of size ${size} needs ${subtreesOf(0, size).length} edge hashes, got ${hashes.length}`);
    return new TreeEdge(size, [...hashes]);
  }

  static empty(): TreeEdge {
    return new TreeEdge(0, []);
  }

  get size(): number {
    return this.size_;
  }

  /** Adds a leaf; returns the hashes to store from storedHashIndex(0, old size) on: the leaf, then each subtree it completes. */
  append(leaf: Hash): Hash[] {
    const stored = [leaf];
    let h = leaf;
    // Each trailing 1 bit of the old size is a complete subtree the new leaf pairs with.
    for (let n = this.size_; n % 2 === 1; n = Math.floor(n / 2)) {
      h = nodeHash(this.nodes.pop() as Hash, h);
      stored.push(h);
    }
    this.nodes.push(h);
    this.size_++;
    return stored;
  }

  /**
   * Adds a complete subtree of 2^level leaves (its root) to a tree whose size is a multiple of
   * 2^level; returns the stored hashes above it that it completes, level + 1 upward.
   */
  appendSubtree(root: Hash, level: number): Hash[] {
    const width = pow2(level);
    if (this.size_ % width !== 0) throw new Error(`a subtree of level ${level} cannot start at leaf ${this.size_}`);
    const stored: Hash[] = [];
    let h = root;
    for (let n = this.size_ / width; n % 2 === 1; n = Math.floor(n / 2)) {
      h = nodeHash(this.nodes.pop() as Hash, h);
      stored.push(h);
    }
    this.nodes.push(h);
    this.size_ += width;
    return stored;
  }

  /**
   * Goes back to an earlier size whose subtrees are a prefix of this edge's: `size` a multiple
   * of a power of two larger than the leaves dropped (the start of a TREE_STRIDE block, say).
   */
  rewind(size: number): void {
    const keep = subtreesOf(0, size).length;
    const dropped = subtreesOf(size, this.size_);
    if (size > this.size_ || keep + dropped.length !== this.nodes.length || (dropped[0] !== undefined && dropped[0].index * pow2(dropped[0].level) !== size)) {
      throw new Error(`a tree edge of size ${this.size_} cannot go back to size ${size}`);
    }
    this.nodes.length = keep;
    this.size_ = size;
  }

  root(): Hash {
    return foldSubtrees(this.nodes);
  }

  hashes(): Hash[] {
    return [...this.nodes];
  }
}

/** The RFC 6962 definition, straight from the recursion: the reference the tests hold everything to. */
export function referenceRoot(leaves: Hash[]): Hash {
  if (leaves.length === 0) return EMPTY_ROOT;
  if (leaves.length === 1) return leaves[0] as Hash;
  const k = splitPoint(leaves.length);
  return nodeHash(referenceRoot(leaves.slice(0, k)), referenceRoot(leaves.slice(k)));
}

/**
 * The root of the tree of `size` leaves when only some leaves are known (a multi-leaf
 * inclusion check): subtrees holding a known leaf are recomputed from below, every other
 * subtree is taken from `stored`. With `stored` undefined it only lists the complete
 * subtrees it would need, so the caller can read them all at once.
 * `known` maps leaf index → leaf hash; every index must be below `size`.
 */
export function rootWithLeaves(size: number, known: Map<number, Hash>, stored: ((s: Subtree) => Hash) | undefined, need: Subtree[] = []): Hash {
  const sorted = [...known.keys()].sort((a, b) => a - b);
  // Is any known leaf in [lo, hi)? Binary search on the sorted indexes.
  const any = (lo: number, hi: number) => {
    let a = 0;
    let b = sorted.length;
    while (a < b) {
      const m = (a + b) >> 1;
      if ((sorted[m] as number) < lo) a = m + 1;
      else b = m;
    }
    return a < sorted.length && (sorted[a] as number) < hi;
  };
  const mth = (lo: number, hi: number): Hash => {
    if (!any(lo, hi)) {
      const parts = subtreesOf(lo, hi);
      if (!stored) {
        need.push(...parts);
        return EMPTY_ROOT;
      }
      return foldSubtrees(parts.map(stored));
    }
    if (hi - lo === 1) return known.get(lo) as Hash;
    const k = splitPoint(hi - lo);
    return nodeHash(mth(lo, lo + k), mth(lo + k, hi));
  };
  return size === 0 ? EMPTY_ROOT : mth(0, size);
}
