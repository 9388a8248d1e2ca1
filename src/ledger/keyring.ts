// The service's Ed25519 signing keys. The private key lives in a PEM file (PKCS#8):
// LEDGER_SIGNING_KEY_FILE, or signing-key.pem in the data dir, generated on first start
// with mode 0600. Public keys are recorded in the store, so every process and every
// verifier can check entries signed with any key, current or retired.
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { keyIdOf, publicKeyFromRaw, rawPublicKey, SIGNATURE_ALGORITHM } from '../core/signature.js';
import type { Config } from '../config.js';
import type { SigningKeyRow, Store } from '../store/store.js';
import { iso } from '../time.js';

export interface SigningKey {
  keyId: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

export function signingKeyPath(config: Pick<Config, 'signingKeyFile' | 'dataDir'>): string {
  return config.signingKeyFile ?? path.join(config.dataDir, 'signing-key.pem');
}

function fromPrivate(privateKey: KeyObject): SigningKey {
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error(`the signing key must be Ed25519, not ${privateKey.asymmetricKeyType}`);
  const publicKey = createPublicKey(privateKey);
  return { keyId: keyIdOf(publicKey), privateKey, publicKey };
}

/** Reads the key file; creates it (0600) when it is the default path and missing. */
export function loadOrCreateKeyFile(file: string, mayCreate: boolean): SigningKey {
  if (!fs.existsSync(file)) {
    if (!mayCreate) throw new Error(`signing key file ${file} does not exist`);
    const { privateKey } = generateKeyPairSync('ed25519');
    fs.mkdirSync(path.dirname(file), { recursive: true });
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
    public_key: rawPublicKey(key.publicKey).toString('base64'),
    active_from: activeFrom,
    active_to: null,
  };
}

export class Keyring {
  private readonly publics = new Map<string, KeyObject>();

  private constructor(
    readonly active: SigningKey,
    private readonly store: Store,
  ) {
    this.publics.set(active.keyId, active.publicKey);
  }

  /** Loads this process's signing key and records its public half (making it the active key if it is new). */
  static async open(config: Pick<Config, 'signingKeyFile' | 'dataDir'>, store: Store, now: number): Promise<Keyring> {
    const key = loadOrCreateKeyFile(signingKeyPath(config), config.signingKeyFile === undefined);
    const known = (await store.listSigningKeys()).some((k) => k.key_id === key.keyId);
    if (!known) {
      await store.registerSigningKey(publicKeyRow(key, iso(now)));
      await store.retireSigningKeysExcept(key.keyId, iso(now));
    }
    return new Keyring(key, store);
  }

  /** The public key for key_id, from the store when this process has not seen it yet. */
  async publicKey(keyId: string): Promise<KeyObject | undefined> {
    const cached = this.publics.get(keyId);
    if (cached) return cached;
    const row = (await this.store.listSigningKeys()).find((k) => k.key_id === keyId);
    if (!row) return undefined;
    const key = publicKeyFromRaw(Buffer.from(row.public_key, 'base64'));
    this.publics.set(keyId, key);
    return key;
  }
}

/** `audit-ledger keys rotate`: a new key file replaces the old (kept beside it) and becomes active. */
export async function rotateSigningKey(config: Pick<Config, 'signingKeyFile' | 'dataDir'>, store: Store, now: number): Promise<{ old: string | undefined; current: string }> {
  const file = signingKeyPath(config);
  let old: string | undefined;
  if (fs.existsSync(file)) {
    old = fromPrivate(createPrivateKey(fs.readFileSync(file))).keyId;
    fs.renameSync(file, `${file}.retired-${old}`);
  }
  const key = loadOrCreateKeyFile(file, true);
  await store.registerSigningKey(publicKeyRow(key, iso(now)));
  await store.retireSigningKeysExcept(key.keyId, iso(now));
  return { old, current: key.keyId };
}
