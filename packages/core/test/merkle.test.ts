// The Merkle core against the published RFC 6962 vectors (as carried by Certificate
// Transparency and transparency-dev/merkle) and against the RFC's recursive definition.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { consistencyRanges, fromHex, toHex, utf8, EMPTY_ROOT, foldSubtrees, type Hash, inclusionRanges, leafHash, type LeafRange, nodeHash, referenceRoot, rootWithLeaves, storedHashCount, storedHashIndex, subtreesOf, TreeEdge, verifyConsistency, verifyInclusion } from '../src/index.js';

const V = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', 'testdata', 'rfc6962.json'), 'utf8')) as {
  leaf_inputs: string[];
  leaf_hash_0: string;
  roots: string[];
  stored_nodes: Array<{ level: number; index: number; hash: string }>;
  inclusion: { good: Array<{ leaf_index: number; tree_size: number; proof: string[] }>; bad: Array<{ why: string; leaf_index: number; tree_size: number; proof: string[] }> };
  consistency: { good: Array<{ m: number; n: number; proof: string[] }>; bad: Array<{ why: string; m: number; n: number; proof: string[]; first_root_size?: number }> };
};
const h = fromHex;
const LEAF_INPUTS = V.leaf_inputs.map(h);
const LEAVES = LEAF_INPUTS.map(leafHash);
const ROOTS = V.roots.map(h);
// [leaf (1-based, as published), size, proof]
const INCLUSION: Array<[number, number, string[]]> = V.inclusion.good.map((v) => [v.leaf_index + 1, v.tree_size, v.proof]);
const CONSISTENCY: Array<[number, number, string[]]> = V.consistency.good.map((v) => [v.m, v.n, v.proof]);

/** A tree kept as every stored hash, like the store does: the system under test. */
function storedTree(leaves: Hash[]): { stored: Hash[]; edge: TreeEdge } {
  const edge = TreeEdge.empty();
  const stored: Hash[] = [];
  for (const leaf of leaves) {
    expect(stored.length).toBe(storedHashIndex(0, edge.size));
    stored.push(...edge.append(leaf));
    expect(stored.length).toBe(storedHashCount(edge.size));
  }
  return { stored, edge };
}
const rangeHash = (stored: Hash[], r: LeafRange) => foldSubtrees(subtreesOf(r.lo, r.hi).map((s) => stored[storedHashIndex(s.level, s.index)] as Hash));
const proofFrom = (stored: Hash[], ranges: LeafRange[]) => ranges.map((r) => rangeHash(stored, r));

describe('RFC 6962 corrupted proofs (testdata bad cases)', () => {
  it.each(V.inclusion.bad)('inclusion refuses: $why (leaf $leaf_index, size $tree_size)', (v) => {
    expect(verifyInclusion(v.leaf_index, v.tree_size, LEAVES[v.leaf_index] ?? (LEAVES[0] as Hash), v.proof.map(h), ROOTS[v.tree_size] ?? (ROOTS[0] as Hash))).toBe(false);
  });
  it.each(V.consistency.bad)('consistency refuses: $why ($m to $n)', (v) => {
    expect(verifyConsistency(v.m, v.n, v.proof.map(h), ROOTS[v.first_root_size ?? v.m] as Hash, ROOTS[v.n] as Hash)).toBe(false);
  });
});

