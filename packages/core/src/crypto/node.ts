// The crypto seam on Node (see types.ts): node:crypto's one-shot hash and verify, Buffer for
// encodings. Chosen by the `node` condition of the '#crypto' import.
import { createPublicKey, hash, type KeyObject, verify } from 'node:crypto';
import { createRequire } from 'node:module';
import { CoreError } from '../errors.js';
import { strictEncodings } from './ed25519-strict.js';

const asBuffer = (b: Uint8Array): Buffer => (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength));

export function sha256(data: Uint8Array | string): Uint8Array {
  // One-shot crypto.hash: no Hash object per call (about 40% faster on the append path). Its
  // 'buffer' output costs 1.4 µs a call on Node 24 here, a latin1 string turned into bytes
  // 0.6 µs (the same 32 bytes): tree hashing is most of a full verification's hashing.
  return Buffer.from(hash('sha256', data, 'binary'), 'latin1');
}

export function sha256Hex(data: Uint8Array | string): string {
  return hash('sha256', data, 'hex');
}

// Building a KeyObject costs more than a hash; a process checks signatures of a few keys.
const keyObjects = new Map<string, KeyObject>();
const MAX_CACHED_KEYS = 256;

function keyObject(raw: Uint8Array): KeyObject {
  const x = asBuffer(raw).toString('base64url');
  let key = keyObjects.get(x);
  if (!key) {
    key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
    if (keyObjects.size >= MAX_CACHED_KEYS) keyObjects.clear();
    keyObjects.set(x, key);
  }
  return key;
}

/** The cofactorless equation of one library, over encodings already checked (ed25519-strict.ts). */
type Equation = (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array) => boolean;

/**
 * libsodium's Ed25519 verification, when its binding (sodium-native, an optional dependency with
 * prebuilt binaries) is installed: about half OpenSSL's time per signature on the machines measured
 * (docs/performance.md, "Verifying signatures"), which is most of a full verification with entry
 * signatures. AUDIT_LEDGER_ED25519=openssl keeps OpenSSL. Both accept the same signatures: the
 * encodings are checked first, then each applies the cofactorless equation.
 */
const libsodium: Equation | undefined = (() => {
  try {
    const { crypto_sign_verify_detached: v } = createRequire(import.meta.url)('sodium-native') as { crypto_sign_verify_detached: (sig: Uint8Array, msg: Uint8Array, pk: Uint8Array) => boolean };
    return (publicKey, message, signature) => v(signature, message, publicKey);
  } catch {
    return undefined;
  }
})();
const openssl: Equation = (publicKey, message, signature) => verify(null, message, keyObject(publicKey), signature);

/** The libraries this process can check the equation with (tests run the vectors through each). */
export const ED25519_EQUATIONS: Readonly<Record<string, Equation>> = { openssl, ...(libsodium ? { libsodium } : {}) };

/** A verifier with one library's equation: the format's encoding checks, then the equation; never throws. */
export function ed25519VerifierWith(name: string): (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array) => boolean {
  const equation = ED25519_EQUATIONS[name];
  if (!equation) throw new Error(`no Ed25519 implementation named ${name} here`);
  return (publicKey, message, signature) => {
    if (!strictEncodings(publicKey, signature)) return false;
    try {
      return equation(publicKey, message, signature);
    } catch {
      // Not a point on the curve, say.
      return false;
    }
  };
}

const BACKEND = libsodium && process.env.AUDIT_LEDGER_ED25519 !== 'openssl' ? 'libsodium' : 'openssl';

/** Which implementation checks Ed25519 signatures in this process. */
export const ed25519Backend = (): string => BACKEND;

export const verifyEd25519 = ed25519VerifierWith(BACKEND);

export const toHex = (bytes: Uint8Array): string => asBuffer(bytes).toString('hex');

export function fromHex(hex: string): Uint8Array {
  // Buffer stops at the first pair that is not hex: a shorter result means the text was not hex.
  const b = Buffer.from(hex, 'hex');
  if (b.length * 2 !== hex.length) throw new CoreError('malformed_encoding', `not an even number of hex digits: ${JSON.stringify(hex.slice(0, 80))}`);
  return b;
}

export const toBase64 = (bytes: Uint8Array): string => asBuffer(bytes).toString('base64');

export function fromBase64(text: string): Uint8Array {
  // Buffer accepts base64url, whitespace and missing padding; the format does not.
  const b = Buffer.from(text, 'base64');
  if (b.toString('base64') !== text) throw new CoreError('malformed_encoding', `not canonical base64: ${JSON.stringify(text.slice(0, 80))}`);
  return b;
}

export const utf8 = (text: string): Uint8Array => Buffer.from(text, 'utf8');

export function bytesThenUtf8(parts: Uint8Array[], text: string): Uint8Array {
  // One allocation (from Buffer's pool when small) and the text encoded in place: a commitment's
  // input is built once per entry on the append and verification paths.
  let at = 0;
  for (const p of parts) at += p.length;
  const out = Buffer.allocUnsafe(at + Buffer.byteLength(text, 'utf8'));
  at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  out.write(text, at, 'utf8');
  return out;
}

export const bytesEqual = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && asBuffer(a).equals(b);
export const CRYPTO_IMPLEMENTATION = 'node:crypto';
