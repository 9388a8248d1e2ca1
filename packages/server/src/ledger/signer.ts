// Entry signing off the request thread. Ed25519 costs ~23 µs a signature here, the
// largest single cost of an append, so groups of entries are signed in worker threads
// while the main thread goes on parsing and validating the next requests. Small groups
// are signed inline: a round trip to a worker costs more than a few signatures.
// A key that never leaves its PKCS#11 token cannot be given to a worker: its custody signs
// the group (crypto/pkcs11.ts spreads it over the token's sessions, off this thread).
// The same workers check agents' signatures of a large request (verifyMany): an Ed25519
// verification costs about three signatures.
import type { KeyObject } from 'node:crypto';
import type { Worker } from 'node:worker_threads';
import { entrySignatureMessage, toBase64, verifyEd25519 } from '@audit-ledger/core';
import type { KeyCustody } from '../crypto/custody.js';
import { signEntryHash } from '../crypto/signing.js';
import { startWorker } from '../kernel/threads.js';

/** A key and its id, as the signer needs it. */
export interface KeyForSigning {
  keyId: string;
  custody: KeyCustody;
}

/** A key a worker thread signs with: only one held in memory. */
export interface WorkerKey {
  keyId: string;
  privateKey: KeyObject;
}

export interface SignOptions {
  /** Which key signs (one added with addKey); the key the signer was made with by default. */
  keyId?: string;
  /**
   * Sign everything in the workers, however few: the calling thread has other work to do
   * meanwhile (the appender builds the next group while this one is signed).
   */
  offThread?: boolean;
}

/** One Ed25519 signature to check: the raw 32-byte key, the message, the 64-byte signature. */
export interface VerifyItem {
  key: Uint8Array;
  message: Uint8Array;
  signature: Uint8Array;
}

export interface Signer {
  signMany(hashes: string[], options?: SignOptions): Promise<string[]>;
  /** Whether each signature verifies, in order; a large list is shared with the workers. */
  verifyMany(items: VerifyItem[]): Promise<boolean[]>;
  /** Makes a key available (after a rotation); jobs sent after this may name it. */
  addKey(key: KeyForSigning): void;
  close(): Promise<void>;
}

/** Below this many hashes a group is signed inline. */
const MIN_FOR_WORKERS = 16;

/** What the calling thread sends a signing worker (signer-thread.ts): a key to add, or hashes to sign. */
export type SignerMessage = { add: WorkerKey } | { id: number; keyId: string; hashes: string[] } | { id: number; verify: VerifyItem[] };

interface Job {
  resolve(answer: unknown): void;
  reject(err: unknown): void;
}

const verifyOne = (v: VerifyItem): boolean => verifyEd25519(v.key, v.message, v.signature);

export class WorkerSigner implements Signer {
  /** Started on the first group signed off this thread (a process that never signs a large group starts none). */
  private workers: Worker[] = [];
  private started = false;
  private readonly jobs = new Map<number, Job & { worker: number }>();
  private nextId = 0;
  private closed = false;

  private readonly keys = new Map<string, KeyCustody>();
  private readonly firstKeyId: string;

  constructor(
    key: KeyForSigning,
    private readonly count: number,
  ) {
    this.keys.set(key.keyId, key.custody);
    this.firstKeyId = key.keyId;
  }

  /** The keys workers can hold: those in memory. */
  private workerKeys(): WorkerKey[] {
    return [...this.keys].flatMap(([keyId, c]) => (c.keyObject ? [{ keyId, privateKey: c.keyObject }] : []));
  }

  private ensureWorkers(): Worker[] {
    if (!this.started && !this.closed) {
      this.started = true;
      for (let i = 0; i < this.count; i++) this.workers.push(this.spawn(i));
    }
    return this.workers;
  }