describe('RFC 6962 published vectors', () => {
  it('leaf hashes, roots of sizes 0–8, and the stored tree agree', () => {
    expect(EMPTY_ROOT).toEqual(ROOTS[0]);
    expect(toHex(LEAVES[0] as Hash)).toBe(V.leaf_hash_0);
    for (let n = 0; n <= 8; n++) {
      expect(toHex(referenceRoot(LEAVES.slice(0, n))), `size ${n}`).toBe(V.roots[n]);
      expect(toHex(storedTree(LEAVES.slice(0, n)).edge.root()), `size ${n}`).toBe(V.roots[n]);
    }
  });

  it('the level-1 to level-3 node hashes are stored where storedHashIndex says', () => {
    const { stored } = storedTree(LEAVES);
    for (const node of V.stored_nodes) expect(toHex(stored[storedHashIndex(node.level, node.index)] as Hash)).toBe(node.hash);
    expect(stored.length).toBe(15);
  });

  it.each(INCLUSION)('inclusion proof of leaf %i in a tree of %i', (leaf, size, proof) => {
    const { stored } = storedTree(LEAVES.slice(0, size));
    expect(proofFrom(stored, inclusionRanges(leaf - 1, size)).map(toHex)).toEqual(proof);
    expect(verifyInclusion(leaf - 1, size, LEAVES[leaf - 1] as Hash, proof.map(h), ROOTS[size] as Hash)).toBe(true);
  });

  it.each(CONSISTENCY)('consistency proof from %i to %i', (m, n, proof) => {
    const { stored } = storedTree(LEAVES.slice(0, n));
    expect(proofFrom(stored, m === n ? [] : consistencyRanges(m, n)).map(toHex)).toEqual(proof);
    expect(verifyConsistency(m, n, proof.map(h), ROOTS[m] as Hash, ROOTS[n] as Hash)).toBe(true);
  });

  it('refuses corrupted inclusion proofs (wrong index, size, leaf, root, extra or missing or flipped hash)', () => {
    const [leaf, size, hex] = INCLUSION[2] as [number, number, string[]];
    const proof = hex.map(h);
    const i = leaf - 1;
    const root = ROOTS[size] as Hash;
    const good = LEAVES[i] as Hash;
    expect(verifyInclusion(i - 1, size, good, proof, root)).toBe(false);
    expect(verifyInclusion(i + 1, size, good, proof, root)).toBe(false);
    expect(verifyInclusion(i, size * 2, good, proof, root)).toBe(false);
    expect(verifyInclusion(i, size / 2, good, proof, root)).toBe(false);
    expect(verifyInclusion(i, size, LEAVES[0] as Hash, proof, root)).toBe(false);
    expect(verifyInclusion(i, size, good, proof, EMPTY_ROOT)).toBe(false);
    expect(verifyInclusion(i, size, good, [...proof, root], root)).toBe(false);
    expect(verifyInclusion(i, size, good, [root, ...proof], root)).toBe(false);
    expect(verifyInclusion(i, size, good, proof.slice(0, -1), root)).toBe(false);
    for (let k = 0; k < proof.length; k++) {
      const bad = proof.map((p) => Uint8Array.from(p));
      const b = bad[k] as Hash;
      b[0] = (b[0] as number) ^ 8;
      expect(verifyInclusion(i, size, good, bad, root)).toBe(false);
    }
    expect(verifyInclusion(0, 0, good, [], root)).toBe(false);
  });

  it('refuses corrupted consistency proofs', () => {
    const [m, n, hex] = CONSISTENCY[2] as [number, number, string[]];
    const proof = hex.map(h);
    const r1 = ROOTS[m] as Hash;
    const r2 = ROOTS[n] as Hash;
    expect(verifyConsistency(m - 1, n, proof, r1, r2)).toBe(false);
    expect(verifyConsistency(m + 1, n, proof, r1, r2)).toBe(false);
    expect(verifyConsistency(m, n * 2, proof, r1, r2)).toBe(false);
    expect(verifyConsistency(m, n, proof, r2, r1)).toBe(false);
    expect(verifyConsistency(m, n, [], r1, r2)).toBe(false);
    expect(verifyConsistency(m, n, [...proof, r1], r1, r2)).toBe(false);
    expect(verifyConsistency(m, n, [proof[0] as Hash, ...proof], r1, r2)).toBe(false);
    expect(verifyConsistency(m, n, proof.slice(0, -1), r1, r2)).toBe(false);
    for (let k = 0; k < proof.length; k++) {
      const bad = proof.map((p) => Uint8Array.from(p));
      const b = bad[k] as Hash;
      b[0] = (b[0] as number) ^ 16;
      expect(verifyConsistency(m, n, bad, r1, r2)).toBe(false);
    }
    expect(verifyConsistency(n, m, proof, r2, r1)).toBe(false);
  });
});

