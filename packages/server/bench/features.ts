// What each feature on the append path costs an event (issue 44, 2): a fresh SQLite service per
// row, the same loads on each (single events on 64 connections: the service's CPU per request;
// 1000-event batches on 4 connections: events/s), one after the other in one run. The base row
// has every optional feature off (SEARCH_INDEX=off, no stream, plain events); each other row turns
// one on, so its figures against the base's are that feature's cost on one machine state.
// Webhooks are not a row: no webhook fires per appended event (kernel/events.ts), only on a failed
// approval check, which the governance row includes. The continuity hold is one map lookup per
// append group and cannot be turned off; it is in the profile's commit stage.
import { generateKeyPairSync } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import type { JsonObject } from '@audit-ledger/core';
import { agentKeyRegistration, agentSigner, signAgentEvent } from '@audit-ledger/sdk';

export interface FeatureCost {
  feature: string;
  /** How the row turns the feature on. */
  how: string;
  /** Service CPU (all threads) per single-event request, µs. */
  singleCpuUs: number;
  batchEventsPerSecond: number;
  /** The search index's row: from an append's answer to its word being found (wait_for_seq), sampled under the batch load, ms. */
  freshnessLagMs?: { p50: number; p99: number; samples: number };
}

type Start = (env: Record<string, string>) => Promise<{ url: string; child: ChildProcess }>;
/** run.ts's load: what this part reads of it. */
type LoadFn = (url: string, body: string | string[], connections: number, headers: Record<string, string>, service?: ChildProcess) => Promise<{ rps: number; non2xx: number; serviceCpuUs?: number | undefined }>;
type EventOf = (i: number) => { event_type: string; data: Record<string, unknown>; [k: string]: unknown };

