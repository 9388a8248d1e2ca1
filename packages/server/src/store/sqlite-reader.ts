// Searches inside events on SQLite, off the request thread and within a time budget (issue 42,
// 20). better-sqlite3 is synchronous: a `where` search with no match scans every entry of the
// company (measured from outside: 3.6 s over 63k entries cold) and, run on the request thread,
// stopped every tenant's requests, /health/live included. Here it runs on a thread of its own
// (sqlite-reader-thread.ts), one search at a time in arrival order; a search still running after
// SEARCH_BUDGET_MS ends the thread (SQLite cannot be interrupted from outside the thread) and is
// answered 422 search_too_slow, the next search starting a new one. PostgreSQL runs queries on
// its own server connections, never on the request thread, under the same budget as a
// statement_timeout (ledger.ts).
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../kernel/threads.js';
import { SearchTooSlowError } from '../kernel/domain-error.js';

/** How long one search may run. */
export const SEARCH_BUDGET_MS = 10_000;

interface Job {
  sql: string;
  parameters: readonly unknown[];
  resolve(rows: unknown[]): void;
  reject(err: unknown): void;
}

export class SqliteSearchReader {
  private worker: Worker | undefined;
  private readonly queue: Job[] = [];
  private running: Job | undefined;
  /** The index file changed under the thread: end it once its search is answered. */
  private stale = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly file: string,
    /** The search index's file (sqlite-search-file.ts), attached as `idx` when it exists. */
    private readonly indexFile: string,
    private readonly budgetMs = SEARCH_BUDGET_MS,
  ) {}

  /** The index file was made anew or removed: the next search opens a thread that attaches what is there now. */
  async reopen(): Promise<void> {
    // A search under way finishes on the thread it started on; the thread ends after it.
    if (this.running) this.stale = true;
    else await this.retire();
  }

  private async retire(): Promise<void> {
    this.stale = false;
    const w = this.worker;
    this.worker = undefined;
    await w?.terminate();
  }

  query(sql: string, parameters: readonly unknown[]): Promise<unknown[]> {
    return new Promise((resolve, reject) => {
      this.queue.push({ sql, parameters, resolve, reject });
      this.next();
    });
  }

  private start(): Worker {
    const w = startWorker(import.meta.url, 'sqlite-reader-thread', { workerData: { file: this.file, indexFile: this.indexFile } });
    w.unref();
    w.on('message', (m: { rows?: unknown[]; error?: string }) => this.settle((job) => (m.error !== undefined ? job.reject(new Error(`SQLite search: ${m.error}`)) : job.resolve(m.rows ?? []))));
    w.on('error', (err) => this.settle((job) => job.reject(err)));
    return w;
  }

  private settle(finish: (job: Job) => void): void {
    clearTimeout(this.timer);
    const job = this.running;
    this.running = undefined;
    if (job) finish(job);
    if (this.stale) void this.retire();
    this.next();
  }

  private next(): void {
    if (this.running) return;
    const job = this.queue.shift();
    if (!job) return;
    this.running = job;
    this.worker ??= this.start();
    this.worker.ref();
    this.timer = setTimeout(() => {
      // Past its budget: end the thread (the next search starts a new one).
      const w = this.worker;
      this.worker = undefined;
      void w?.terminate();
      this.settle((j) => j.reject(new SearchTooSlowError(this.budgetMs)));
    }, this.budgetMs);
    this.worker.postMessage({ sql: job.sql, parameters: job.parameters });
    if (this.queue.length === 0) this.worker.once('message', () => this.worker?.unref());
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    for (const job of this.queue.splice(0)) job.reject(new Error('the store is closing'));
    const w = this.worker;
    this.worker = undefined;
    await w?.terminate();
  }
}
