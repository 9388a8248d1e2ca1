// Key transition statements (docs/ledger-format.md §11): when the service's signing key is
// rotated, the old key endorses the new one. Both keys sign the same statement, so an auditor
// who pinned only the first key can follow the chain of statements to the key in use today,
// and nobody holding only a new key can claim an endorsement it was not given.
import { createPublicKey, type KeyObject, sign, verify } from 'node:crypto';
import { keyIdOf, publicKeyFromRaw, rawPublicKey } from './signature.js';

/** First line of every statement: domain separation from entry signatures and checkpoint notes. */
export const KEY_TRANSITION_CONTEXT = 'audit-ledger/v1/key-transition';

export interface KeyTransition {
  old_key_id: string;
  /** Raw 32-byte Ed25519 public keys, base64. */
  old_public_key: string;
  new_key_id: string;
  new_public_key: string;
  /** When the new key became the active one (ISO 8601, UTC). */
  created_at: string;
  /** The signed text (UTF-8). */
  statement: string;
  /** Ed25519 signatures over the statement, base64: by the old key, and by the new. */
  old_signature: string;
  new_signature: string;
}

/** The exact text both keys sign. */
export function keyTransitionText(t: Pick<KeyTransition, 'old_key_id' | 'old_public_key' | 'new_key_id' | 'new_public_key' | 'created_at'>): string {
  return `${KEY_TRANSITION_CONTEXT}\nold ${t.old_key_id} ${t.old_public_key}\nnew ${t.new_key_id} ${t.new_public_key}\ntime ${t.created_at}\n`;
}

/** Builds and signs a transition from the old key to the new one. */
export function signKeyTransition(oldKey: { privateKey: KeyObject; publicKey: KeyObject }, newKey: { privateKey: KeyObject; publicKey: KeyObject }, createdAt: string): KeyTransition {
  const body = {
    old_key_id: keyIdOf(oldKey.publicKey),
    old_public_key: rawPublicKey(oldKey.publicKey).toString('base64'),
    new_key_id: keyIdOf(newKey.publicKey),
    new_public_key: rawPublicKey(newKey.publicKey).toString('base64'),
    created_at: createdAt,
  };
  const statement = keyTransitionText(body);
  const bytes = Buffer.from(statement, 'utf8');
  return { ...body, statement, old_signature: sign(null, bytes, oldKey.privateKey).toString('base64'), new_signature: sign(null, bytes, newKey.privateKey).toString('base64') };
}

/**
 * Checks a transition against a key the caller already trusts (the old key). Returns the new
 * public key when the statement is well formed, names the trusted key, matches its fields and
 * carries valid signatures by both keys; otherwise the reason it does not.
 */
export function verifyKeyTransition(t: KeyTransition, trustedOld: KeyObject): { newKey: KeyObject } | { failure: string } {
  let newKey: KeyObject;
  try {
    newKey = publicKeyFromRaw(Buffer.from(t.new_public_key, 'base64'));
  } catch {
    return { failure: 'the new public key is not an Ed25519 key' };
  }
  if (keyIdOf(trustedOld) !== t.old_key_id || rawPublicKey(trustedOld).toString('base64') !== t.old_public_key) return { failure: `it is endorsed by key ${t.old_key_id}, which is not the trusted key` };
  if (keyIdOf(newKey) !== t.new_key_id) return { failure: `new_key_id ${t.new_key_id} is not the id of the new public key` };
  if (t.statement !== keyTransitionText(t)) return { failure: 'the statement does not say what its fields say' };
  const bytes = Buffer.from(t.statement, 'utf8');
  const ok = (key: KeyObject, sig: string) => {
    try {
      return verify(null, bytes, key, Buffer.from(sig, 'base64'));
    } catch {
      return false;
    }
  };
  if (!ok(trustedOld, t.old_signature)) return { failure: `the old key's signature does not verify` };
  if (!ok(newKey, t.new_signature)) return { failure: `the new key's signature does not verify` };
  return { newKey };
}

/** A PEM public key for the new key of a transition (what an auditor pins next). */
export function transitionPublicKeyPem(t: Pick<KeyTransition, 'new_public_key'>): string {
  return createPublicKey(publicKeyFromRaw(Buffer.from(t.new_public_key, 'base64'))).export({ type: 'spki', format: 'pem' }).toString();
}