  addKey(key: KeyForSigning): void {
    if (this.keys.has(key.keyId)) return;
    this.keys.set(key.keyId, key.custody);
    const privateKey = key.custody.keyObject;
    if (!privateKey) return;
    // Messages reach a worker in order: every job posted after this may use the key.
    for (const w of this.workers) w.postMessage({ add: { keyId: key.keyId, privateKey } } satisfies SignerMessage);
  }

  private spawn(index: number): Worker {
    const w = startWorker(import.meta.url, 'signer-thread', { workerData: { keys: this.workerKeys() } });
    // An idle worker does not keep the process alive; one with jobs does (see signMany), or a
    // process awaiting signatures with nothing else to do would exit before they come.
    w.unref();
    w.on('message', (m: { id: number; sigs?: string[]; oks?: boolean[] }) => {
      const job = this.jobs.get(m.id);
      this.jobs.delete(m.id);
      if (![...this.jobs.values()].some((j) => j.worker === index)) w.unref();
      job?.resolve(m.sigs ?? m.oks);
    });
    let failed = false;
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      // Never leave a caller waiting on a worker that is gone.
      for (const [id, job] of this.jobs) {
        if (job.worker !== index) continue;
        this.jobs.delete(id);
        job.reject(err);
      }
      // Replace a worker that died, unless we are shutting down.
      if (!this.closed) this.workers[index] = this.spawn(index);
    };
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`signing worker exited with code ${code}`)));
    return w;
  }

  async signMany(hashes: string[], options: SignOptions = {}): Promise<string[]> {
    if (hashes.length === 0) return [];
    const keyId = options.keyId ?? this.firstKeyId;
    const custody = this.keys.get(keyId);
    if (!custody) throw new Error(`the signer has no key ${keyId}`);
    const key = custody.keyObject;
    if (!key) return (await custody.signMany(hashes.map(entrySignatureMessage))).map(toBase64);
    const offThread = options.offThread === true && this.count > 0;
    if (!offThread && (hashes.length < MIN_FOR_WORKERS || this.count === 0)) return hashes.map((h) => signEntryHash(key, h));
    this.ensureWorkers();
    // Each worker takes an equal share, and so does this thread unless it has other work:
    // it signs its share while the workers sign theirs, instead of idling until they answer.
    const local = offThread ? 0 : 1;
    const per = Math.ceil(hashes.length / (this.workers.length + local));
    const remote = this.workers.map((w, index) => {
      const chunk = hashes.slice((index + local) * per, (index + local + 1) * per);
      return chunk.length === 0 ? Promise.resolve([] as string[]) : this.post<string[]>(w, index, (id) => ({ id, keyId, hashes: chunk }));
    });
    const mine = hashes.slice(0, local * per).map((h) => signEntryHash(key, h));
    return [mine, ...(await Promise.all(remote))].flat();
  }

  async verifyMany(items: VerifyItem[]): Promise<boolean[]> {
    if (items.length < MIN_FOR_WORKERS || this.count === 0) return items.map(verifyOne);
    this.ensureWorkers();
    // This thread checks a share too, while the workers check theirs.
    const per = Math.ceil(items.length / (this.workers.length + 1));
    const remote = this.workers.map((w, index) => {
      const chunk = items.slice((index + 1) * per, (index + 2) * per);
      return chunk.length === 0 ? Promise.resolve([] as boolean[]) : this.post<boolean[]>(w, index, (id) => ({ id, verify: chunk }));
    });
    const mine = items.slice(0, per).map(verifyOne);
    return [mine, ...(await Promise.all(remote))].flat();
  }

  /** Sends a job to worker `index` and resolves with its answer (a worker that dies rejects it). */
  private post<T>(w: Worker, index: number, message: (id: number) => SignerMessage): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const id = this.nextId++;
      this.jobs.set(id, { resolve: resolve as (answer: unknown) => void, reject, worker: index });
      w.ref();
      w.postMessage(message(id));
    });
  }

  /** Call after the Appender has drained: jobs still pending are rejected. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.workers.map((w) => w.terminate()));
    this.workers = [];
  }
}
