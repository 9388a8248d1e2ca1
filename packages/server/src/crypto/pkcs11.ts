// Ed25519 keys that never leave a PKCS#11 token or HSM (docs/transparency.md, "Key custody"):
// the token signs with CKM_EDDSA; this process holds only handles and the public key.
//
// One token per process (LEDGER_PKCS11_*), opened once and logged in once. A key's sign() runs
// on a session of its own on the calling thread (C_Sign is a local call: about 100 µs with
// SoftHSM2); signMany() spreads a batch over a pool of sessions whose C_Sign runs in libuv's
// thread pool, so a large batch neither blocks this thread nor waits on one session. A session
// runs one operation at a time, so each pooled session takes its jobs in turn.
import pkcs11js from 'pkcs11js';
import type { Pkcs11Config } from '../kernel/config.js';
import { type KeyCustody, Pkcs11Error } from './custody.js';

/** PKCS#11 3.0 numbers pkcs11js (written for 2.40) has no names for. */
const CKK_EC_EDWARDS = 0x40;
const CKM_EC_EDWARDS_KEY_PAIR_GEN = 0x1055;
const CKM_EDDSA = 0x1057;
/** CKA_EC_PARAMS of Ed25519: the curve name as a DER PrintableString ("edwards25519"), as PKCS#11 3.0 §2.3.10 allows and tokens accept. */
const EDWARDS25519_PARAMS = Buffer.concat([Buffer.from([0x13, 12]), Buffer.from('edwards25519', 'ascii')]);
/** Below this many messages a batch is signed on the calling thread: a hop to the thread pool costs more. */
const POOL_FROM = 4;

type Handle = Buffer;

/** The 32-byte public key from CKA_EC_POINT: a DER OCTET STRING (04 20 …), or the raw bytes some tokens give. */
export function ecPointToRaw(point: Buffer): Uint8Array {
  if (point.length === 34 && point[0] === 0x04 && point[1] === 0x20) return new Uint8Array(point.subarray(2));
  if (point.length === 32) return new Uint8Array(point);
  throw new Pkcs11Error(`CKA_EC_POINT is not an Ed25519 public key (${point.length} bytes)`);
}

function why(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A session that takes one operation at a time, in the order asked. */
class PooledSession {
  private tail: Promise<unknown> = Promise.resolve();
  constructor(
    private readonly lib: pkcs11js.PKCS11,
    readonly handle: Handle,
  ) {}

  signAll(key: Handle, messages: Uint8Array[]): Promise<Uint8Array[]> {
    const run = this.tail.then(async () => {
      const out: Uint8Array[] = [];
      for (const m of messages) {
        this.lib.C_SignInit(this.handle, { mechanism: CKM_EDDSA }, key);
        out.push(new Uint8Array(await this.lib.C_SignAsync(this.handle, Buffer.from(m), Buffer.alloc(64))));
      }
      return out;
    });
    this.tail = run.catch(() => undefined);
    return run;
  }
}

/**
 * A module is initialized once per process (a second C_Initialize is refused), so a process
 * running several services (the tests) shares it, and each token; the last user finalizes it.
 */
class Library {
  private static readonly loaded = new Map<string, Library>();
  private users = 0;

  private constructor(
    readonly lib: pkcs11js.PKCS11,
    private readonly path: string,
  ) {}

  static acquire(modulePath: string): Library {
    let library = Library.loaded.get(modulePath);
    if (!library) {
      const lib = new pkcs11js.PKCS11();
      try {
        lib.load(modulePath);
      } catch (err) {
        throw new Pkcs11Error(`PKCS#11: cannot load the module ${modulePath} (LEDGER_PKCS11_MODULE): ${why(err)}`);
      }
      try {
        // OS locking: the pooled sessions are used from libuv's threads.
        lib.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK });
      } catch (err) {
        lib.close();
        throw new Pkcs11Error(`PKCS#11: cannot initialize the module ${modulePath}: ${why(err)}`);
      }
      library = new Library(lib, modulePath);
      Library.loaded.set(modulePath, library);
    }
    library.users++;
    return library;
  }

  release(): void {
    if (--this.users > 0) return;
    Library.loaded.delete(this.path);
    try {
      this.lib.C_Finalize();
    } finally {
      this.lib.close();
    }
  }
}

export class Pkcs11Token {
  private static readonly opened = new Map<string, Pkcs11Token>();
  private readonly pool: PooledSession[];
  private closed = false;
  private users = 1;
  private openKey = '';

  private readonly lib: pkcs11js.PKCS11;

  private constructor(
    private readonly library: Library,
    private readonly session: Handle,
    private readonly pooled: Handle[],
    readonly label: string,
  ) {
    this.lib = library.lib;
    this.pool = pooled.map((h) => new PooledSession(this.lib, h));
  }

  /** Loads the module, finds the token by label, opens sessions and logs in with the PIN. */
  static open(config: Pick<Pkcs11Config, 'module' | 'tokenLabel' | 'pin'>, poolSize = 2): Pkcs11Token {
    const openKey = `${config.module}\n${config.tokenLabel}`;
    const shared = Pkcs11Token.opened.get(openKey);
    if (shared) {
      shared.users++;
      return shared;
    }
    const token = Pkcs11Token.load(config, poolSize);
    token.openKey = openKey;
    Pkcs11Token.opened.set(openKey, token);
    return token;
  }

