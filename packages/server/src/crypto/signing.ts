// Everything that needs a private key: entry signatures, checkpoint notes and key transitions.
// Only the server signs, through a key's custody (crypto/custody.ts: node:crypto in memory, or a
// PKCS#11 token); the messages and formats it signs come from @audit-ledger/core, which checks
// them (so signer and verifier cannot drift apart).
import { createPublicKey, type KeyObject, sign } from 'node:crypto';
import type { KeyCustody } from './custody.js';
import { entrySignatureMessage, keyIdOf, type KeyTransition, keyTransitionText, noteSignatureLine, toBase64, utf8 } from '@audit-ledger/core';

/** The 32-byte raw Ed25519 public key of a KeyObject. */
export function rawPublicKey(publicKey: KeyObject): Uint8Array {
  const jwk = publicKey.export({ format: 'jwk' });
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') throw new Error('not an Ed25519 public key');
  return Buffer.from(jwk.x, 'base64url');
}

export function publicKeyFromRaw(raw: Uint8Array): KeyObject {
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(raw).toString('base64url') }, format: 'jwk' });
}

/** key_id of a KeyObject (core's keyIdOf over its raw bytes). */
export function keyIdOfKey(publicKey: KeyObject): string {
  return keyIdOf(rawPublicKey(publicKey));
}

/** Ed25519 over the entry signature message (docs/ledger-format.md §5), base64. */
export function signEntryHash(privateKey: KeyObject, hashHex: string): string {
  return sign(null, entrySignatureMessage(hashHex), privateKey).toString('base64');
}

/** A C2SP signed note: the text, a blank line, and one signature line by (name, key). */
export function signNote(text: string, name: string, signer: Pick<KeyCustody, 'sign'>, rawKey: Uint8Array): string {
  return `${text}\n${noteSignatureLine(name, rawKey, signer.sign(utf8(text)))}`;
}

type TransitionKey = { custody: Pick<KeyCustody, 'sign'>; raw: Uint8Array };

/** Builds and signs a transition from the old key to the new one (core's verifyKeyTransition checks it). */
export function signKeyTransition(oldKey: TransitionKey, newKey: TransitionKey, createdAt: string): KeyTransition {
  const body = {
    old_key_id: keyIdOf(oldKey.raw),
    old_public_key: toBase64(oldKey.raw),
    new_key_id: keyIdOf(newKey.raw),
    new_public_key: toBase64(newKey.raw),
    created_at: createdAt,
  };
  const statement = keyTransitionText(body);
  const bytes = utf8(statement);
  return { ...body, statement, old_signature: toBase64(oldKey.custody.sign(bytes)), new_signature: toBase64(newKey.custody.sign(bytes)) };
}
