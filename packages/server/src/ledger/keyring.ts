// The service's Ed25519 signing keys. The first private key lives in a PEM file (PKCS#8):
// LEDGER_SIGNING_KEY_FILE, or signing-key.pem in the data dir, generated on first start
// with mode 0600. Keys made by online rotation (POST /api/v1/integrity/keys/rotate) are kept
// in the store, their private half sealed with the secrets key every process shares, so every
// process can switch to them. Public keys are recorded in the store, so every process and every
// verifier can check entries signed with any key, current or retired.
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ensurePrivateDir } from '../kernel/files.js';
import { type KeyTransition, rawKeyFromBase64, SIGNATURE_ALGORITHM, toBase64 } from '@audit-ledger/core';
import { keyIdOfKey, rawPublicKey, signKeyTransition } from '../crypto/signing.js';
import type { Config } from '../kernel/config.js';
import type { KeyStore, SigningKeyRow } from '../store/keys.js';
import type { SecretBox } from '../store/secret-box.js';
import { iso } from '../kernel/time.js';

export interface SigningKey {
  keyId: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** The raw 32-byte public key (what the core verifies with). */
  raw: Uint8Array;
  /**
   * When its signing period began (ms): the time of the transition that introduced it, or
   * -Infinity for a key file's key. Nothing it signs is dated earlier (entries' created_at,
   * checkpoints' timestamp), so every signature falls inside its period (ledger-format.md §12).
   */
  activeFrom: number;
}

export function signingKeyPath(config: Pick<Config, 'signingKeyFile' | 'dataDir'>): string {
  return config.signingKeyFile ?? path.join(config.dataDir, 'signing-key.pem');
}

function fromPrivate(privateKey: KeyObject, activeFrom = Number.NEGATIVE_INFINITY): SigningKey {
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error(`the signing key must be Ed25519, not ${privateKey.asymmetricKeyType}`);
  const publicKey = createPublicKey(privateKey);
  return { keyId: keyIdOfKey(publicKey), privateKey, publicKey, raw: rawPublicKey(publicKey), activeFrom };
}

/** Reads the key file; creates it (0600) when it is the default path and missing. */
export function loadOrCreateKeyFile(file: string, mayCreate: boolean): SigningKey {
  if (!fs.existsSync(file)) {
    if (!mayCreate) throw new Error(`signing key file ${file} does not exist`);
    const { privateKey } = generateKeyPairSync('ed25519');
    ensurePrivateDir(path.dirname(file));
    // 'wx': never overwrite a key another process created a moment ago.
    try {
      fs.writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  return fromPrivate(createPrivateKey(fs.readFileSync(file)));
}

export function publicKeyRow(key: SigningKey, activeFrom: string): SigningKeyRow {
  return {
    key_id: key.keyId,
    algorithm: SIGNATURE_ALGORITHM,
    public_key: toBase64(key.raw),
    active_from: activeFrom,
    active_to: null,
    private_key_encrypted: null,
  };
}

export interface KeyringDeps {
  config: Pick<Config, 'signingKeyFile' | 'dataDir'>;
  signingKeys: KeyStore;
  /** Seals the private halves of rotated keys (the secrets key every process shares). */
  secretBox: SecretBox;
  clock: () => number;
}

/**
 * The active signing key of this process, and how it changes: rotate() makes a new key (the
 * old one endorsing it), and reload() follows a rotation another process made, when an append
 * finds its key retired. Whoever signs registers with onSwitch and signs with the new key next.
 */
export class Keyring {
  private readonly publics = new Map<string, Uint8Array>();
  private readonly listeners: Array<(key: SigningKey) => void> = [];
  private reloading: Promise<void> | undefined;

  private constructor(
    private current: SigningKey,
    private readonly deps: KeyringDeps,
  ) {
    this.publics.set(current.keyId, current.raw);
  }

  /**
   * The active key: a rotated key from the store when there is one, else the key file (created
   * on first start at the default path); a key file that is new to the store becomes active.
   */
  static async open(deps: KeyringDeps): Promise<Keyring> {
    const now = deps.clock();
    const active = await deps.signingKeys.active();
    if (active?.private_key_encrypted) return new Keyring(fromPrivate(createPrivateKey(deps.secretBox.open(active.private_key_encrypted)), Date.parse(active.active_from)), deps);
    const key = loadOrCreateKeyFile(signingKeyPath(deps.config), deps.config.signingKeyFile === undefined);
    const known = (await deps.signingKeys.list()).find((k) => k.key_id === key.keyId);
    if (!known) {
      await deps.signingKeys.register(publicKeyRow(key, iso(now)));
      await deps.signingKeys.retireAllExcept(key.keyId, iso(now));
    } else if (known.active_to !== null) {
      throw new Error(`the signing key file ${signingKeyPath(deps.config)} holds key ${key.keyId}, retired at ${known.active_to}; the active key is ${active?.key_id ?? 'none'}`);
    }
    return new Keyring(key, deps);
  }

  get active(): SigningKey {
    return this.current;
  }

  /** Called with the new key whenever the active key changes in this process. */
  onSwitch(listener: (key: SigningKey) => void): void {
    this.listeners.push(listener);
  }

  private switchTo(key: SigningKey): void {
    this.current = key;
    this.publics.set(key.keyId, key.raw);
    for (const l of this.listeners) l(key);
  }

  /**
   * Makes a new key the active one for every process: the old key endorses it (crypto/signing.ts;
   * the core checks it). The transition's time is chosen inside the rotation's transaction, after
   * every append signed with the old key has committed, and later than all they dated (the
   * store's notBefore): so every old-key signature lies before it, and the new key dates nothing
   * earlier (activeFrom).
   */
  async rotate(): Promise<KeyTransition> {
    const old = this.current;
    const { privateKey } = generateKeyPairSync('ed25519');
    const sealed = this.deps.secretBox.seal(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
    let next: SigningKey | undefined;
    const transition = await this.deps.signingKeys.rotate(old.keyId, (notBefore) => {
      const atMs = Math.max(this.deps.clock(), notBefore);
      const at = iso(atMs);
      next = fromPrivate(privateKey, atMs);
      const t = signKeyTransition(old, next, at);
      return { newKey: { ...publicKeyRow(next, at), private_key_encrypted: sealed }, transition: t };
    });
    this.switchTo(next as SigningKey);
    return transition;
  }

  /** Follows a rotation made elsewhere: loads the store's active key (once, however many ask). */
  reload(): Promise<void> {
    this.reloading ??= (async () => {
      try {
        const row = await this.deps.signingKeys.active();
        if (!row || row.key_id === this.current.keyId) return;
        if (!row.private_key_encrypted) {
          throw new Error(`the active signing key ${row.key_id} came from a key file, not an online rotation: restart this process with that key file`);
        }
        this.switchTo(fromPrivate(createPrivateKey(this.deps.secretBox.open(row.private_key_encrypted)), Date.parse(row.active_from)));
      } finally {
        this.reloading = undefined;
      }
    })();
    return this.reloading;
  }

  /** The raw public key for key_id, from the store when this process has not seen it yet. */
  async publicKey(keyId: string): Promise<Uint8Array | undefined> {
    const cached = this.publics.get(keyId);
    if (cached) return cached;
    const row = (await this.deps.signingKeys.list()).find((k) => k.key_id === keyId);
    if (!row) return undefined;
    const key = rawKeyFromBase64(row.public_key);
    this.publics.set(keyId, key);
    return key;
  }
}