  private static load(config: Pick<Pkcs11Config, 'module' | 'tokenLabel' | 'pin'>, poolSize: number): Pkcs11Token {
    const library = Library.acquire(config.module);
    const { lib } = library;
    const sessions: Handle[] = [];
    try {
      const slots = lib.C_GetSlotList(true);
      const slot = slots.find((s) => lib.C_GetTokenInfo(s).label.trim() === config.tokenLabel);
      if (!slot) {
        const labels = slots.map((s) => `"${lib.C_GetTokenInfo(s).label.trim()}"`).join(', ') || 'none';
        throw new Pkcs11Error(`PKCS#11: no token labelled "${config.tokenLabel}" (LEDGER_PKCS11_TOKEN_LABEL); the module's tokens: ${labels}`);
      }
      const flags = pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION;
      for (let i = 0; i <= poolSize; i++) sessions.push(lib.C_OpenSession(slot, flags));
      try {
        lib.C_Login(sessions[0] as Handle, pkcs11js.CKU_USER, config.pin);
      } catch (err) {
        throw new Pkcs11Error(`PKCS#11: cannot log in to token "${config.tokenLabel}" with the PIN given (LEDGER_PKCS11_PIN_FILE or LEDGER_PKCS11_PIN): ${why(err)}`);
      }
      return new Pkcs11Token(library, sessions[0] as Handle, sessions.slice(1), config.tokenLabel);
    } catch (err) {
      for (const s of sessions) lib.C_CloseSession(s);
      library.release();
      throw err instanceof Pkcs11Error ? err : new Pkcs11Error(`PKCS#11: ${why(err)}`);
    }
  }

  private find(cls: number, label: string): Handle[] {
    this.lib.C_FindObjectsInit(this.session, [
      { type: pkcs11js.CKA_CLASS, value: cls },
      { type: pkcs11js.CKA_KEY_TYPE, value: CKK_EC_EDWARDS },
      { type: pkcs11js.CKA_LABEL, value: label },
    ]);
    try {
      return this.lib.C_FindObjects(this.session, 2);
    } finally {
      this.lib.C_FindObjectsFinal(this.session);
    }
  }

  /** Whether the token has an Ed25519 key pair of this label. */
  has(label: string): boolean {
    return this.find(pkcs11js.CKO_PRIVATE_KEY, label).length > 0;
  }

  /** The token's Ed25519 key pair of this label: its raw public key and a custody that signs with it. */
  key(label: string): { raw: Uint8Array; custody: KeyCustody } {
    const privates = this.find(pkcs11js.CKO_PRIVATE_KEY, label);
    const publics = this.find(pkcs11js.CKO_PUBLIC_KEY, label);
    if (privates.length !== 1 || publics.length !== 1) {
      const found = privates.length === 0 || publics.length === 0 ? 'has no' : 'has more than one';
      throw new Pkcs11Error(`PKCS#11: token "${this.label}" ${found} Ed25519 key pair labelled "${label}" (a private and a public key object of that CKA_LABEL)`);
    }
    const [point] = this.lib.C_GetAttributeValue(this.session, publics[0] as Handle, [{ type: pkcs11js.CKA_EC_POINT }]);
    const raw = ecPointToRaw(point?.value as Buffer);
    const handle = privates[0] as Handle;
    const custody: KeyCustody = {
      kind: 'pkcs11',
      reference: `pkcs11:${label}`,
      sign: (message) => {
        this.lib.C_SignInit(this.session, { mechanism: CKM_EDDSA }, handle);
        return new Uint8Array(this.lib.C_Sign(this.session, Buffer.from(message), Buffer.alloc(64)));
      },
      signMany: async (messages) => {
        if (messages.length < POOL_FROM) return messages.map((m) => custody.sign(m));
        const per = Math.ceil(messages.length / this.pool.length);
        const parts = this.pool.map((s, i) => s.signAll(handle, messages.slice(i * per, (i + 1) * per)));
        return (await Promise.all(parts)).flat();
      },
      ready: () => this.ready(),
    };
    return { raw, custody };
  }

  /**
   * Makes a new Ed25519 key pair inside the token (CKM_EC_EDWARDS_KEY_PAIR_GEN): the private key
   * is sensitive and not extractable, so it can sign but never be read out. Refuses a label in use.
   */
  generate(label: string): { raw: Uint8Array; custody: KeyCustody } {
    if (this.find(pkcs11js.CKO_PRIVATE_KEY, label).length > 0 || this.find(pkcs11js.CKO_PUBLIC_KEY, label).length > 0) {
      throw new Pkcs11Error(`PKCS#11: token "${this.label}" already has a key labelled "${label}"`);
    }
    const common = [
      { type: pkcs11js.CKA_TOKEN, value: true },
      { type: pkcs11js.CKA_LABEL, value: label },
    ];
    this.lib.C_GenerateKeyPair(
      this.session,
      { mechanism: CKM_EC_EDWARDS_KEY_PAIR_GEN },
      [...common, { type: pkcs11js.CKA_EC_PARAMS, value: EDWARDS25519_PARAMS }, { type: pkcs11js.CKA_VERIFY, value: true }],
      [...common, { type: pkcs11js.CKA_PRIVATE, value: true }, { type: pkcs11js.CKA_SENSITIVE, value: true }, { type: pkcs11js.CKA_EXTRACTABLE, value: false }, { type: pkcs11js.CKA_SIGN, value: true }],
    );
    return this.key(label);
  }

  /** Whether the main session still answers (health). */
  ready(): boolean {
    if (this.closed) return false;
    try {
      this.lib.C_GetSessionInfo(this.session);
      return true;
    } catch {
      return false;
    }
  }

  /** Logs out and unloads the module; keys taken from this token stop signing. */
  close(): void {
    if (this.closed || --this.users > 0) return;
    this.closed = true;
    Pkcs11Token.opened.delete(this.openKey);
    try {
      this.lib.C_Logout(this.session);
      for (const s of [this.session, ...this.pooled]) this.lib.C_CloseSession(s);
    } catch {
      // the token went away: releasing the module is all that is left
    }
    this.library.release();
  }
}
