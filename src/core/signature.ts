// Entry signatures: Ed25519 over a domain-separated message, so an entry signature can
// never be mistaken for any other signature the service makes (checkpoints use signed notes).
import { createHash, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';

export const ENTRY_SIGNATURE_CONTEXT = 'audit-ledger/v1/entry-signature\n';
export const SIGNATURE_ALGORITHM = 'Ed25519';

/** The exact bytes signed for an entry: the context line followed by the entry hash in hex. */
export function entrySignatureMessage(hashHex: string): Buffer {
  return Buffer.from(ENTRY_SIGNATURE_CONTEXT + hashHex, 'utf8');
}

export function signEntryHash(privateKey: KeyObject, hashHex: string): string {
  return sign(null, entrySignatureMessage(hashHex), privateKey).toString('base64');
}

export function verifyEntrySignature(publicKey: KeyObject, hashHex: string, signatureB64: string): boolean {
  try {
    const sig = Buffer.from(signatureB64, 'base64');
    return sig.length === 64 && verify(null, entrySignatureMessage(hashHex), publicKey, sig);
  } catch {
    return false;
  }
}

/** The 32-byte raw Ed25519 public key. */
export function rawPublicKey(publicKey: KeyObject): Buffer {
  const jwk = publicKey.export({ format: 'jwk' });
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') throw new Error('not an Ed25519 public key');
  return Buffer.from(jwk.x, 'base64url');
}

export function publicKeyFromRaw(raw: Uint8Array): KeyObject {
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(raw).toString('base64url') }, format: 'jwk' });
}

/** key_id: the first 16 hex characters of SHA-256 over the raw 32-byte public key. */
export function keyIdOf(publicKey: KeyObject): string {
  return createHash('sha256').update(rawPublicKey(publicKey)).digest('hex').slice(0, 16);
}
