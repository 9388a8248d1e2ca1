// Key transition statements (docs/ledger-format.md §12): when the service's signing key is
// rotated, the old key endorses the new one. Both keys sign the same statement, so an auditor
// who pinned only the first key can follow the chain of statements to the key in use today,
// and nobody holding only a new key can claim an endorsement it was not given.
// The core checks statements; the server signs them (packages/server/src/crypto/signing.ts).
import { fromBase64, toBase64, utf8, verifyEd25519 } from '#crypto';
import { keyIdOf } from './signature.js';

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

/** Why a transition does not endorse its new key. */
export type KeyTransitionFailure = 'bad_new_key' | 'untrusted_old_key' | 'new_key_id_mismatch' | 'statement_mismatch' | 'bad_old_signature' | 'bad_new_signature';

/**
 * Checks a transition against a key the caller already trusts (the old key, raw bytes). Returns
 * the new raw public key when the statement is well formed, names the trusted key, matches its
 * fields and carries valid signatures by both keys; otherwise the reason it does not.
 */
export function verifyKeyTransition(t: KeyTransition, trustedOld: Uint8Array): { newKey: Uint8Array } | { code: KeyTransitionFailure; failure: string } {
  const decode = (b64: string) => {
    try {
      return fromBase64(b64);
    } catch {
      return undefined;
    }
  };
  const newKey = decode(t.new_public_key);
  if (newKey?.length !== 32) return { code: 'bad_new_key', failure: 'the new public key is not an Ed25519 key' };
  if (keyIdOf(trustedOld) !== t.old_key_id || toBase64(trustedOld) !== t.old_public_key) return { code: 'untrusted_old_key', failure: `it is endorsed by key ${t.old_key_id}, which is not the trusted key` };
  if (keyIdOf(newKey) !== t.new_key_id) return { code: 'new_key_id_mismatch', failure: `new_key_id ${t.new_key_id} is not the id of the new public key` };
  if (t.statement !== keyTransitionText(t)) return { code: 'statement_mismatch', failure: 'the statement does not say what its fields say' };
  const bytes = utf8(t.statement);
  const ok = (key: Uint8Array, sig: string) => {
    const s = decode(sig);
    return s !== undefined && verifyEd25519(key, bytes, s);
  };
  if (!ok(trustedOld, t.old_signature)) return { code: 'bad_old_signature', failure: `the old key's signature does not verify` };
  if (!ok(newKey, t.new_signature)) return { code: 'bad_new_signature', failure: `the new key's signature does not verify` };
  return { newKey };
}
