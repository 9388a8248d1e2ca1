// The Merkle core against the published RFC 6962 vectors (as carried by Certificate
// Transparency and transparency-dev/merkle) and against the RFC's recursive definition.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  consistencyRanges,
  EMPTY_ROOT,
  foldSubtrees,
  type Hash,
  inclusionRanges,
  type LeafRange,
  leafHash,
  nodeHash,
  referenceRoot,
  rootWithLeaves,
  storedHashCount,
  storedHashIndex,
  subtreesOf,
  TreeEdge,
  verifyConsistency,
  verifyInclusion,
} from '../src/core/merkle.js';

const h = (hex: string) => Buffer.from(hex, 'hex');
const LEAF_INPUTS = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map(h);
const LEAVES = LEAF_INPUTS.map(leafHash);
const ROOTS = [
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
].map(h);
// [leaf (1-based, as published), size, proof]
const INCLUSION: Array<[number, number, string[]]> = [
  [1, 1, []],
  [1, 8, ['96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7', '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e', '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4']],
  [6, 8, ['bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b', 'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0', 'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7']],
  [3, 3, ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125']],
  [2, 5, ['6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d', '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e', 'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b']],
];
const CONSISTENCY: Array<[number, number, string[]]> = [
  [1, 1, []],
  [1, 8, ['96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7', '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e', '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4']],
  [6, 8, ['0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a', 'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0', 'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7']],
  [2, 5, ['5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e', 'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b']],
  [6, 7, ['0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a', 'b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f', 'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7']],
];

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

describe('RFC 6962 published vectors', () => {
  it('leaf hashes, roots of sizes 0–8, and the stored tree agree', () => {
    expect(EMPTY_ROOT).toEqual(ROOTS[0]);
    expect(LEAVES[0]?.toString('hex')).toBe('6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d');
    for (let n = 0; n <= 8; n++) {
      expect(referenceRoot(LEAVES.slice(0, n)).toString('hex'), `size ${n}`).toBe(ROOTS[n]?.toString('hex'));
      expect(storedTree(LEAVES.slice(0, n)).edge.root().toString('hex'), `size ${n}`).toBe(ROOTS[n]?.toString('hex'));
    }
  });

  it('the level-1 to level-3 node hashes are stored where storedHashIndex says', () => {
    const { stored } = storedTree(LEAVES);
    expect(stored[storedHashIndex(1, 1)]?.toString('hex')).toBe('5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e');
    expect(stored[storedHashIndex(2, 1)]?.toString('hex')).toBe('6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4');
    expect(stored[storedHashIndex(3, 0)]?.toString('hex')).toBe('5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328');
    expect(stored.length).toBe(15);
  });

  it.each(INCLUSION)('inclusion proof of leaf %i in a tree of %i', (leaf, size, proof) => {
    const { stored } = storedTree(LEAVES.slice(0, size));
    expect(proofFrom(stored, inclusionRanges(leaf - 1, size)).map((x) => x.toString('hex'))).toEqual(proof);
    expect(verifyInclusion(leaf - 1, size, LEAVES[leaf - 1] as Hash, proof.map(h), ROOTS[size] as Hash)).toBe(true);
  });

  it.each(CONSISTENCY)('consistency proof from %i to %i', (m, n, proof) => {
    const { stored } = storedTree(LEAVES.slice(0, n));
    expect(proofFrom(stored, m === n ? [] : consistencyRanges(m, n)).map((x) => x.toString('hex'))).toEqual(proof);
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
      const bad = proof.map((p) => Buffer.from(p));
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
      const bad = proof.map((p) => Buffer.from(p));
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
        const wrong = new Map(known).set(first as number, leafHash(Buffer.from('x')));
        expect(rootWithLeaves(size, wrong, read)).not.toEqual(root);
      }
    }
  });
});
