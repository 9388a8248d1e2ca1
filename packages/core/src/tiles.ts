// The C2SP tlog-tiles view of a company's tree (https://c2sp.org/tlog-tiles; docs/ledger-format.md
// §18): tile and entry bundle paths, which tiles a tree size has, which subtree hashes a tile holds,
// and the entry bundle encoding. Pure: the server reads the hashes (stored levels 8, 16, … are
// exactly the tiles' levels above 0; level 0 is the entries' leaf hashes) and serves them.
import { CoreError } from './errors.js';
import { storedHashIndex } from './merkle.js';

/** Hashes in a full tile. */
export const TILE_WIDTH = 256;
/** Tree levels a tile spans (256 = 2^8). */
export const TILE_HEIGHT = 8;

/** A tile: level L (0 for leaf hashes), index N, width W (256 for a full tile), or an entry bundle (level 'entries'). */
export interface TileRef {
  level: number | 'entries';
  index: number;
  width: number;
}

/** `x001/x234/067` for 1234067: zero-padded 3-digit elements, all but the last with an `x`. */
export function tileIndexPath(index: number): string {
  if (!Number.isSafeInteger(index) || index < 0) throw new CoreError('out_of_range', `tile index ${index} is not a non-negative integer`);
  let s = String(index % 1000).padStart(3, '0');
  for (let n = Math.floor(index / 1000); n > 0; n = Math.floor(n / 1000)) s = `x${String(n % 1000).padStart(3, '0')}/${s}`;
  return s;
}

/** The path of a tile after the log's prefix: `tile/<L>/<N>[.p/<W>]` or `tile/entries/<N>[.p/<W>]`. */
export function tilePath(t: TileRef): string {
  return `tile/${t.level}/${tileIndexPath(t.index)}${t.width < TILE_WIDTH ? `.p/${t.width}` : ''}`;
}

const LEVEL = /^(0|[1-9]\d?)$/;
const WIDTH = /^[1-9]\d{0,2}$/;

/**
 * Reads `<L>/<N>[.p/<W>]` or `entries/<N>[.p/<W>]` (the path after `tile/`) exactly as the spec
 * writes it, or null: a level 0–63 and a width 1–255 without leading zeros, index elements of
 * three digits with `x` on all but the last, no element with a needless leading `x000`.
 */
export function parseTilePath(path: string): TileRef | null {
  const parts = path.split('/');
  const head = parts.shift();
  if (head === undefined) return null;
  let level: number | 'entries';
  if (head === 'entries') level = 'entries';
  else if (LEVEL.test(head) && Number(head) <= 63) level = Number(head);
  else return null;
  let width = TILE_WIDTH;
  if (parts.length >= 2 && parts[parts.length - 2]?.endsWith('.p')) {
    const w = parts.pop() as string;
    if (!WIDTH.test(w) || Number(w) > 255) return null;
    width = Number(w);
    parts[parts.length - 1] = (parts[parts.length - 1] as string).slice(0, -2);
  }
  if (parts.length === 0 || parts.length > 6) return null;
  let index = 0;
  for (const [i, p] of parts.entries()) {
    const last = i === parts.length - 1;
    const m = (last ? /^(\d{3})$/ : /^x(\d{3})$/).exec(p);
    if (!m) return null;
    if (i === 0 && !last && m[1] === '000') return null; // x000/… : the same index has a shorter path
    index = index * 1000 + Number(m[1]);
  }
  if (!Number.isSafeInteger(index)) return null;
  return { level, index, width };
}

/** 256^level, the leaves under one hash of a tile at this level. */
function span(level: number): number {
  return TILE_WIDTH ** level;
}

/**
 * The width the tile (level, index) has in a tree of `size` leaves: 256 when full, 1–255 when
 * it is the level's partial tile, 0 when the tree has none of it (RFC: `floor(s / 256^l) mod 256`).
 * An entry bundle has the width of the level 0 tile.
 */
export function tileWidthAt(level: number | 'entries', index: number, size: number): number {
  const hashes = Math.floor(size / span(level === 'entries' ? 0 : level)); // complete subtrees of the tile's height at that level
  const width = hashes - index * TILE_WIDTH;
  return width <= 0 ? 0 : Math.min(width, TILE_WIDTH);
}

/**
 * The stored-hash indexes (core's storedHashIndex) of a tile's hashes, left to right: at level
 * L ≥ 1 the subtrees of height 8L; at level 0 the leaves, which storage keeps as entries (read
 * seqs `index * 256 + i` and take entryLeafHash of each).
 */
export function tileHashIndexes(level: number, index: number, width: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < width; i++) out.push(storedHashIndex(level * TILE_HEIGHT, index * TILE_WIDTH + i));
  return out;
}

/** The seqs a level 0 tile or entry bundle covers. */
export function tileSeqs(index: number, width: number): number[] {
  return Array.from({ length: width }, (_, i) => index * TILE_WIDTH + i);
}

/** An entry bundle: each entry as a big-endian uint16 length, then its bytes. */
export function encodeEntryBundle(entries: Uint8Array[]): Uint8Array {
  let total = 0;
  for (const e of entries) {
    if (e.length > 0xffff) throw new CoreError('out_of_range', `an entry of ${e.length} bytes does not fit a uint16 length`);
    total += 2 + e.length;
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const e of entries) {
    out[at] = e.length >> 8;
    out[at + 1] = e.length & 0xff;
    out.set(e, at + 2);
    at += 2 + e.length;
  }
  return out;
}

/** The entries of an entry bundle (encodeEntryBundle's inverse); a truncated bundle throws. */
export function decodeEntryBundle(bundle: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0; at < bundle.length; ) {
    if (at + 2 > bundle.length) throw new CoreError('malformed_encoding', 'an entry bundle ends inside a length');
    const n = ((bundle[at] as number) << 8) | (bundle[at + 1] as number);
    if (at + 2 + n > bundle.length) throw new CoreError('malformed_encoding', 'an entry bundle ends inside an entry');
    out.push(bundle.subarray(at + 2, at + 2 + n));
    at += 2 + n;
  }
  return out;
}
