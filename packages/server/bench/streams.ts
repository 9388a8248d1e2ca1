// What log streams cost ingestion (issue 31: "ingestion with three active streams within 10% of
// none"): one SQLite service takes 1000-event batches on 4 connections with no stream, then with
// three active streams (directory segments in the ledger's JSON, OCSF and CEF, so the whole cost
// is the service's: planning, proofs, rendering, fsync), then with them paused; the figure is the
// second load against the mean of the other two. Then the streams are resumed and the time they
// take to deliver the backlog is measured.
import type { ChildProcess } from 'node:child_process';

export interface StreamsRow {
  /** Batch ingestion, events/s: no stream (before and after), three active streams. */
  none: number;
  three: number;
  /** three / none. */
  ratio: number;
  /** Entries the three streams delivered during their load, and the backlog's size and catch-up after it. */
  deliveredDuringLoad: number;
  backlogEntries: number;
  catchUpSeconds: number;
}

type Start = (env: Record<string, string>) => Promise<{ url: string; child: ChildProcess }>;
/** run.ts's load: autocannon on the URL, answering requests per second. */
type LoadFn = (url: string, body: string, connections: number, headers: Record<string, string>) => Promise<{ rps: number }>;

async function call(url: string, method: string, body: unknown, headers: Record<string, string>): Promise<Record<string, unknown>> {
  const res = await fetch(url, { method, headers: { 'content-type': 'application/json', ...headers }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

export async function streamsOverhead(start: Start, dataDir: string, batchBody: string, load: LoadFn, stop: (c: ChildProcess) => Promise<void>): Promise<StreamsRow> {
  const { url, child } = await start({ LEDGER_DATA_DIR: dataDir });
  try {
    const { access_token } = (await call(`${url}/api/v1/auth/login`, 'POST', { email: 'bench@example.com', password: 'bench password 123' }, {})) as { access_token: string };
    const admin = { authorization: `Bearer ${access_token}` };
    const { key } = (await call(`${url}/api/v1/auth/api_keys`, 'POST', { name: 'bench', rate_limit_per_minute: 1_000_000 }, admin)) as { key: string };
    const agent = { 'x-api-key': key };
    const batch = async () => (await load(`${url}/api/v1/logs/batch`, batchBody, 4, agent)).rps * 1000;
    await load(`${url}/api/v1/logs/batch`, batchBody, 4, agent); // warm-up
    console.log('  streams: no stream');
    const before = await batch();
    const ids: string[] = [];
    for (const format of ['ledger', 'ocsf', 'cef']) ids.push((await call(`${url}/api/v1/streams`, 'POST', { name: `bench-${format}`, destination: { type: 'directory', folder: `bench-${format}` }, format, start: 'now' }, admin)).id as string);
    const delivered = async () => (await Promise.all(ids.map(async (id) => (await call(`${url}/api/v1/streams/${id}`, 'GET', undefined, admin)) as { delivered_entries: number; lag: { entries: number } })));
    console.log('  streams: three active streams');
    const three = await batch();
    for (const id of ids) await call(`${url}/api/v1/streams/${id}/pause`, 'POST', undefined, admin);
    const during = await delivered();
    console.log('  streams: paused');
    const after = await batch();
    const backlog = (await delivered()).reduce((n, s) => n + s.lag.entries, 0);
    const t0 = performance.now();
    for (const id of ids) await call(`${url}/api/v1/streams/${id}/resume`, 'POST', undefined, admin);
    for (;;) {
      const now = await delivered();
      if (now.every((s) => s.lag.entries === 0)) break;
      if (performance.now() - t0 > 600_000) throw new Error(`streams did not catch up in 600 s: ${JSON.stringify(now.map((s) => s.lag))}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const none = (before + after) / 2;
    return { none, three, ratio: three / none, deliveredDuringLoad: during.reduce((n, s) => n + s.delivered_entries, 0), backlogEntries: backlog, catchUpSeconds: (performance.now() - t0) / 1000 };
  } finally {
    await stop(child);
  }
}

export function streamsLine(r: StreamsRow): string {
  const f = (n: number) => Math.round(n).toLocaleString('en-US');
  return `batch ingestion ${f(r.none)} ev/s with no stream, ${f(r.three)} ev/s with three active streams (${(r.ratio * 100).toFixed(1)}%); the streams delivered ${f(r.deliveredDuringLoad)} entries during that load, then a backlog of ${f(r.backlogEntries)} entries in ${r.catchUpSeconds.toFixed(1)} s`;
}
