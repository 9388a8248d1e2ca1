// Bearer secrets (access tokens, API keys): 256 random bits behind a recognizable prefix.
// Only their SHA-256 is stored; a presented secret is found by its hash and then
// compared in constant time. A fast hash is right here: the secrets are random, so
// there is nothing to brute-force (unlike passwords).
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

export const ACCESS_TOKEN_PREFIX = 'alt_';
export const API_KEY_PREFIX = 'alk_';
/** How many leading characters of a key are stored and shown to tell keys apart. */
export const KEY_PREFIX_LENGTH = API_KEY_PREFIX.length + 8;

export function newSecret(prefix: string): string {
  return prefix + randomBytes(32).toString('base64url');
}

export function hashSecret(secret: string): string {
  // One-shot hash: every authenticated request pays it.
  return hash('sha256', secret, 'hex');
}

/** Constant-time equality of two hex digests of equal length. */
export function digestsEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}
