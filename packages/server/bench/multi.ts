// Many companies and several processes on one PostgreSQL: 100 companies ingest at once through
// 1, 2 and 4 service processes (each on its own port, as behind a load balancer), then every
// chain is checked gap-free and linked in SQL. And the noisy neighbour: one company's single
// events while another loads 1000-event batches on 4 connections.
import { type ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import pg from 'pg';
import { createUser } from '../src/users/accounts.js';
import { openPostgresStore } from '../src/store/postgres.js';

export interface MultiRow {
  processes: number;
  companies: number;
  eventsPerSecond: number;
  p99: number;
  non2xx: number;
  gapFree: boolean;
  linked: boolean;
}

export interface Neighbour {
  alone: { p50: number; p99: number; rps: number };
  besideBatches: { p50: number; p99: number; rps: number };
  batchEventsPerSecond: number;
}

export type Start = (env: Record<string, string>) => Promise<{ url: string; child: ChildProcess }>;

const PASSWORD = 'bench password 123';

/** Creates `n` companies, each with a user, and returns one API key per company (made through the API). */
export async function companies(dbUrl: string, url: string, n: number, prefix: string): Promise<Array<{ companyId: string; key: string }>> {
  const store = openPostgresStore(dbUrl);
  const out: Array<{ companyId: string; key: string }> = [];
  try {
    for (let i = 0; i < n; i++) {
      const email = `${prefix}-${i}@example.com`;
      const { company } = await createUser(store, { company: `${prefix}-${i}`, email, password: PASSWORD, role: 'admin' });
      const login = await post(`${url}/api/v1/auth/login`, { email, password: PASSWORD });
      const { key } = await post(`${url}/api/v1/auth/api_keys`, { name: 'bench', rate_limit_per_minute: 1_000_000 }, { authorization: `Bearer ${login.access_token as string}` });
      out.push({ companyId: company.company_id, key: key as string });
      if (i % 20 === 0) console.log(`  companies: ${i + 1} of ${n}`);
    }
  } finally {
    await store.close();
  }
  return out;
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

function run(url: string, connections: number, seconds: number, requests: Array<{ body: string; key: string }>) {
  return autocannon({
    url,
    connections,
    duration: seconds,
    requests: requests.map((r) => ({ method: 'POST' as const, body: r.body, headers: { 'content-type': 'application/json', 'x-api-key': r.key } })),
  });
}

/** Every company's chain: seqs 0…n−1 with none missing, each prev_hash the hash before it. */
async function chainsIntact(dbUrl: string, ids: string[]): Promise<{ gapFree: boolean; linked: boolean }> {
  const c = new pg.Client({ connectionString: dbUrl });
  await c.connect();
  try {
    const gaps = await c.query(
      'SELECT company_id FROM log_entries WHERE company_id = ANY($1) GROUP BY company_id HAVING count(*) <> max(seq) + 1 OR min(seq) <> 0',
      [ids],
    );
    const breaks = await c.query(
      `SELECT count(*)::int AS n FROM (SELECT prev_hash, lag(hash) OVER (PARTITION BY company_id ORDER BY seq) AS before, seq FROM log_entries WHERE company_id = ANY($1)) x WHERE seq > 0 AND prev_hash <> before`,
      [ids],
    );
    return { gapFree: gaps.rowCount === 0, linked: (breaks.rows[0] as { n: number }).n === 0 };
  } finally {
    await c.end();
  }
}

/** 100 companies (batches of 100 events) through `processes` service processes on one database. */
export async function manyCompanies(dbUrl: string, start: Start, processes: number, seconds: number, body: (n: number) => string): Promise<MultiRow> {
  // The first process migrates the new database; the others start on it.
  const services = [await start({ DATABASE_URL: dbUrl })];
  for (let i = 1; i < processes; i++) services.push(await start({ DATABASE_URL: dbUrl }));
  console.log(`  ${processes} process(es) up`);
  try {
    const urls = services.map((s) => s.url);
    const keys = await companies(dbUrl, urls[0] as string, 100, `multi-${processes}-${Date.now()}`);
    const batch = body(100);
    // The companies split between the processes, 8 connections per process.
    const results = await Promise.all(
      urls.map((u, p) => run(`${u}/api/v1/logs/batch`, 8, seconds, keys.filter((_, i) => i % processes === p).map((k) => ({ body: batch, key: k.key })))),
    );
    const total = results.reduce((s, r) => s + r.requests.average, 0) * 100;
    const chains = await chainsIntact(dbUrl, keys.map((k) => k.companyId));
    return {
      processes,
      companies: keys.length,
      eventsPerSecond: total,
      p99: Math.max(...results.map((r) => r.latency.p99)),
      non2xx: results.reduce((s, r) => s + r.non2xx + r.errors, 0),
      ...chains,
    };
  } finally {
    await Promise.all(services.map((s) => stopChild(s.child)));
  }
}

/** Company B's single events (4 connections) alone, then while company A loads 1000-event batches on 4 connections; one process. */
export async function noisyNeighbour(dbUrl: string, start: Start, seconds: number, single: string, batch1000: string): Promise<Neighbour> {
  const s = await start({ DATABASE_URL: dbUrl });
  try {
    const [a, b] = await companies(dbUrl, s.url, 2, `neighbour-${Date.now()}`);
    if (!a || !b) throw new Error('no companies');
    const alone = await run(`${s.url}/api/v1/logs`, 4, seconds, [{ body: single, key: b.key }]);
    const [batches, beside] = await Promise.all([
      run(`${s.url}/api/v1/logs/batch`, 4, seconds, [{ body: batch1000, key: a.key }]),
      run(`${s.url}/api/v1/logs`, 4, seconds, [{ body: single, key: b.key }]),
    ]);
    const view = (r: autocannon.Result) => ({ p50: r.latency.p50, p99: r.latency.p99, rps: r.requests.average });
    return { alone: view(alone), besideBatches: view(beside), batchEventsPerSecond: batches.requests.average * 1000 };
  } finally {
    await stopChild(s.child);
  }
}

export async function stopChild(child: ChildProcess): Promise<void> {
  child.removeAllListeners('exit');
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}
