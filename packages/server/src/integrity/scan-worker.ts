// A scan worker thread (scan-pool.ts): opens its own connection to the store, and for each
// segment it is sent reads the segment and scans it (core's scanSegment), so reading, hashing
// and signature checks run on every core while the verifier's thread joins the results.
import { parentPort, workerData } from 'node:worker_threads';
import { scanSegment } from '@audit-ledger/core';
import { openStore } from '../store/open.js';
import { readScanPage } from './scan-pages.js';
import type { ScanWorkerData, SegmentRequest } from './scan-pool.js';

const data = workerData as ScanWorkerData;
const store = openStore(data.store);
const options = { keyName: data.keyName, publicKeys: new Map(data.publicKeys), keyPeriods: new Map(data.keyPeriods), entrySignatures: data.entrySignatures };

parentPort?.on('message', (m: SegmentRequest | 'close') => {
  if (m === 'close') {
    void store.close().finally(() => parentPort?.close());
    return;
  }
  readScanPage(store, data.companyId, m.from, m.to, true)
    .then(({ page, previousHash }) => parentPort?.postMessage({ id: m.id, result: scanSegment(page, previousHash, options) }))
    .catch((err: unknown) => parentPort?.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) }));
});
