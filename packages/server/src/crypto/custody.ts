// Where a signing key's private half is kept, behind one interface: everything the service
// signs (entries, checkpoints, key transitions, reports) goes through sign() or signMany().
// Two custodies exist: a node:crypto KeyObject in this process's memory (a key file, or a key
// an online rotation sealed in the store), and a PKCS#11 token (crypto/pkcs11.ts) the key never
// leaves. A cloud key service would be a third (docs/transparency.md, "Key custody").
import { type KeyObject, sign } from 'node:crypto';

export interface KeyCustody {
  /** 'file': a PEM key file; 'store': sealed in the store by an online rotation; 'pkcs11': a key that never leaves its token. */
  readonly kind: 'file' | 'store' | 'pkcs11';
  /**
   * The private key as a node:crypto KeyObject, only when it is in this process's memory:
   * signing worker threads and SQLite's writer thread are given it. Absent for a token key,
   * which is signed with on this thread (its own sessions run the token's work off it).
   */
  readonly keyObject?: KeyObject;
  /** What signing_keys.custody records, so every process can open the key itself: 'pkcs11:<label>'. */
  readonly reference?: string;
  /** Ed25519 (pure, RFC 8032) over message: 64 bytes. */
  sign(message: Uint8Array): Uint8Array;
  /** sign() over each message, in order; a token spreads them over its sessions. */
  signMany(messages: Uint8Array[]): Promise<Uint8Array[]>;
  /** Whether it can sign now (health): a token whose session was lost cannot. */
  ready(): boolean;
}

/** What went wrong with a PKCS#11 token: its module, its login, or a key in it. */
export class Pkcs11Error extends Error {
  override readonly name = 'Pkcs11Error';
}

/** A key held in memory: node:crypto signs. */
export function memoryCustody(keyObject: KeyObject, kind: 'file' | 'store' = 'file'): KeyCustody {
  return {
    kind,
    keyObject,
    sign: (message) => sign(null, message, keyObject),
    signMany: (messages) => Promise.resolve(messages.map((m) => sign(null, m, keyObject))),
    ready: () => true,
  };
}
