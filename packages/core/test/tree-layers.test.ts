// Stored levels (merkle.ts TREE_STRIDE) and the layered reader (tree.ts) that serves any
// subtree from them and the entries' hashes: held to a tree that keeps every hash.
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { entryLeafHash, type Hash, inclusionProof, isStoredLevel, layeredReader, readRoot, referenceRoot, splitStoredHashIndex, storedHashCount, storedHashIndex, storedLevelIndexes, subtreesOf, toHex, TREE_STRIDE, TreeEdge } from '../src/index.js';

/** n entries' hashes, every stored hash of their tree, and the stores the service keeps: stored levels only, and the entries. */
function ledger(n: number) {
  const entries = Array.from({ length: n }, () => randomBytes(32).toString('hex'));
  const edge = TreeEdge.empty();
  const all: Hash[] = [];
  for (const e of entries) all.push(...edge.append(entryLeafHash(e)));
  const kept = new Map<number, string>();
  all.forEach((h, i) => isStoredLevel(splitStoredHashIndex(i).level) && kept.set(i, toHex(h)));
  const reads = { stored: 0, entries: 0 };
  const read = layeredReader(
    async (idx) => {
      reads.stored += idx.length;
      return new Map(idx.flatMap((i) => (kept.has(i) ? [[i, kept.get(i) as string] as const] : [])));
    },
    async (seqs) => {
      reads.entries += seqs.length;
      return new Map(seqs.flatMap((s) => (s < entries.length ? [[s, entries[s] as string] as const] : [])));
    },
  );
  return { entries, all, kept, read, reads, edge };
}

describe('stored levels', () => {
  it('splitStoredHashIndex inverts storedHashIndex', () => {
    fc.assert(
      // Trees up to 2^46 leaves: stored-hash indexes stay well below 2^53, where numbers stop being exact.
      fc.property(fc.integer({ min: 0, max: 30 }).chain((level) => fc.tuple(fc.constant(level), fc.integer({ min: 0, max: 2 ** (46 - level) - 1 }))), ([level, index]) => {
        expect(splitStoredHashIndex(storedHashIndex(level, index))).toEqual({ level, index });
      }),
    );
  });

  it('storedLevelIndexes lists exactly the kept indexes of a range', () => {
    const all = Array.from({ length: storedHashCount(5000) }, (_, i) => i).filter((i) => isStoredLevel(splitStoredHashIndex(i).level));
    for (const [from, to] of [[0, 0], [0, 1], [0, storedHashCount(5000)], [17, 40], [100, 9000], [4095, 4200], [storedHashIndex(8, 3), storedHashIndex(8, 3) + 1]]) {
      expect(storedLevelIndexes(from as number, to as number)).toEqual(all.filter((i) => i >= (from as number) && i < (to as number)));
    }
  });

  it('every TREE_STRIDE-th level above the leaves is kept: about one hash per 2^TREE_STRIDE − 1 entries', () => {
    expect([0, 1, 3, 4, 5, 8, 12, 13].map(isStoredLevel)).toEqual([false, false, false, true, false, true, true, false]);
    const { kept } = ledger(4096);
    expect(kept.size).toBe(4096 / 16 + 4096 / 256 + 4096 / 4096);
  });

  it('the layered reader gives every subtree hash the full tree has, from two reads', async () => {
    for (const n of [1, 2, 15, 16, 17, 255, 256, 257, 1000]) {
      const { all, read } = ledger(n);
      const indexes = Array.from({ length: storedHashCount(n) }, (_, i) => i);
      const got = await read(indexes);
      expect(got.size).toBe(all.length);
      for (const i of indexes) expect(got.get(i)).toBe(toHex(all[i] as Hash));
    }
  });

  it('roots and proofs through it match the reference, reading O(2^TREE_STRIDE · log n) hashes', async () => {
    const { entries, read, reads } = ledger(3000);
    const leaves = entries.map(entryLeafHash);
    expect(toHex(await readRoot(read, 3000))).toBe(toHex(referenceRoot(leaves)));
    expect(toHex(await readRoot(read, 1234))).toBe(toHex(referenceRoot(leaves.slice(0, 1234))));
    reads.stored = reads.entries = 0;
    const proof = await inclusionProof(read, 1500, 3000);
    expect(proof.length).toBe(12);
    expect(reads.stored + reads.entries).toBeLessThanOrEqual(16 * Math.ceil(12 / TREE_STRIDE) + 12);
  });

  it('a subtree whose hashes below are not all there is left out (the caller reports it missing)', async () => {
    const { entries, kept } = ledger(64);
    const read = layeredReader(
      async (idx) => new Map(idx.flatMap((i) => (kept.has(i) ? [[i, kept.get(i) as string] as const] : []))),
      async (seqs) => new Map(seqs.flatMap((s) => (s === 5 ? [] : [[s, entries[s] as string] as const]))),
    );
    const got = await read([storedHashIndex(2, 1), storedHashIndex(2, 0), storedHashIndex(4, 0), storedHashIndex(5, 0)]);
    expect([...got.keys()].sort((a, b) => a - b)).toEqual([storedHashIndex(2, 0), storedHashIndex(4, 0), storedHashIndex(5, 0)].sort((a, b) => a - b));
  });
});

describe('TreeEdge.rewind', () => {
  it('goes back to a block start and grows again to the same edge', () => {
    const leaves = Array.from({ length: 45 }, () => entryLeafHash(randomBytes(32).toString('hex')));
    const a = TreeEdge.empty();
    leaves.forEach((l) => a.append(l));
    const b = TreeEdge.empty();
    leaves.slice(0, 37).forEach((l) => b.append(l));
    b.rewind(32);
    expect(b.size).toBe(32);
    leaves.slice(32).forEach((l) => b.append(l));
    expect(b.hashes().map(toHex)).toEqual(a.hashes().map(toHex));
    expect(subtreesOf(0, 32).length).toBe(1);
  });

  it('refuses a size whose subtrees are not a prefix of the edge', () => {
    const e = TreeEdge.empty();
    for (let i = 0; i < 37; i++) e.append(entryLeafHash(randomBytes(32).toString('hex')));
    expect(() => e.rewind(36)).not.toThrow();
    expect(() => e.rewind(33)).toThrow(/cannot go back/);
    expect(() => e.rewind(40)).toThrow(/cannot go back/);
  });
});
