// The service's Ed25519 signing keys. The first private key lives in a PEM file (PKCS#8):
// LEDGER_SIGNING_KEY_FILE, or signing-key.pem in the data dir, generated on first start
// with mode 0600; or in a PKCS#11 token (LEDGER_PKCS11_KEY_LABEL), which it never leaves.
// Keys made by online rotation (POST /api/v1/integrity/keys/rotate) are kept in the store, their
// private half sealed with the secrets key every process shares, or in the token, named in the
// store by label: so every process can switch to them. Public keys are recorded in the store,
// so every process and every verifier can check entries signed with any key, current or retired.
// Whatever holds a private key signs through its custody (crypto/custody.ts).
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ensurePrivateDir } from '../kernel/files.js';
import { type KeyTransition, rawKeyFromBase64, SIGNATURE_ALGORITHM, toBase64 } from '@audit-ledger/core';
import { keyIdOfKey, publicKeyFromRaw, rawPublicKey, signKeyTransition } from '../crypto/signing.js';
import { type KeyCustody, memoryCustody, Pkcs11Error } from '../crypto/custody.js';
import type { Pkcs11Token } from '../crypto/pkcs11.js';
import type { Config } from '../kernel/config.js';
import { DomainError } from '../kernel/domain-error.js';
import type { KeyStore, SigningKeyRow } from '../store/keys.js';
import type { SecretBox } from '../store/secret-box.js';
import { iso } from '../kernel/time.js';

export interface SigningKey {
  keyId: string;
  /** Where the private half is, and what signs with it. */
  custody: KeyCustody;
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

function fromPrivate(privateKey: KeyObject, activeFrom = Number.NEGATIVE_INFINITY, kind: 'file' | 'store' = 'file'): SigningKey {
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error(`the signing key must be Ed25519, not ${privateKey.asymmetricKeyType}`);
  const publicKey = createPublicKey(privateKey);
  return { keyId: keyIdOfKey(publicKey), custody: memoryCustody(privateKey, kind), publicKey, raw: rawPublicKey(publicKey), activeFrom };
}

function fromToken({ raw, custody }: { raw: Uint8Array; custody: KeyCustody }, activeFrom = Number.NEGATIVE_INFINITY): SigningKey {
  const publicKey = publicKeyFromRaw(raw);
  return { keyId: keyIdOfKey(publicKey), custody, publicKey, raw, activeFrom };
}

/** 'pkcs11:<label>' → the label. */
const TOKEN_REFERENCE = /^pkcs11:(.+)$/s;

/** A rotation the service cannot make as asked (409): the target key was used before, or its token cannot be reached. */
export class RotationTargetError extends DomainError<'rotation_target'> {
  constructor(detail: string) {
    super('rotation_target', detail, {});
  }
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
    custody: key.custody.reference ?? null,
  };
}

export interface KeyringDeps {
  config: Pick<Config, 'signingKeyFile' | 'dataDir' | 'pkcs11'>;
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
  /** The PKCS#11 token, opened when a key in it is first needed. */
  private token: Pkcs11Token | undefined;

  private constructor(private readonly deps: KeyringDeps) {}

  private async tokenOf(why: string): Promise<Pkcs11Token> {
    if (this.token) return this.token;
    const config = this.deps.config.pkcs11;
    if (!config) throw new Pkcs11Error(`${why}: set LEDGER_PKCS11_MODULE, LEDGER_PKCS11_TOKEN_LABEL and LEDGER_PKCS11_PIN_FILE to the token that holds it`);
    // The binding (pkcs11js, a native optional dependency) is loaded only by a service that uses a token.
    let module: typeof import('../crypto/pkcs11.js');
    try {
      module = await import('../crypto/pkcs11.js');
    } catch (err) {
      throw new Pkcs11Error(`PKCS#11: the pkcs11js binding is not installed or did not build (${(err as Error).message}); install it with npm install pkcs11js (it needs a C++ compiler)`);
    }
    this.token = module.Pkcs11Token.open(config);
    return this.token;
  }

  /** The key a store row names: sealed in the store, or in the token by label; undefined for a key file's key. */
  private async fromRow(row: SigningKeyRow): Promise<SigningKey | undefined> {
    const activeFrom = Date.parse(row.active_from);
    if (row.private_key_encrypted) return fromPrivate(createPrivateKey(this.deps.secretBox.open(row.private_key_encrypted)), activeFrom, 'store');
    const label = TOKEN_REFERENCE.exec(row.custody ?? '')?.[1];
    if (label === undefined) return undefined;
    const key = fromToken((await this.tokenOf(`the signing key ${row.key_id} is kept in a PKCS#11 token as "${label}"`)).key(label), activeFrom);
    if (key.keyId !== row.key_id) throw new Pkcs11Error(`PKCS#11: the token's key "${label}" is ${key.keyId}, not ${row.key_id} as the store records`);
    return key;
  }

