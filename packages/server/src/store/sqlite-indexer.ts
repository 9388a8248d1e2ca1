// The SQLite search index, kept after the commit by a thread of its own (sqlite-indexer-thread.ts)
// in a file of its own (sqlite-search-file.ts), so an append never waits for FTS5's tokenizing and
// never shares a write lock with it (issue 44). The request thread only asks how far it got: the
// position is a rowid of log_entries, so a company's indexed seq is its last entry at or below it.
import type { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';
import { startWorker } from '../kernel/threads.js';
import type { SearchIndex } from './search-index.js';
import type { IndexerAnswer, IndexerMessage } from './sqlite-indexer-thread.js';
import { forgetInFile, prepareSearchFile, purgeInFile, removeSearchFile, searchFileOf } from './sqlite-search-file.js';

/** The most entries the indexer reads and writes in one transaction. */
const BATCH = 5000;
/**
 * How long the indexer lets new entries gather once it has caught up, in milliseconds. FTS5's
 * cost per entry falls with the entries per transaction (a segment per commit, merged later):
 * 9.6 µs of CPU at 250 to a transaction, 8.2 at 750, 5.2 at 2,000 (docs/performance.md, "Search").
 * A search that waits for a seq (wait_for_seq) asks for a batch at once.
 */
const POLL_MS = 250;

export class SqliteSearchIndex implements SearchIndex {
  private worker: Worker | undefined;
  private position = 0;
  private waiters: Array<{ rowid: number; done: () => void }> = [];
  /** Forget and purge requests sent to the thread, by id, until it answers. */
  private asked = new Map<number, { resolve(): void; reject(err: unknown): void }>();
  private nextId = 0;
  private lastError: string | undefined;
  private closed: Promise<void> | undefined;
  private headOf: SQLite.Statement<[string], { last_seq: number }> | undefined;
  private rowidOf: SQLite.Statement<[string, number], { r: number }> | undefined;

  constructor(
    private readonly ledgerFile: string,
    /** The store's own connection to the ledger, for the small reads of the request thread. */
    private readonly database: SQLite.Database,
    /** The search thread, told when the index file is made anew or removed. */
    private readonly reader: { reopen(): Promise<void> },
  ) {}

  /** The index file, for the search reader to attach. */
  get file(): string {
    return searchFileOf(this.ledgerFile);
  }

  get running(): boolean {
    return this.worker !== undefined;
  }

  async start(): Promise<{ rebuilt: boolean }> {
    if (this.worker) return { rebuilt: false };
    this.closed = undefined;
    const { rebuilt, position } = prepareSearchFile(this.ledgerFile, this.database);
    await this.reader.reopen();
    this.position = position;
    const w = startWorker(import.meta.url, 'sqlite-indexer-thread', { workerData: { ledgerFile: this.ledgerFile, indexFile: this.file, batch: BATCH, pollMs: POLL_MS } });
    w.unref();
    w.on('message', (m: IndexerAnswer) => this.answer(m));
    w.on('error', (err) => {
      this.lastError = err.message;
      this.worker = undefined;
      for (const f of this.asked.values()) f.reject(err);
      this.asked.clear();
      // A thread that died is started again (from the position it committed), unless the index was closed.
      if (this.closed === undefined) setTimeout(() => void (this.closed === undefined && !this.worker ? this.start().catch((e: Error) => (this.lastError = e.message)) : undefined), 1000).unref();
    });
    this.worker = w;
    return { rebuilt };
  }

  /** SEARCH_INDEX=off: no index, and none of its words left on disk. */
  async remove(): Promise<boolean> {
    await this.close();
    const removed = removeSearchFile(this.ledgerFile);
    await this.reader.reopen();
    return removed;
  }

  private answer(m: IndexerAnswer): void {
    if (m.kind === 'progress') {
      this.position = m.position;
      this.lastError = undefined;
      const due = this.waiters.filter((w) => w.rowid <= m.position);
      this.waiters = this.waiters.filter((w) => w.rowid > m.position);
      for (const w of due) w.done();
    } else if (m.kind === 'forgotten') {
      const f = this.asked.get(m.id);
      this.asked.delete(m.id);
      if (m.error !== undefined) f?.reject(new Error(`search index: ${m.error}`));
      else f?.resolve();
    } else if (m.kind === 'error') this.lastError = m.message;
  }

  /**
   * The company's last seq at or below the position. A company's entries are appended in seq
   * order, so their rowids grow with seq: a binary search over seq (a point read each, some 20
   * for a million entries) finds it however far the index is behind, where walking the entries
   * down from the newest would read every one it has not reached yet.
   */
  async indexedSeq(companyId: string): Promise<number> {
    this.rowidOf ??= this.database.prepare('SELECT rowid AS r FROM log_entries WHERE company_id = ? AND seq = ?');
    this.headOf ??= this.database.prepare('SELECT last_seq FROM chain_heads WHERE company_id = ?');
    const at = (seq: number) => this.rowidOf?.get(companyId, seq)?.r;
    const head = this.headOf.get(companyId)?.last_seq ?? -1;
    if (head < 0) return -1;
    const top = at(head);
    if (top !== undefined && top <= this.position) return head;
    let lo = -1;
    let hi = head;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      const r = at(mid);
      if (r !== undefined && r <= this.position) lo = mid;
      else hi = mid;
    }
    return lo;
  }

  async waitFor(companyId: string, seq: number, timeoutMs: number): Promise<number> {
    this.rowidOf ??= this.database.prepare('SELECT rowid AS r FROM log_entries WHERE company_id = ? AND seq = ?');
    const row = this.rowidOf.get(companyId, seq);
    if (row && row.r > this.position && this.worker) {
      await new Promise<void>((resolve) => {
        const waiter = { rowid: row.r, done: () => (clearTimeout(timer), resolve()) };
        const timer = setTimeout(() => {
          this.waiters = this.waiters.filter((w) => w !== waiter);
          resolve();
        }, timeoutMs);
        this.waiters.push(waiter);
        this.worker?.ref();
        this.post({ kind: 'kick' });
      });
      this.idle();
    }
    return this.indexedSeq(companyId);
  }

  async forget(companyId: string, logIds: string[]): Promise<void> {
    if (logIds.length === 0) return;
    // No thread (it failed, or the store is closing): the file is changed here, as the thread would.
    if (!this.worker) return forgetInFile(this.ledgerFile, this.database, companyId, logIds);
    await this.ask((id) => ({ kind: 'forget', id, companyId, logIds }));
  }

  async purge(): Promise<void> {
    if (!this.worker) return purgeInFile(this.ledgerFile);
    await this.ask((id) => ({ kind: 'purge', id }));
  }

  /** Sends a message the thread answers ('forgotten' with its id), and waits for the answer. */
  private async ask(message: (id: number) => IndexerMessage): Promise<void> {
    const id = ++this.nextId;
    try {
      await new Promise<void>((resolve, reject) => {
        this.asked.set(id, { resolve, reject });
        this.worker?.ref();
        this.post(message(id));
      });
    } finally {
      this.idle();
    }
  }

  /** Idle, the thread does not keep the process alive; with an answer awaited it does (or a process with nothing else to do would exit first). */
  private idle(): void {
    if (this.asked.size === 0 && this.waiters.length === 0) this.worker?.unref();
  }

  /** Why the indexer's last batch failed, while it fails (health). */
  get problem(): string | undefined {
    return this.lastError;
  }

  private post(m: IndexerMessage): void {
    this.worker?.postMessage(m);
  }

  close(): Promise<void> {
    this.closed ??= (async () => {
      const w = this.worker;
      this.worker = undefined;
      for (const waiter of this.waiters.splice(0)) waiter.done();
      if (!w) return;
      w.ref();
      await new Promise<void>((resolve) => {
        w.on('message', (m: IndexerAnswer) => {
          if (m.kind === 'closed') resolve();
        });
        w.once('exit', () => resolve());
        w.postMessage({ kind: 'close' } satisfies IndexerMessage);
      });
      await w.terminate();
    })();
    return this.closed;
  }
}
