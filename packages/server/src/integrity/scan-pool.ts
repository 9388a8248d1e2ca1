// Worker threads for a full verification (scan-worker.ts): each reads and scans whole segments
// of the ledger, so a job uses every core it is given, reading ahead of the join.
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../kernel/threads.js';
import type { KeyPeriod, SegmentResult } from '@audit-ledger/core';
import type { Config } from '../kernel/config.js';

export interface ScanWorkerData {
  /** Where the workers open the store (what openStore takes). */
  store: Pick<Config, 'databaseUrl' | 'dataDir'>;
  companyId: string;
  keyName: string;
  publicKeys: Array<[string, Uint8Array]>;
  keyPeriods: Array<[string, KeyPeriod]>;
  entrySignatures: boolean;
}

export interface SegmentRequest {
  id: number;
  from: number;
  to: number;
}

type Reply = { id: number; result: SegmentResult } | { id: number; error: string };

export class ScanPool {
  private readonly workers: Array<{ worker: Worker; exited: Promise<void>; load: number }>;
  private readonly pending = new Map<number, { resolve(r: SegmentResult): void; reject(e: Error): void }>();
  private nextId = 0;
  private closing = false;

  constructor(count: number, data: ScanWorkerData) {
    this.workers = Array.from({ length: count }, () => this.spawn(data));
  }

  private spawn(data: ScanWorkerData): { worker: Worker; exited: Promise<void>; load: number } {
    const worker = startWorker(import.meta.url, 'scan-worker', { workerData: data });
    const slot = { worker, load: 0, exited: new Promise<void>((r) => worker.once('exit', () => r())) };
    worker.on('message', (m: Reply) => {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      slot.load--;
      if ('error' in m) p?.reject(new Error(m.error));
      else p?.resolve(m.result);
    });
    worker.on('error', (err) => this.failAll(err));
    // A worker gone before close() leaves its segments unanswered: the job fails instead of waiting.
    void slot.exited.then(() => {
      if (!this.closing) this.failAll(new Error('a scan worker exited'));
    });
    return slot;
  }

  private failAll(err: Error): void {
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  /** Reads and scans seqs [from, to) on the least busy worker. */
  segment(from: number, to: number): Promise<SegmentResult> {
    const slot = this.workers.reduce((a, b) => (b.load < a.load ? b : a));
    slot.load++;
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      slot.worker.postMessage({ id, from, to } satisfies SegmentRequest);
    });
  }

  /** Lets each worker close its store, then ends it (at the latest after 5 s; at once if it is already gone). */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(
      this.workers.map(async ({ worker, exited }) => {
        worker.postMessage('close');
        const timer = setTimeout(() => void worker.terminate(), 5000);
        await exited;
        clearTimeout(timer);
      }),
    );
    this.failAll(new Error('the scan pool is closed'));
  }
}
