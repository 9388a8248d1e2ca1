// Worker threads for a full verification (scan-worker.ts): each reads and scans whole segments
// of the ledger, so a job uses every core it is given, reading ahead of the join.
import { Worker } from 'node:worker_threads';
import type { SegmentResult } from '@audit-ledger/core';
import type { Config } from '../config.js';

export interface ScanWorkerData {
  /** Where the workers open the store (what openStore takes). */
  store: Pick<Config, 'databaseUrl' | 'dataDir'>;
  companyId: string;
  keyName: string;
  publicKeys: Array<[string, Uint8Array]>;
  entrySignatures: boolean;
}

export interface SegmentRequest {
  id: number;
  from: number;
  to: number;
}

type Reply = { id: number; result: SegmentResult } | { id: number; error: string };

/**
 * The worker's module. Under the test runner this module is the TypeScript source; the worker
 * then runs the build of it (`npm test` builds first), as a worker thread cannot load TypeScript.
 */
function workerUrl(): URL {
  const here = import.meta.url;
  return here.endsWith('.ts') ? new URL(here.replace(/\/src\/integrity\/scan-pool\.ts$/, '/dist/src/integrity/scan-worker.js')) : new URL('./scan-worker.js', here);
}

/** The parent's flags without the condition that picks the workspace's TypeScript sources (set by the test runner). */
function buildConditions(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if ((a === '-C' || a === '--conditions') && argv[i + 1] === SOURCE_CONDITION) i++;
    else if (a !== `--conditions=${SOURCE_CONDITION}` && a !== `-C=${SOURCE_CONDITION}`) out.push(a);
  }
  return out;
}

const SOURCE_CONDITION = '@audit-ledger/source';

export class ScanPool {
  private readonly workers: Worker[];
  private readonly pending = new Map<number, { resolve(r: SegmentResult): void; reject(e: Error): void }>();
  private readonly load: number[];
  private nextId = 0;

  constructor(count: number, data: ScanWorkerData) {
    this.workers = Array.from({ length: count }, () => this.spawn(data));
    this.load = this.workers.map(() => 0);
  }

  get size(): number {
    return this.workers.length;
  }

  private spawn(data: ScanWorkerData): Worker {
    const w = new Worker(workerUrl(), { workerData: data, execArgv: buildConditions(process.execArgv) });
    w.on('message', (m: Reply) => {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      const i = this.workers.indexOf(w);
      this.load[i] = (this.load[i] ?? 1) - 1;
      if ('error' in m) p?.reject(new Error(m.error));
      else p?.resolve(m.result);
    });
    w.on('error', (err) => this.failAll(err));
    return w;
  }

  private failAll(err: Error): void {
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  /** Reads and scans seqs [from, to) on the least busy worker. */
  segment(from: number, to: number): Promise<SegmentResult> {
    const i = this.load.indexOf(Math.min(...this.load));
    this.load[i] = (this.load[i] ?? 0) + 1;
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      (this.workers[i] as Worker).postMessage({ id, from, to } satisfies SegmentRequest);
    });
  }

  /** Lets each worker close its store, then ends it. */
  async close(): Promise<void> {
    await Promise.all(
      this.workers.map(async (w) => {
        const exited = new Promise((r) => w.once('exit', r));
        w.postMessage('close');
        const timer = setTimeout(() => void w.terminate(), 5000);
        await exited;
        clearTimeout(timer);
      }),
    );
    this.failAll(new Error('the scan pool is closed'));
  }
}
