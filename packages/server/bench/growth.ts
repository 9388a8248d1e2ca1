// Costs as one company's ledger grows: the service started on a ledger of a given size
// (the empty one, and the million-entry ledger the verification part built through the real
// appender), measured for ingestion, reads, proofs, trace search and bytes on disk per entry.
import fs from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { canonicalJson, recordToEntry } from '@audit-ledger/core';
import { openSqliteStore } from '../src/store/sqlite.js';
import { type ChildProcess } from 'node:child_process';

export interface GrowthRow {
  entries: number;
  batchEventsPerSecond: number;
  singleRps: number;
  singleP99: number;
  entryReadP99: number;
  inclusionProofP99: number;
  consistencyProofP99: number;
  traceSearchP99: number;
  bytesPerEntry: number;
  canonicalBytesPerEntry: number;
  /** From spawning `audit-ledger serve` to its "listening" line: the median of three starts on this ledger (for the empty one, the first creates the database). */
  startToReadyMs: number;
  /** On a large ledger: batch ingestion while a full verification runs, and that verification's time. */
  duringVerification?: { batchEventsPerSecond: number; verificationMs: number };
}

type Start = (env: Record<string, string>) => Promise<{ url: string; child: ChildProcess; readyMs: number }>;

async function stopChild(child: ChildProcess): Promise<void> {
  child.removeAllListeners('exit');
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** The median of three starts of the service on `dataDir`, each stopped once ready. */
export async function startToReady(start: Start, dataDir: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const { child, readyMs } = await start({ LEDGER_DATA_DIR: dataDir });
    times.push(readyMs);
    await stopChild(child);
  }
  return Math.round(times.sort((a, b) => a - b)[1] as number);
}

// One connection: the latency of a read, not of a queue of them on two shared cores.
const get = (url: string, key: string, seconds: number, paths: string[]) =>
  autocannon({ url, connections: 1, duration: seconds, requests: paths.map((p) => ({ method: 'GET' as const, path: p, headers: { 'x-api-key': key } })) });

/** Bytes of the SQLite files (database and WAL), and the mean canonical JSON size of a sample of entries. */
async function sizes(dataDir: string, companyId: string, entries: number): Promise<{ bytesPerEntry: number; canonicalBytesPerEntry: number }> {
  const file = path.join(dataDir, 'ledger.db');
  const bytes = ['', '-wal'].reduce((s, suffix) => s + (fs.existsSync(file + suffix) ? fs.statSync(file + suffix).size : 0), 0);
  const store = openSqliteStore(file);
  try {
    const rows = await store.db.selectFrom('log_entries').selectAll().where('company_id', '=', companyId).orderBy('seq', 'desc').limit(1000).execute();
    const canonical = rows.reduce((s, r) => s + Buffer.byteLength(canonicalJson(recordToEntry(r) as never)), 0) / Math.max(1, rows.length);
    return { bytesPerEntry: entries > 0 ? bytes / entries : 0, canonicalBytesPerEntry: canonical };
  } finally {
    await store.close();
  }
}

/**
 * Measures the service started on `dataDir` (a SQLite ledger whose company `email` logs in), after
 * it has `entries` entries: the reads first, on the ledger as it is, then the loads.
 */
