// Entry signatures: Ed25519 over a domain-separated message, so an entry signature can
// never be mistaken for any other signature the service makes (checkpoints use signed notes,
// key transitions their own context line). The core only checks; the server signs.
import { fromBase64, sha256Hex, utf8, verifyEd25519 } from '#crypto';

export const ENTRY_SIGNATURE_CONTEXT = 'audit-ledger/v1/entry-signature\n';
export const SIGNATURE_ALGORITHM = 'Ed25519';

/** The exact bytes signed for an entry: the context line followed by the entry hash in hex. */
export function entrySignatureMessage(hashHex: string): Uint8Array {
  return utf8(ENTRY_SIGNATURE_CONTEXT + hashHex);
}

/** Does signatureB64 (canonical base64 of 64 bytes) verify over the entry hash with this raw 32-byte key? */
export function verifyEntrySignature(publicKey: Uint8Array, hashHex: string, signatureB64: string): boolean {
  let sig: Uint8Array;
  try {
    sig = fromBase64(signatureB64);
  } catch {
    return false;
  }
  return sig.length === 64 && verifyEd25519(publicKey, entrySignatureMessage(hashHex), sig);
}

/** key_id: the first 16 hex characters of SHA-256 over the raw 32-byte public key. */
export function keyIdOf(rawPublicKey: Uint8Array): string {
  return sha256Hex(rawPublicKey).slice(0, 16);
}
