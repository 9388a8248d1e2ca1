// The crypto seam anywhere but Node (see types.ts): browsers, Deno, Bun, workers. Pure JS from
// @noble/hashes and @noble/curves (audited, no dependencies). Chosen by the `browser` and
// `default` conditions of the '#crypto' import.
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha256 as nobleSha256, sha512 } from '@noble/hashes/sha2.js';
import { concatBytes } from '@noble/hashes/utils.js';
import { CoreError } from '../errors.js';
import { strictEncodings } from './ed25519-strict.js';

const encoder = new TextEncoder();

export const utf8 = (text: string): Uint8Array => encoder.encode(text);

export function bytesThenUtf8(parts: Uint8Array[], text: string): Uint8Array {
  const body = encoder.encode(text);
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0) + body.length);
  let at = 0;
  for (const p of [...parts, body]) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function sha256(data: Uint8Array | string): Uint8Array {
  return nobleSha256(typeof data === 'string' ? utf8(data) : data);
}

export const sha256Hex = (data: Uint8Array | string): string => toHex(sha256(data));

/** Which implementation checks Ed25519 signatures here. */
export const ed25519Backend = (): string => 'noble';

const { Point } = ed25519;
/** The group order L. */
const ORDER = 2n ** 252n + 27742317777372353535851937790883648493n;
const le = (b: Uint8Array): bigint => {
  let n = 0n;
  for (let i = b.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(b[i] as number);
  return n;
};

/**
 * RFC 8032 §5.1.7 with the cofactorless equation, as OpenSSL and libsodium check it on Node: the
 * encoding of [S]B - [k]A must be R's bytes. (ed25519.verify of @noble/curves checks the cofactored
 * equation whatever its options, and so accepted vectors 4 and 5 of testdata/ed25519-edge-cases.json,
 * which Node refuses.) The encodings were checked before (ed25519-strict.ts): S < L, A canonical.
 */
function cofactorless(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  const r = signature.subarray(0, 32);
  const a = Point.fromBytes(publicKey, false);
  const k = le(sha512(concatBytes(r, publicKey, message))) % ORDER;
  const rCheck = Point.BASE.multiplyUnsafe(le(signature.subarray(32, 64))).subtract(a.multiplyUnsafe(k));
  return bytesEqual(rCheck.toBytes(), r);
}

export function verifyEd25519(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  // The format's encoding checks first (ed25519-strict.ts), as on Node.
  if (!strictEncodings(publicKey, signature)) return false;
  try {
    return cofactorless(publicKey, message, signature);
  } catch {
    // Not a point on the curve, say.
    return false;
  }
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += HEX[bytes[i] as number];
  return out;
}

function nibble(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

export function fromHex(hex: string): Uint8Array {
  const fail = () => new CoreError('malformed_encoding', `not an even number of hex digits: ${JSON.stringify(hex.slice(0, 80))}`);
  if (hex.length % 2 !== 0) throw fail();
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) {
    const hi = nibble(hex.charCodeAt(2 * i));
    const lo = nibble(hex.charCodeAt(2 * i + 1));
    if (hi < 0 || lo < 0) throw fail();
    out[i] = hi * 16 + lo;
  }
  return out;
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B64_INDEX = new Map([...B64].map((c, i) => [c, i]));

export function toBase64(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += B64[(n >> 18) & 63];
    out += B64[(n >> 12) & 63];
    out += i + 1 < bytes.length ? B64[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.length ? B64[n & 63] : '=';
  }
  return out;
}

export function fromBase64(text: string): Uint8Array {
  const fail = () => new CoreError('malformed_encoding', `not canonical base64: ${JSON.stringify(text.slice(0, 80))}`);
  if (text.length % 4 !== 0) throw fail();
  const pad = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const out = new Uint8Array((text.length / 4) * 3 - pad);
  let o = 0;
  for (let i = 0; i < text.length; i += 4) {
    let n = 0;
    for (let j = 0; j < 4; j++) {
      const c = text[i + j] as string;
      const last = i + 4 === text.length;
      const v = c === '=' && last && j >= 4 - pad ? 0 : B64_INDEX.get(c);
      if (v === undefined) throw fail();
      n = n * 64 + v;
    }
    out[o++] = (n >> 16) & 255;
    if (o < out.length) out[o++] = (n >> 8) & 255;
    if (o < out.length) out[o++] = n & 255;
  }
  // Canonical means the unused low bits of the last character are zero.
  if (toBase64(out) !== text) throw fail();
  return out;
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}
export const CRYPTO_IMPLEMENTATION = '@noble/hashes + @noble/curves';