async function call(url: string, method: string, body: unknown, headers: Record<string, string>): Promise<Record<string, unknown>> {
  const res = await fetch(url, { method, headers: { 'content-type': 'application/json', ...headers }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

interface Setup {
  url: string;
  admin: Record<string, string>;
  companyId: string;
}

/** The events a row sends: single-event bodies and one 1000-event batch body. */
type Bodies = (s: Setup) => Promise<{ single: string[]; batch: string }>;

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] as number;

/**
 * The search index's freshness under load: every 100 ms until `done`, one event with a word of
 * its own is appended, and from its answer (committed) the time until a search for the word
 * finds it (`wait_for_seq` = its seq, so the search answers as soon as the index holds it; a
 * search that comes back without it counts as the 10 s it waited).
 */
async function freshness(url: string, agent: Record<string, string>, done: () => boolean): Promise<number[]> {
  const lags: number[] = [];
  for (let i = 0; !done(); i++) {
    const word = `fresh${i}z${Math.floor(Math.random() * 1e9)}`;
    const { seq } = (await call(`${url}/api/v1/logs`, 'POST', { event_type: 'bench.marker', data: { text: word } }, agent)) as { seq: number };
    const acked = performance.now();
    const found = (await call(`${url}/api/v1/logs/search?${new URLSearchParams({ q: word, wait_for_seq: String(seq), limit: '1' })}`, 'GET', undefined, agent)) as { items: unknown[] };
    lags.push(found.items.length === 1 ? performance.now() - acked : 10_000);
    await new Promise((r) => setTimeout(r, 100));
  }
  return lags;
}

async function measure(start: Start, load: LoadFn, stop: (c: ChildProcess) => Promise<void>, dataDir: string, feature: string, how: string, env: Record<string, string>, bodies: Bodies, sampleFreshness = false): Promise<FeatureCost> {
  const { url, child } = await start({ LEDGER_DATA_DIR: dataDir, ...env });
  try {
    const { access_token } = (await call(`${url}/api/v1/auth/login`, 'POST', { email: 'bench@example.com', password: 'bench password 123' }, {})) as { access_token: string };
    const admin = { authorization: `Bearer ${access_token}` };
    const { key } = (await call(`${url}/api/v1/auth/api_keys`, 'POST', { name: 'bench', rate_limit_per_minute: 1_000_000 }, admin)) as { key: string };
    const me = (await call(`${url}/api/v1/auth/me`, 'GET', undefined, admin)) as { company_id?: string; company?: { id?: string } };
    const { single, batch } = await bodies({ url, admin, companyId: String(me.company?.id ?? me.company_id) });
    const agent = { 'x-api-key': key };
    for (let i = 0; i < 5; i++) await call(`${url}/api/v1/logs/batch`, 'POST', JSON.parse(batch), agent); // warm-up: every route compiled, caches filled
    const s = await load(`${url}/api/v1/logs`, single, 64, agent, child);
    let loaded = false;
    const sampling = sampleFreshness ? freshness(url, agent, () => loaded) : Promise.resolve([]);
    const b = await load(`${url}/api/v1/logs/batch`, batch, 4, agent, child).finally(() => (loaded = true));
    const lags = await sampling;
    if (s.non2xx + b.non2xx > 0) throw new Error(`features bench, ${feature}: ${s.non2xx + b.non2xx} answers were not 2xx`);
    const freshnessLagMs = lags.length > 0 ? { p50: pct(lags, 50), p99: pct(lags, 99), samples: lags.length } : undefined;
    console.log(`  features: ${feature}: ${Math.round(s.serviceCpuUs ?? NaN)} µs per single event, ${Math.round(b.rps * 1000)} events/s in batches${freshnessLagMs ? `, searchable ${freshnessLagMs.p50.toFixed(0)} ms after the answer (p50), ${freshnessLagMs.p99.toFixed(0)} ms (p99, ${lags.length} samples)` : ''}`);
    return { feature, how, singleCpuUs: s.serviceCpuUs ?? NaN, batchEventsPerSecond: b.rps * 1000, ...(freshnessLagMs ? { freshnessLagMs } : {}) };
  } finally {
    await stop(child);
  }
}

export async function featureCosts(start: Start, load: LoadFn, stop: (c: ChildProcess) => Promise<void>, dir: (name: string) => string, eventOf: EventOf): Promise<FeatureCost[]> {
  const plain: Bodies = async () => ({ single: Array.from({ length: 8 }, (_, i) => JSON.stringify(eventOf(i))), batch: JSON.stringify({ logs: Array.from({ length: 1000 }, (_, i) => eventOf(i)) }) });
  const off = { SEARCH_INDEX: 'off' };
  const rows: FeatureCost[] = [];
  const row = async (feature: string, how: string, env: Record<string, string>, bodies: Bodies, sampleFreshness = false) => rows.push(await measure(start, load, stop, dir(feature.replace(/\W+/g, '-')), feature, how, env, bodies, sampleFreshness));

  await row('none (base)', 'SEARCH_INDEX=off, no stream, plain events', off, plain);
  await row('search index', 'SEARCH_INDEX=on (the default): words indexed after the commit', {}, plain, true);
  await row('three log streams', 'three active directory streams (ledger, OCSF, CEF)', off, async ({ url, admin }) => {
    for (const format of ['ledger', 'ocsf', 'cef']) await call(`${url}/api/v1/streams`, 'POST', { name: `bench-${format}`, destination: { type: 'directory', folder: `bench-${format}` }, format, start: 'now' }, admin);
    return plain({ url, admin, companyId: '' });
  });
  await row('approval check', 'every event an execution naming a standing approval (its approval.checked entry appended beside it)', off, async ({ url, admin }) => {
    const standing = await call(`${url}/api/v1/approvals/standing`, 'POST', { action: 'bench.run', valid_until: new Date(Date.now() + 3_600_000).toISOString(), max_uses: 1_000_000, reason: 'bench' }, admin);
    const exec = (i: number) => ({ event_type: 'action.executed', source: 'bench-agent', data: { action: 'bench.run', approval_id: standing.id, arguments: { i, query: 'q'.repeat(300) } } });
    return { single: Array.from({ length: 8 }, (_, i) => JSON.stringify(exec(i))), batch: JSON.stringify({ logs: Array.from({ length: 1000 }, (_, i) => exec(i)) }) };
  });
  await row('agent signatures', "every event signed by its agent (the agent's registered key looked up and the signature checked)", off, async ({ url, admin, companyId }) => {
    const signer = await agentSigner('bench-agent', generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
    await call(`${url}/api/v1/agent-keys`, 'POST', await agentKeyRegistration(signer, companyId), admin);
    const signed = await Promise.all(Array.from({ length: 1000 }, (_, i) => signAgentEvent({ ...eventOf(i), agent_id: 'bench-agent', data: eventOf(i).data as JsonObject }, signer)));
    return { single: signed.slice(0, 8).map((e) => JSON.stringify(e)), batch: JSON.stringify({ logs: signed }) };
  });
  return rows;
}

export function featuresLine(rows: FeatureCost[]): string {
  const [base] = rows;
  if (!base) return '';
  const lag = (r: FeatureCost) => (r.freshnessLagMs ? ` (searchable after ${r.freshnessLagMs.p50.toFixed(0)} ms p50, ${r.freshnessLagMs.p99.toFixed(0)} ms p99)` : '');
  return rows.map((r) => (r === base ? `${r.feature}: ${Math.round(r.singleCpuUs)} µs, ${Math.round(r.batchEventsPerSecond)} ev/s` : `${r.feature}: +${Math.round(r.singleCpuUs - base.singleCpuUs)} µs, ${(r.batchEventsPerSecond / base.batchEventsPerSecond).toFixed(2)}×${lag(r)}`)).join('; ');
}
