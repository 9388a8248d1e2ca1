// The little of ASN.1 DER (ITU-T X.690) that RFC 3161 timestamps need: reading a TLV and its
// children, and writing the few types a timestamp request holds. Pure; strict where it reads
// (definite lengths in the shortest form, nothing after the value), so a token reads one way only.
import { CoreError } from './errors.js';

export interface Der {
  /** The identifier octet (class, constructed bit, tag number < 31). */
  tag: number;
  /** The whole TLV. */
  bytes: Uint8Array;
  /** The value's bytes. */
  value: Uint8Array;
}

const bad = (what: string) => new CoreError('malformed_encoding', `DER: ${what}`);

/** The TLV at `offset`, and where the next one starts. */
export function readDer(buf: Uint8Array, offset = 0): { der: Der; next: number } {
  if (offset + 2 > buf.length) throw bad('truncated');
  const tag = buf[offset] as number;
  if ((tag & 0x1f) === 0x1f) throw bad('high tag numbers are not used here');
  let len = buf[offset + 1] as number;
  let at = offset + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4) throw bad('indefinite or oversized length');
    if (at + n > buf.length) throw bad('truncated length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + (buf[at + i] as number);
    if (len < 0x80 || (n > 1 && buf[at] === 0)) throw bad('length not in its shortest form');
    at += n;
  }
  if (at + len > buf.length) throw bad('truncated value');
  return { der: { tag, bytes: buf.subarray(offset, at + len), value: buf.subarray(at, at + len) }, next: at + len };
}

/** Exactly one TLV: nothing may follow it. */
export function parseDer(buf: Uint8Array): Der {
  const { der, next } = readDer(buf, 0);
  if (next !== buf.length) throw bad('bytes after the value');
  return der;
}

/** A constructed value's children. */
export function children(d: Der): Der[] {
  if (!(d.tag & 0x20)) throw bad(`tag 0x${d.tag.toString(16)} is not constructed`);
  const out: Der[] = [];
  for (let at = 0; at < d.value.length; ) {
    const { der, next } = readDer(d.value, at);
    out.push(der);
    at = next;
  }
  return out;
}

export function expectTag(d: Der | undefined, tag: number, what: string): Der {
  if (!d || d.tag !== tag) throw bad(`${what}: expected tag 0x${tag.toString(16)}, got ${d ? `0x${d.tag.toString(16)}` : 'nothing'}`);
  return d;
}

/** An OBJECT IDENTIFIER's dotted form. */
export function oidText(d: Der): string {
  expectTag(d, 0x06, 'OBJECT IDENTIFIER');
  const v = d.value;
  if (v.length === 0) throw bad('empty OBJECT IDENTIFIER');
  const arcs: number[] = [];
  let n = 0;
  for (const b of v) {
    n = n * 128 + (b & 0x7f);
    if (!(b & 0x80)) {
      arcs.push(n);
      n = 0;
    }
  }
  const first = arcs.shift() as number;
  return [first < 80 ? Math.floor(first / 40) : 2, first < 80 ? first % 40 : first - 80, ...arcs].join('.');
}

/** A GeneralizedTime (`YYYYMMDDhhmmss[.f]Z`) as an RFC 3339 instant with milliseconds. */
export function generalizedTime(d: Der): string {
  expectTag(d, 0x18, 'GeneralizedTime');
  const s = new TextDecoder().decode(d.value);
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.(\d+))?Z$/.exec(s);
  if (!m) throw bad(`GeneralizedTime ${JSON.stringify(s)} is not UTC in seconds`);
  const ms = (m[7] ?? '').padEnd(3, '0').slice(0, 3);
  return `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.${ms}Z`;
}

// ---- Writing ----

function lengthBytes(n: number): number[] {
  if (n < 0x80) return [n];
  const out: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) out.unshift(v & 0xff);
  return [0x80 | out.length, ...out];
}

export function tlv(tag: number, value: Uint8Array): Uint8Array {
  const len = lengthBytes(value.length);
  const out = new Uint8Array(1 + len.length + value.length);
  out[0] = tag;
  out.set(len, 1);
  out.set(value, 1 + len.length);
  return out;
}

export function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export const sequence = (...parts: Uint8Array[]) => tlv(0x30, concat(parts));

/** A non-negative INTEGER from its big-endian bytes (a 0x00 is put in front when the top bit is set). */
export function unsignedInteger(bytes: Uint8Array): Uint8Array {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  const v = bytes.subarray(i);
  return tlv(0x02, (v[0] as number) & 0x80 ? concat([Uint8Array.of(0), v]) : v);
}

export function oid(dotted: string): Uint8Array {
  const arcs = dotted.split('.').map(Number);
  const body: number[] = [];
  const push = (n: number) => {
    const bytes = [n & 0x7f];
    for (let v = Math.floor(n / 128); v > 0; v = Math.floor(v / 128)) bytes.unshift(0x80 | (v & 0x7f));
    body.push(...bytes);
  };
  push((arcs[0] as number) * 40 + (arcs[1] as number));
  for (const a of arcs.slice(2)) push(a);
  return tlv(0x06, Uint8Array.from(body));
}