  /** The key this process was configured to start with: the token's key of LEDGER_PKCS11_KEY_LABEL, or the key file. */
  private async configuredKey(): Promise<SigningKey> {
    const label = this.deps.config.pkcs11?.keyLabel;
    if (label !== undefined) return fromToken((await this.tokenOf('LEDGER_PKCS11_KEY_LABEL')).key(label));
    return loadOrCreateKeyFile(signingKeyPath(this.deps.config), this.deps.config.signingKeyFile === undefined);
  }

  /**
   * The active key: a rotated key from the store when there is one, else the key file (created
   * on first start at the default path); a key file that is new to the store becomes active.
   */
  static async open(deps: KeyringDeps): Promise<Keyring> {
    const ring = new Keyring(deps);
    try {
      ring.use(await ring.startingKey());
    } catch (err) {
      ring.close();
      throw err;
    }
    return ring;
  }

  private use(key: SigningKey): void {
    this.current = key;
    this.publics.set(key.keyId, key.raw);
  }

  private async startingKey(): Promise<SigningKey> {
    const { deps } = this;
    const now = deps.clock();
    const active = await deps.signingKeys.active();
    const rotated = active ? await this.fromRow(active) : undefined;
    if (rotated) return rotated;
    const key = await this.configuredKey();
    const where = key.custody.reference ?? `the signing key file ${signingKeyPath(deps.config)}`;
    const known = (await deps.signingKeys.list()).find((k) => k.key_id === key.keyId);
    if (!known) {
      await deps.signingKeys.register(publicKeyRow(key, iso(now)));
      await deps.signingKeys.retireAllExcept(key.keyId, iso(now));
    } else if (known.active_to !== null) {
      throw new Error(`${where} holds key ${key.keyId}, retired at ${known.active_to}; the active key is ${active?.key_id ?? 'none'}`);
    }
    return key;
  }

  /** Lets go of the token (if one was opened): its keys stop signing. */
  close(): void {
    this.token?.close();
    this.token = undefined;
  }

  private current!: SigningKey;

  get active(): SigningKey {
    return this.current;
  }

  /** Called with the new key whenever the active key changes in this process. */
  onSwitch(listener: (key: SigningKey) => void): void {
    this.listeners.push(listener);
  }

  private switchTo(key: SigningKey): void {
    this.use(key);
    for (const l of this.listeners) l(key);
  }

  /**
   * Makes a new key the active one for every process: the old key endorses it (crypto/signing.ts;
   * the core checks it). The transition's time is chosen inside the rotation's transaction, after
   * every append signed with the old key has committed, and later than all they dated (the
   * store's notBefore): so every old-key signature lies before it, and the new key dates nothing
   * earlier (activeFrom).
   */
  async rotate(to: { pkcs11KeyLabel?: string } = {}): Promise<KeyTransition> {
    const old = this.current;
    let make: (activeFrom: number) => SigningKey;
    let sealed: string | null = null;
    if (to.pkcs11KeyLabel !== undefined) {
      const label = to.pkcs11KeyLabel;
      let inToken: ReturnType<Pkcs11Token['key']>;
      try {
        const token = await this.tokenOf(`this service has no PKCS#11 token to rotate to key "${label}" in`);
        // A key already in the token is taken as it is; otherwise the token makes one (never extractable).
        inToken = token.has(label) ? token.key(label) : token.generate(label);
      } catch (err) {
        if (err instanceof Pkcs11Error) throw new RotationTargetError(err.message);
        throw err;
      }
      const known = (await this.deps.signingKeys.list()).find((k) => fromToken(inToken).keyId === k.key_id);
      if (known) throw new RotationTargetError(`the token's key "${label}" is ${known.key_id}, which this ledger has used before (active from ${known.active_from}): a key is active for one period only; rotate to a new label`);
      make = (activeFrom) => fromToken(inToken, activeFrom);
    } else {
      const { privateKey } = generateKeyPairSync('ed25519');
      sealed = this.deps.secretBox.seal(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
      make = (activeFrom) => fromPrivate(privateKey, activeFrom, 'store');
    }
    let next: SigningKey | undefined;
    const transition = await this.deps.signingKeys.rotate(old.keyId, (notBefore) => {
      const atMs = Math.max(this.deps.clock(), notBefore);
      const at = iso(atMs);
      next = make(atMs);
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
        const key = await this.fromRow(row);
        if (!key) throw new Error(`the active signing key ${row.key_id} came from a key file, not an online rotation: restart this process with that key file`);
        this.switchTo(key);
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
