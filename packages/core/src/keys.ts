// Public keys in the forms an auditor is handed: raw 32-byte Ed25519 keys (base64 in the API),
// SPKI PEM, C2SP verifier keys (name+keyid+base64(0x01 ‖ key)) and the JSON of
// GET /api/v1/integrity/keys or a bundle's public_keys. Pure: the caller reads the file.
import { fromBase64, toBase64 } from '#crypto';
import { CoreError } from './errors.js';
import type { KeyPeriod } from './key-periods.js';
import { keyIdOf } from './signature.js';

/** A key the verifier trusts: its id and raw bytes. */
export interface TrustedKey {
  keyId: string;
  /** The raw 32-byte Ed25519 public key. */
  raw: Uint8Array;
  /** When it may sign, from the signed transitions (key-periods.ts); absent: any time. */
  period?: KeyPeriod;
}

/** DER of SubjectPublicKeyInfo for Ed25519 (RFC 8410) up to the 32 key bytes. */
const SPKI_PREFIX = [0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00];

export function trustedKey(raw: Uint8Array): TrustedKey {
  if (raw.length !== 32) throw new CoreError('malformed_key', `an Ed25519 public key has 32 bytes, not ${raw.length}`);
  return { keyId: keyIdOf(raw), raw };
}

/** A raw key from the API's base64. */
export function rawKeyFromBase64(b64: string): Uint8Array {
  let raw: Uint8Array;
  try {
    raw = fromBase64(b64);
  } catch {
    throw new CoreError('malformed_key', 'the public key is not base64');
  }
  return trustedKey(raw).raw;
}

/** The raw key of an Ed25519 SPKI PEM block. */
export function rawKeyFromPem(pem: string): Uint8Array {
  const body = pem.replace(/-----(BEGIN|END) PUBLIC KEY-----/g, '').replace(/\s+/g, '');
  let der: Uint8Array;
  try {
    der = fromBase64(body);
  } catch {
    throw new CoreError('malformed_key', 'the PEM block is not base64');
  }
  if (der.length !== 44 || SPKI_PREFIX.some((b, i) => der[i] !== b)) throw new CoreError('malformed_key', 'the PEM block is not an Ed25519 public key (SPKI)');
  return der.slice(12);
}

/** SPKI PEM of a raw key: what an auditor pins (verify --public-key). */
export function publicKeyPem(raw: Uint8Array): string {
  const der = new Uint8Array([...SPKI_PREFIX, ...trustedKey(raw).raw]);
  return `-----BEGIN PUBLIC KEY-----\n${toBase64(der)}\n-----END PUBLIC KEY-----\n`;
}

/**
 * Public keys from a file's text: SPKI PEM blocks, C2SP verifier keys, the JSON of
 * GET /api/v1/integrity/keys, or a bundle's public_keys array. Throws CoreError malformed_key.
 */
export function parseTrustedKeys(text: string): TrustedKey[] {
  const trimmed = text.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    let json: unknown;
    try {
      json = JSON.parse(trimmed);
    } catch {
      throw new CoreError('malformed_key', 'the key file starts like JSON but is not JSON');
    }
    const items = Array.isArray(json) ? json : ((json as { items?: unknown; public_keys?: unknown }).items ?? (json as { public_keys?: unknown }).public_keys);
    if (!Array.isArray(items)) throw new CoreError('malformed_key', 'the key file is JSON but has no items or public_keys array');
    return items.map((k) => trustedKey(rawKeyFromBase64(String((k as { public_key?: unknown }).public_key))));
  }
  const pems = trimmed.match(/-----BEGIN PUBLIC KEY-----[\s\S]+?-----END PUBLIC KEY-----/g) ?? [];
  if (pems.length > 0) return pems.map((pem) => trustedKey(rawKeyFromPem(pem)));
  const keys: TrustedKey[] = [];
  for (const line of trimmed.split(/\s+/)) {
    const m = /^[^+\s]+\+[0-9a-f]{8}\+(.+)$/.exec(line);
    let raw: Uint8Array = new Uint8Array(0);
    try {
      if (m) raw = fromBase64(m[1] as string);
    } catch {
      // judged below
    }
    if (raw.length !== 33 || raw[0] !== 1) throw new CoreError('malformed_key', `not a PEM public key, key JSON or Ed25519 verifier key: ${line.slice(0, 60)}`);
    keys.push(trustedKey(raw.slice(1)));
  }
  if (keys.length === 0) throw new CoreError('malformed_key', 'no public key found');
  return keys;
}