export async function growthPoint(
  start: Start,
  dataDir: string,
  login: { email: string; password: string },
  seconds: number,
  bodies: { single: string[]; batch: string; traceId: string },
): Promise<GrowthRow> {
  const startToReadyMs = await startToReady(start, dataDir);
  const { url, child } = await start({ LEDGER_DATA_DIR: dataDir });
  try {
    const post = async (p: string, body: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(url + p, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`${p}: ${res.status} ${await res.text()}`);
      return (await res.json()) as Record<string, unknown>;
    };
    const { access_token } = await post('/api/v1/auth/login', login);
    const { key } = (await post('/api/v1/auth/api_keys', { name: 'growth', rate_limit_per_minute: 1_000_000 }, { authorization: `Bearer ${access_token as string}` })) as { key: string };
    const h = { 'x-api-key': key };
    // A few entries so even the empty ledger has something to read, prove and search.
    await post('/api/v1/logs/batch', JSON.parse(bodies.batch), h);
    await new Promise((r) => setTimeout(r, 1500)); // the next checkpoint covers them (CHECKPOINT_INTERVAL_MS 1000)
    const me = (await (await fetch(`${url}/api/v1/auth/me`, { headers: h })).json()) as { company_id?: string; company?: { company_id: string } };
    const companyId = me.company_id ?? me.company?.company_id ?? '';
    const cp = (await (await fetch(`${url}/api/v1/integrity/checkpoint`, { headers: h })).json()) as { tree_size: number };
    const size = cp.tree_size;
    // The index of words covers the ledger before anything is measured: a service on an existing
    // ledger has it, and this ledger was built without one (its indexer builds it after the start).
    for (let indexed = -1; indexed < size - 1; ) {
      const q = new URLSearchParams({ where: 'data.n = -1', limit: '1', wait_for_seq: String(size - 1) });
      indexed = ((await (await fetch(`${url}/api/v1/logs/search?${q}`, { headers: h })).json()) as { indexed_seq: number }).indexed_seq;
    }
    // Log ids spread over the whole ledger, read from the store itself.
    const store = openSqliteStore(path.join(dataDir, 'ledger.db'));
    const ids: string[] = [];
    for (let i = 0; i < 200; i++) {
      const seq = Math.floor((i / 200) * (size - 1));
      const row = await store.db.selectFrom('log_entries').select('log_id').where('company_id', '=', companyId).where('seq', '=', seq).executeTakeFirst();
      if (row) ids.push(row.log_id);
    }
    await store.close();
    const disk = await sizes(dataDir, companyId, size);
    const reads = await get(url, key, seconds, ids.map((id) => `/api/v1/logs/${id}`));
    const proofs = await get(url, key, seconds, ids.map((id) => `/api/v1/logs/${id}/proof`));
    const firsts = [1, Math.floor(size / 3), Math.floor(size / 2), size - 1].filter((n) => n > 0 && n < size);
    const consistency = await get(url, key, seconds, firsts.map((f) => `/api/v1/integrity/consistency?first=${f}&second=${size}`));
    const search = await get(url, key, seconds, [`/api/v1/logs?trace_id=${bodies.traceId}&limit=100`, `/api/v1/logs?event_type=tool.called&limit=100`]);
    const batch = await autocannon({ url: `${url}/api/v1/logs/batch`, connections: 4, duration: seconds, requests: [{ method: 'POST', body: bodies.batch, headers: { 'content-type': 'application/json', ...h } }] });
    const single = await autocannon({ url: `${url}/api/v1/logs`, connections: 64, duration: seconds, requests: bodies.single.map((b) => ({ method: 'POST' as const, body: b, headers: { 'content-type': 'application/json', ...h } })) });
    let duringVerification: GrowthRow['duringVerification'];
    if (size > 100_000) {
      // Ingestion while a full verification of the whole ledger runs (it keeps one core free while the service ingests).
      const job = await post('/api/v1/integrity/verify', {}, h);
      const loaded = await autocannon({ url: `${url}/api/v1/logs/batch`, connections: 4, duration: seconds, requests: [{ method: 'POST', body: bodies.batch, headers: { 'content-type': 'application/json', ...h } }] });
      let report: { duration_ms?: number } | undefined;
      while (!report) {
        const j = (await (await fetch(`${url}/api/v1/integrity/jobs/${job.job_id as string}`, { headers: h })).json()) as { status: string; report?: { duration_ms: number } };
        if (j.status === 'failed') throw new Error('the verification failed');
        if (j.status === 'completed') report = j.report;
        else await new Promise((r) => setTimeout(r, 200));
      }
      duringVerification = { batchEventsPerSecond: loaded.requests.average * 1000, verificationMs: report?.duration_ms ?? NaN };
    }
    const bad = [reads, proofs, consistency, search, batch, single].reduce((s, r) => s + r.non2xx + r.errors, 0);
    if (bad > 0) throw new Error(`growth at ${size}: ${bad} requests failed`);
    return {
      entries: size,
      batchEventsPerSecond: batch.requests.average * 1000,
      singleRps: single.requests.average,
      singleP99: single.latency.p99,
      entryReadP99: reads.latency.p99,
      inclusionProofP99: proofs.latency.p99,
      consistencyProofP99: consistency.latency.p99,
      traceSearchP99: search.latency.p99,
      ...disk,
      startToReadyMs,
      ...(duringVerification ? { duringVerification } : {}),
    };
  } finally {
    await stopChild(child);
  }
}
