// SQLite appends on a writer thread. better-sqlite3 is synchronous: on the request thread,
// every group's inserts and its commit's fsync would stop request handling (a third of
// its time under batch load). The writer thread has its own connection to the same file
// (WAL, synchronous=FULL), takes one message per group, checks the head, writes, commits
// and answers (sqlite-writer-thread.ts); the request thread meanwhile parses, hashes and signs
// the next groups.
import type { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';
import { startWorker } from '../kernel/threads.js';
import { type ChainWrite, type ChainWriter, type EntrySigningKey, HeadMovedError, KeyRetiredError, type LogEntryRow } from './chain.js';
import { APPEND_SQL, checkpointValues, entryValues, type GroupValues } from './sqlite-append.js';

/** What crosses to the writer: a group's values (sqlite-append.ts) and the head it was built on. */
export interface WriteMessage extends GroupValues {
  expect: { lastSeq: number; lastHash: string };
}

/** A message to the writer: the writes that queued, a key to sign with, or the order to close. */
export type WriterMessage = WriteMessage[] | EntrySigningKey | 'close';

/** The writer's answer for each write of a message: committed ({}), head moved, signed with a retired key, or failed. */
export type WriteResult = { moved?: true; retired?: string; error?: { message: string; code?: string } };

interface Queued {
  message: WriteMessage;
  resolve(): void;
  reject(err: unknown): void;
}

export class SqliteChainWriter implements ChainWriter {
  private worker: Worker | undefined;
  /** Writes waiting for the writer to finish its current message. */
  private queued: Queued[] = [];
  /** The writes of the message the writer is working on. */
  private sent: Queued[] | undefined;
  private closing = false;
  private byIdempotency: SQLite.Statement<[string, string], LogEntryRow> | undefined;
  /** Keys the writer signs unsigned rows with (given to each writer thread it starts). */
  private readonly keys = new Map<string, EntrySigningKey>();

  constructor(
    private readonly file: string,
    /** The store's own connection, for reads. */
    private readonly database: SQLite.Database,
  ) {}

  // Started on the first write, so the migrations (run on the store's connection) come first.
  private start(): Worker {
    const w = startWorker(import.meta.url, 'sqlite-writer-thread', { workerData: { file: this.file, keys: [...this.keys.values()] } });
    // Idle, the writer does not keep the process alive; with writes in hand it does (flush),
    // or a process awaiting a commit with nothing else to do would exit before it comes.
    w.unref();
    w.on('message', (results: WriteResult[]) => {
      const sent = this.sent ?? [];
      this.sent = undefined;
      sent.forEach((q, i) => {
        const r = results[i] as WriteResult;
        if (r.moved) q.reject(new HeadMovedError(q.message.companyId));
        else if (r.retired) q.reject(new KeyRetiredError(r.retired));
        else if (r.error) q.reject(Object.assign(new Error(`SQLite writer: ${r.error.message}`), { code: r.error.code }));
        else q.resolve();
      });
      this.flush();
      if (!this.sent) w.unref();
    });
    const fail = (err: unknown) => {
      // Never leave an append waiting on a writer that is gone; the next write starts a new one.
      if (this.worker === w) this.worker = undefined;
      const sent = this.sent ?? [];
      this.sent = undefined;
      for (const q of sent) q.reject(err);
      this.flush();
    };
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`SQLite writer thread exited with code ${code}`)));
    return w;
  }

  /** Sends everything queued as one message, unless the writer is still busy with the last. */
  private flush(): void {
    if (this.sent || this.queued.length === 0 || this.closing) return;
    this.worker ??= this.start();
    this.sent = this.queued;
    this.queued = [];
    this.worker.ref();
    this.worker.postMessage(this.sent.map((q) => q.message) satisfies WriterMessage);
  }

  write(w: ChainWrite): Promise<void> {
    return new Promise((resolve, reject) => {
      const message: WriteMessage = {
        companyId: w.companyId,
        expect: { lastSeq: w.expect.lastSeq, lastHash: w.expect.lastHash },
        rows: w.rows.map(entryValues),
        head: w.head,
        treeIndexes: w.treeIndexes,
        treeHashes: w.treeHashes,
        checkpoint: w.checkpoint ? checkpointValues(w.checkpoint) : null,
      };
      this.queued.push({ message, resolve, reject });
      this.flush();
    });
  }

  signUnsignedWith(key: EntrySigningKey): void {
    this.keys.set(key.keyId, key);
    this.worker?.postMessage(key satisfies WriterMessage);
  }

  async findByIdempotencyKeys(companyId: string, keys: string[]): Promise<LogEntryRow[]> {
    if (keys.length === 0) return [];
    this.byIdempotency ??= this.database.prepare(APPEND_SQL.byIdempotency);
    return this.byIdempotency.all(companyId, JSON.stringify(keys));
  }

  /** Call once nothing is being appended: the writer finishes what it was sent, then closes its connection. */
  async close(): Promise<void> {
    const w = this.worker;
    if (!w) return;
    if (this.sent) await new Promise<void>((r) => w.once('message', () => r()));
    this.closing = true;
    this.worker = undefined;
    const exited = new Promise((r) => w.once('exit', r));
    w.ref(); // until it has closed its connection
    w.postMessage('close' satisfies WriterMessage);
    await exited;
  }
}
