// The C2SP tlog-tiles arithmetic (tiles.ts) against the spec's own examples (testdata/tlog-tiles.json)
// and its grammar: index paths, which tiles a tree has, and entry bundles.
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeEntryBundle, encodeEntryBundle, parseTilePath, tileHashIndexes, tileIndexPath, tilePath, tileWidthAt, storedHashIndex } from '../src/index.js';

const V = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', 'testdata', 'tlog-tiles.json'), 'utf8')) as {
  index_paths: Array<{ index: number; path: string }>;
  trees: Array<{ size: number; tiles: Record<string, { full: number; partial: number }> }>;
};

describe('C2SP tlog-tiles', () => {
  it('encodes tile indexes as the spec writes them, and reads them back', () => {
    for (const v of V.index_paths) {
      expect(tileIndexPath(v.index)).toBe(v.path);
      expect(parseTilePath(`0/${v.path}`)).toEqual({ level: 0, index: v.index, width: 256 });
    }
    expect(tilePath({ level: 3, index: 1234067, width: 8 })).toBe('tile/3/x001/x234/067.p/8');
    expect(tilePath({ level: 'entries', index: 5, width: 256 })).toBe('tile/entries/005');
  });

  it('has the tiles the spec lists for its example trees', () => {
    for (const tree of V.trees) {
      for (const [level, want] of Object.entries(tree.tiles)) {
        const widths: number[] = [];
        for (let n = 0; ; n++) {
          const w = tileWidthAt(Number(level), n, tree.size);
          if (w === 0) break;
          widths.push(w);
        }
        expect({ full: widths.filter((w) => w === 256).length, partial: widths.find((w) => w < 256) ?? 0 }, `size ${tree.size} level ${level}`).toEqual(want);
      }
    }
  });

  it('refuses every path the grammar does not produce', () => {
    for (const bad of ['', '0', '0/0', '0/00', '0/0000', '00/000', '64/000', '-1/000', '0/x000/001', '0/x001', '0/000/', '0/000.p/0', '0/000.p/256', '0/000.p/01', '0/000.p/', 'entries/1', 'x/000', '0/x1/000', '0/x001/x002/x003/x004/x005/x006/007'])
      expect(parseTilePath(bad), bad).toBeNull();
  });

  it('reads back every path it writes (level, index, width)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer({ min: 0, max: 63 }), fc.constant('entries' as const)), fc.integer({ min: 0, max: 2 ** 40 }), fc.integer({ min: 1, max: 256 }), (level, index, width) => {
        const p = tilePath({ level, index, width });
        expect(parseTilePath(p.slice('tile/'.length))).toEqual({ level, index, width });
      }),
    );
  });

  it('a tile at level L holds the subtrees of height 8L: stored hashes at level 8L', () => {
    expect(tileHashIndexes(1, 2, 3)).toEqual([512, 513, 514].map((n) => storedHashIndex(8, n)));
    expect(tileHashIndexes(0, 0, 2)).toEqual([storedHashIndex(0, 0), storedHashIndex(0, 1)]);
  });

  it('entry bundles are big-endian uint16 length-prefixed, and a truncated one is refused', () => {
    const entries = [new Uint8Array(32).fill(7), new Uint8Array(0), new Uint8Array(300).fill(1)];
    const bundle = encodeEntryBundle(entries);
    expect([...bundle.subarray(0, 2)]).toEqual([0, 32]);
    expect(decodeEntryBundle(bundle).map((e) => [...e])).toEqual(entries.map((e) => [...e]));
    expect(() => decodeEntryBundle(bundle.subarray(0, bundle.length - 1))).toThrow(/ends inside/);
    expect(() => encodeEntryBundle([new Uint8Array(65536)])).toThrow(/uint16/);
  });
});
