// Bench parts for the verifiable log: a full verification of a large SQLite ledger, and
// the memory a streamed export takes.
import { type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createUser } from '../src/users/accounts.js';
import { loadConfig } from '../src/kernel/config.js';
import { Appender } from '../src/ledger/appender.js';
import { CheckpointSigner } from '../src/ledger/checkpoints.js';
import { prepareEvent } from '../src/ingestion/input.js';
import type { PreparedEvent } from '../src/ledger/appender/types.js';
import { Keyring } from '../src/ledger/keyring.js';
import { openSecretBox } from '../src/store/secret-box.js';
import { WorkerSigner } from '../src/ledger/signer.js';
import type { CompletedVerificationReport } from '../src/kernel/shapes.js';
import { IntegrityVerifier } from '../src/integrity/verifier.js';
import { openSqliteStore } from '../src/store/sqlite.js';
import type { Store } from '../src/store/store.js';
import { scratchDir } from './scratch.js';

export interface VerifyResult {
  entries: number;
  buildSeconds: number;
  report: CompletedVerificationReport;
  /** The same ledger with every entry signature checked too. */
  signed: CompletedVerificationReport;
  /** The ledger's data directory and its user, for the growth part. */
  dataDir: string;
  login: { email: string; password: string };
}

/**
 * Builds one company's n-entry ledger in a migrated store through the real appender (10,000 per
 * group), ending with a checkpoint; answers the company and the seconds it took.
 */
export async function buildLedger(store: Store, dataDir: string, n: number, event: (i: number) => unknown, label: string, email: string): Promise<{ companyId: string; buildSeconds: number }> {
  const config = { ...loadConfig({ LOG_LEVEL: 'silent' }), dataDir };
  const { company } = await createUser(store, { company: 'bench', email, password: 'bench password 123', role: 'admin' });
  const keyring = await Keyring.open({ config, signingKeys: store.signingKeys, secretBox: openSecretBox(config), clock: Date.now });
  const signer = new WorkerSigner(keyring.active, config.signingWorkers);
  const appender = new Appender({ store, keyring, signer, clock: Date.now, checkpoints: new CheckpointSigner(config.ledgerOrigin), checkpointIntervalMs: 1000 });
  try {
    const started = performance.now();
    const GROUP = 10_000;
    for (let i = 0; i < n; i += GROUP) {
      const events = Array.from({ length: Math.min(GROUP, n - i) }, (_, j) => prepareEvent(event(i + j) as never, '/body') as PreparedEvent);
      await appender.append(company.company_id, events);
      if ((i / GROUP) % 20 === 0) process.stdout.write(`\r  ${label}: built ${i + GROUP} of ${n} entries`);
    }
    await appender.checkpoint(company.company_id);
    process.stdout.write('\n');
    return { companyId: company.company_id, buildSeconds: (performance.now() - started) / 1000 };
  } finally {
    await appender.close();
    await signer.close();
  }
}

/** The service's verifier over a store (VERIFY_WORKERS scan threads opening `scan`), and how to run one full verification of a company with it. */
export function benchVerifier(store: Store, scan: { databaseUrl: string | undefined; dataDir: string }) {
  const config = loadConfig({ LOG_LEVEL: 'silent' });
  const verifier = new IntegrityVerifier({ ledger: store.ledger, integrityStore: store.integrityStore, signingKeys: store.signingKeys, ledgerOrigin: config.ledgerOrigin, intervalSeconds: 0, clock: Date.now, logError: (o, m) => console.error(m, o), scanWorkers: { count: config.verifyWorkers, store: scan } });
  return {
    run: async (companyId: string, entrySignatures: boolean): Promise<CompletedVerificationReport> => {
      const job = await verifier.requestFull(companyId, { entry_signatures: entrySignatures });
      for (;;) {
        const j = await store.integrityStore.getJob(companyId, job.job_id);
        if (j?.report) return JSON.parse(j.report) as CompletedVerificationReport;
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    close: () => verifier.close(),
  };
}

/** Builds an n-entry SQLite ledger through the real appender, then runs a full verification, plain and with entry signatures. */
export async function fullVerification(n: number, event: (i: number) => unknown): Promise<VerifyResult> {
  const dir = scratchDir('al-bench-verify-');
  const store = openSqliteStore(path.join(dir, 'ledger.db'));
  await store.migrate();
  try {
    const { companyId, buildSeconds } = await buildLedger(store, dir, n, event, 'verify', 'verify@example.com');
    const verifier = benchVerifier(store, { databaseUrl: undefined, dataDir: dir });
    const report = await verifier.run(companyId, false);
    // BENCH_VERIFY_SIGNED=0 skips the run with entry signatures (a 10M-entry growth run would spend 20 minutes on it).
    const signed = process.env.BENCH_VERIFY_SIGNED === '0' ? report : await verifier.run(companyId, true);
    await verifier.close();
    return { entries: n, buildSeconds, report, signed, dataDir: dir, login: { email: 'verify@example.com', password: 'bench password 123' } };
  } finally {
    await store.close();
  }
}

/** Peak resident memory of a process so far (VmHWM), in MiB; Linux only. */
export function peakRssMiB(child: ChildProcess): number {
  const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}

export interface ExportResult {
  entries: number;
  megabytes: number;
  seconds: number;
  peakBeforeMiB: number;
  peakAfterMiB: number;
}

/** Streams a whole export from a running service, counting lines; records the service's peak memory before and after. */
export async function exportMemory(url: string, key: string, child: ChildProcess): Promise<ExportResult> {
  const peakBeforeMiB = peakRssMiB(child);
  const started = performance.now();
  const res = await fetch(`${url}/api/v1/exports/logs?format=jsonl`, { headers: { 'x-api-key': key } });
  if (!res.ok || !res.body) throw new Error(`export: ${res.status}`);
  let bytes = 0;
  let lines = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    for (const b of chunk) if (b === 10) lines++;
  }
  return { entries: lines, megabytes: bytes / 2 ** 20, seconds: (performance.now() - started) / 1000, peakBeforeMiB, peakAfterMiB: peakRssMiB(child) };
}