describe('against the RFC 6962 recursion on random trees', () => {
  const leaves = Array.from({ length: 1000 }, () => leafHash(randomBytes(8)));
  const { stored, edge } = storedTree(leaves);
  const sizes = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 100, 127, 128, 129, 255, 256, 257, 511, 512, 513, 777, 999, 1000];
  for (let i = 0; i < 20; i++) sizes.push(1 + Math.floor(Math.random() * 1000));
  const roots = new Map(sizes.map((n) => [n, referenceRoot(leaves.slice(0, n))]));

  it('roots of every size from the stored hashes equal the reference', () => {
    expect(edge.root()).toEqual(referenceRoot(leaves));
    for (const n of sizes) expect(rangeHash(stored, { lo: 0, hi: n }), `size ${n}`).toEqual(roots.get(n));
  });

  it('an edge rebuilt from stored hashes continues the same tree', () => {
    for (const n of [0, 1, 6, 7, 8, 500, 999]) {
      const resumed = TreeEdge.of(n, subtreesOf(0, n).map((s) => stored[storedHashIndex(s.level, s.index)] as Hash));
      const more: Hash[] = [];
      for (const leaf of leaves.slice(n)) more.push(...resumed.append(leaf));
      expect(more).toEqual(stored.slice(storedHashIndex(0, n)));
      expect(resumed.root()).toEqual(edge.root());
    }
  });

  it('inclusion proofs for every leaf of sampled sizes verify, and fail for the neighbouring leaf', () => {
    for (const n of sizes) {
      const root = roots.get(n) as Hash;
      for (let m = 0; m < n; m++) {
        const proof = proofFrom(stored, inclusionRanges(m, n));
        expect(verifyInclusion(m, n, leaves[m] as Hash, proof, root), `leaf ${m} of ${n}`).toBe(true);
        if (n > 1) expect(verifyInclusion(m, n, leaves[(m + 1) % n] as Hash, proof, root)).toBe(false);
      }
    }
  });

  it('consistency proofs between every pair of sampled sizes verify, and fail against another root', () => {
    for (const m of sizes) {
      for (const n of sizes) {
        if (m > n) continue;
        const proof = m === n ? [] : proofFrom(stored, consistencyRanges(m, n));
        expect(verifyConsistency(m, n, proof, roots.get(m) as Hash, roots.get(n) as Hash), `${m} → ${n}`).toBe(true);
        if (m < n) expect(verifyConsistency(m, n, proof, roots.get(m) as Hash, nodeHash(roots.get(n) as Hash, EMPTY_ROOT))).toBe(false);
      }
    }
  });
});

describe('roots from a subset of known leaves', () => {
  const leaves = Array.from({ length: 777 }, () => leafHash(randomBytes(8)));
  const { stored } = storedTree(leaves);
  const read = (s: { level: number; index: number }) => stored[storedHashIndex(s.level, s.index)] as Hash;

  it('equals the reference root for random subsets of random sizes, reading only what it listed', () => {
    for (let trial = 0; trial < 200; trial++) {
      const size = 1 + Math.floor(Math.random() * leaves.length);
      const known = new Map<number, Hash>();
      const k = Math.floor(Math.random() * Math.min(size, 40));
      for (let i = 0; i < k; i++) {
        const idx = Math.floor(Math.random() * size);
        known.set(idx, leaves[idx] as Hash);
      }
      const need: Array<{ level: number; index: number }> = [];
      rootWithLeaves(size, known, undefined, need);
      const listed = new Set(need.map((s) => `${s.level}:${s.index}`));
      const root = rootWithLeaves(size, known, (s) => {
        expect(listed.has(`${s.level}:${s.index}`)).toBe(true);
        return read(s);
      });
      expect(root).toEqual(referenceRoot(leaves.slice(0, size)));
      // A wrong known leaf changes the root.
      if (k > 0) {
        const [first] = known.keys();
        const wrong = new Map(known).set(first as number, leafHash(utf8('x')));
        expect(rootWithLeaves(size, wrong, read)).not.toEqual(root);
      }
    }
  });
});
