// `npm run bench`: ingestion throughput over real HTTP (autocannon) on SQLite and PostgreSQL,
// with the ceilings measured in the same run on the same machine. Prints a table and writes
// docs/performance.md. Needs the local PostgreSQL (BENCH_DATABASE_URL, default the test server).
import { type ChildProcess, execSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import autocannon from 'autocannon';
import pg from 'pg';
import { openSqliteStore } from '../src/store/sqlite.js';
import { LOG_ENTRY_COLUMNS } from '../src/store/columns.js';
import { uuidv7 } from '../src/ledger/uuidv7.js';
import { exportMemory, fullVerification } from './integrity.js';
import { consoleBudgets, consoleLine } from './console.js';
import { forensicsOnLongTrace } from './forensics.js';
import { atEnd, cleanUp, scratchDir } from './scratch.js';
import { parserCost, parserLine } from './parser.js';
import { Command } from 'commander';
import { compareFigures, readFigures, saveFigures } from './compare.js';
import { growthPoint, startToReady } from './growth.js';
import { manyCompanies, noisyNeighbour } from './multi.js';
import { citusLine, citusPart as runCitusPart } from './citus.js';
import { stagesOf } from './profile-stages.js';
import { searchBench, searchLine } from './search.js';
import { otlpLine, otlpMappingCost } from './otlp.js';
import { streamsLine, streamsOverhead } from './streams.js';
import { custodyCosts, custodyLine } from './custody.js';
import { featureCosts, featuresLine } from './features.js';
import { body as sizedBody, ed25519Rates, ingestionBySize, sizesLine } from './sizes.js';
import { type BenchResults, benchFigures, forensicsLine, type Load, performanceDoc, readExisting } from './report.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const DOCS = path.join(ROOT, '..', '..', 'docs');
const CLI = path.join(ROOT, 'dist', 'src', 'cli.js');
const PG_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const BATCH = 1000;
const VERIFY_ENTRIES = Number(process.env.BENCH_VERIFY_ENTRIES ?? 1_000_000);
/**
 * BENCH_ONLY=parser runs only the body parser's cost. BENCH_ONLY=console runs only the console's budgets (needs the built console and Chromium). BENCH_ONLY=integrity runs only the verification and export parts; BENCH_ONLY=sqlite or postgres
 * only that store's ingestion. Neither rewrites docs/performance.md.
 */
const ONLY = process.env.BENCH_ONLY;
// BENCH_ONLY=otlp: the OTLP mapping's CPU per span (bench/otlp.ts).
// BENCH_ONLY=streams: batch ingestion with and without three active log streams (bench/streams.ts).
// BENCH_ONLY=sizes: batch ingestion of small, usual and 4 KB events, and one core's Ed25519 rates (bench/sizes.ts).
// BENCH_ONLY=citus: 100 companies on plain PostgreSQL against a Citus cluster of the bench's own, and a 1M-entry ledger verified, distributed in place and moved (bench/citus.ts).
// BENCH_ONLY=custody: signing with a PKCS#11 token's key against a key in memory, ingestion with each, and with agent-signed events (bench/custody.ts).
// BENCH_ONLY=search: the search index's write cost and query p50/p99 on BENCH_SEARCH_ENTRIES (1,000,000) entries, SQLite then PostgreSQL (bench/search.ts).

// The workload: ~500-byte events of agent traces. A trace (one agent run) has many events,
// so a batch of 1000 carries 20 traces of 50 events, and single-event requests cycle
// through 8 traces. (A new trace_id on every event is the worst case for the trace index;
// docs/performance.md gives that figure too.)
const TRACES = Array.from({ length: 20 }, () => randomUUID());
function event(i: number, trace = TRACES[Math.floor(i / 50) % TRACES.length] as string) {
  return { event_type: 'tool.called', source: 'bench-agent', trace_id: trace, data: { tool: 'search', query: 'q'.repeat(330), k: 5, user: `u-${i}`, ok: true } };
}
const SINGLE_BODIES = TRACES.slice(0, 8).map((trace, i) => JSON.stringify(event(i, trace)));
const BATCH_BODY = JSON.stringify({ logs: Array.from({ length: BATCH }, (_, i) => event(i)) });
const manyBody = (n: number) => JSON.stringify({ logs: Array.from({ length: n }, (_, i) => event(i)) });

/** Starts a program and answers once it logs `ready`, with how long that took from the spawn (start to ready). */
function startChild(args: string[], env: Record<string, string>, ready: string): Promise<{ url: string; child: ChildProcess; readyMs: number }> {
  const spawned = performance.now();
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}`)));
    const lines = readline.createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.on('line', (line) => {
      try {
        const l = JSON.parse(line) as { msg?: string; url?: string };
        if (l.msg === ready && l.url) {
          // From here on the service's log lines (one per request) are written and dropped
          // unread: parsing them would take CPU from the load generator on the same cores.
          lines.close();
          child.stdout?.resume();
          resolve({ url: l.url, child, readyMs: performance.now() - spawned });
        }
      } catch {
        // not JSON
      }
    });
  });
}

async function stop(child: ChildProcess): Promise<void> {
  child.removeAllListeners('exit');
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

async function json(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}


const CLOCK_TICKS = Number(execSync('getconf CLK_TCK').toString().trim()) || 100;

/** CPU seconds (user + system) a process (every thread) or, given its tid, one of its threads has used, from /proc. */
function cpuSecondsOf(pid: number, tid?: number): number {
  const stat = fs.readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

async function load(url: string, body: string | string[], connections: number, headers: Record<string, string>, service?: ChildProcess): Promise<Load> {
  const bodies = Array.isArray(body) ? body : [body];
  const pid = service?.pid;
  // The main thread's tid is the pid.
  const before = pid ? { all: cpuSecondsOf(pid), main: cpuSecondsOf(pid, pid) } : undefined;
  const loadBefore = process.cpuUsage();
  const r = await autocannon({
    url,
    connections,
    duration: DURATION,
    requests: bodies.map((b) => ({ method: 'POST' as const, body: b, headers: { 'content-type': 'application/json', ...headers } })),
  });
  const loadCpu = process.cpuUsage(loadBefore);
  const requests = Math.max(1, r.requests.total);
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors,
    serviceCpuUs: pid && before ? ((cpuSecondsOf(pid) - before.all) * 1e6) / requests : undefined,
    requestThreadCpuUs: pid && before ? ((cpuSecondsOf(pid, pid) - before.main) * 1e6) / requests : undefined,
    loadCpuUs: (loadCpu.user + loadCpu.system) / requests,
  };
}

/** The service on one store: batch and single ingestion. */
async function measureService(name: string, env: Record<string, string>) {
  // Start from clean disk state: what the earlier parts wrote (a million-entry ledger, the
  // other store's loads) would otherwise still be flushing and slow this store's commits.
  execSync('sync');
  const dataDir = scratchDir(`al-bench-${name}-`);
  const { url, child } = await startChild(
    [CLI, 'serve'],
    { LEDGER_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'info', LEDGER_BOOTSTRAP_EMAIL: 'bench@example.com', LEDGER_BOOTSTRAP_PASSWORD: 'bench password 123', ...env },
    'audit-ledger listening',
  );
  console.log(`  ${name}: service up at ${url}`);
  try {
    const { access_token } = (await json(`${url}/api/v1/auth/login`, { email: 'bench@example.com', password: 'bench password 123' })) as { access_token: string };
    const { key } = (await json(`${url}/api/v1/auth/api_keys`, { name: 'bench', rate_limit_per_minute: 1_000_000 }, { authorization: `Bearer ${access_token}` })) as { key: string };
    const headers = { 'x-api-key': key };
    await load(`${url}/api/v1/logs`, SINGLE_BODIES, 8, headers); // warm-up
    console.log(`  ${name}: batch load`);
    const batch = await load(`${url}/api/v1/logs/batch`, BATCH_BODY, 4, headers);
    console.log(`  ${name}: single-event load`);
    const single = ONLY === 'integrity' ? batch : await load(`${url}/api/v1/logs`, SINGLE_BODIES, 64, headers, child);
    console.log(`  ${name}: export of everything ingested`);
    // Twice: the first export also fills the store's read cache (SQLite: the page cache of the
    // reading connection, at most 64 MiB), which is memory the service keeps, not the stream's.
    await exportMemory(url, key, child);
    const exported = await exportMemory(url, key, child);
    return { batch, single, exported };
  } finally {
    console.log(`  ${name}: stopping`);
    await stop(child);
  }
}

/** The service under one load with V8's CPU profiler on every thread: microseconds per request by stage (profile-stages.ts). */
async function profiledStages(body: string | readonly string[], path_: string, connections: number): Promise<Map<string, number>> {
  const dir = scratchDir('al-bench-prof-');
  const { url, child } = await startChild(['--cpu-prof', '--cpu-prof-dir', dir, CLI, 'serve'], { LEDGER_DATA_DIR: scratchDir('al-bench-profdata-'), PORT: '0', LOG_LEVEL: 'info', LEDGER_BOOTSTRAP_EMAIL: 'bench@example.com', LEDGER_BOOTSTRAP_PASSWORD: 'bench password 123' }, 'audit-ledger listening');
  let requests = 0;
  try {
    const { access_token } = (await json(`${url}/api/v1/auth/login`, { email: 'bench@example.com', password: 'bench password 123' })) as { access_token: string };
    const { key } = (await json(`${url}/api/v1/auth/api_keys`, { name: 'bench', rate_limit_per_minute: 1_000_000 }, { authorization: `Bearer ${access_token}` })) as { key: string };
    const r = await load(`${url}${path_}`, typeof body === 'string' ? body : [...body], connections, { 'x-api-key': key });
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`profile load: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
    requests = r.rps * DURATION;
  } finally {
    await stop(child);
  }
  const total = new Map<string, number>();
  for (const f of fs.readdirSync(dir)) for (const [st, t] of stagesOf(JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')))) total.set(st, (total.get(st) ?? 0) + t / requests);
  // Idle time, and the modules loaded before the load began: not a request's cost.
  total.delete('idle');
  total.delete('startup');
  return total;
}

async function bareFastify(): Promise<Load> {
  const { url, child } = await startChild([path.join(ROOT, 'dist', 'bench', 'bare-server.js')], {}, 'bare listening');
  try {
    await load(`${url}/api/v1/logs`, SINGLE_BODIES, 8, {});
    return await load(`${url}/api/v1/logs`, SINGLE_BODIES, 64, {}, child);
  } finally {
    await stop(child);
  }
}

/**
 * Raw prepared inserts into the real log_entries table, 1000 rows per transaction, of the
 * same events the service gets (same size, same traces, UUIDv7 log ids).
 */
async function rawSqliteInserts(traceOf: (i: number) => string = (i) => event(i).trace_id): Promise<number> {
  const dir = scratchDir('al-bench-raw-');
  const store = openSqliteStore(path.join(dir, 'ledger.db'));
  await store.migrate();
  await store.db.insertInto('companies').values({ company_id: 'c', name: 'c', created_at: 'now' }).execute();
  await store.close();
  const SQLite = (await import('better-sqlite3')).default;
  const db = new SQLite(path.join(dir, 'ledger.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('cache_size = -65536'); // as the service sets it
  const insert = db.prepare(`INSERT INTO log_entries (${LOG_ENTRY_COLUMNS.join(', ')}) VALUES (${LOG_ENTRY_COLUMNS.map((c) => `@${c}`).join(', ')})`);
  // Every column, null unless set below (version 2 rows, as the service writes them).
  const NULL_ROW = Object.fromEntries(LOG_ENTRY_COLUMNS.map((c) => [c, null]));
  const tx = db.transaction((start: number) => {
    for (let i = start; i < start + 1000; i++) {
      const e = event(i, traceOf(i));
      insert.run({
        ...NULL_ROW,
        company_id: 'c', seq: i, log_id: uuidv7(Date.now()), format_version: 2, event_type: e.event_type, data: JSON.stringify(e.data), content_commitment: 'd'.repeat(64), content_salt: 'e'.repeat(44), source: e.source, trace_id: e.trace_id,
        session_id: null, timestamp: null, span_id: null, parent_span_id: null, parent_event_id: null, root_event_id: null, agent_id: null, workflow_id: null,
        causality_type: null, idempotency_key: null, schema_version: null, extra: null, created_at: new Date().toISOString(), prev_hash: 'a'.repeat(64), hash: 'b'.repeat(64),
        signature: 'c'.repeat(88), key_id: '0123456789abcdef',
      });
    }
  });
  let n = 0;
  const started = performance.now();
  while (performance.now() - started < DURATION * 1000 * 0.5) {
    tx(n);
    n += 1000;
  }
  const rate = n / ((performance.now() - started) / 1000);
  db.close();
  return rate;
}

/** A new PostgreSQL database for one part, dropped once the run is over (see scratch.ts). */
async function freshPgDatabase(): Promise<{ url: string }> {
  const name = `al_bench_${Date.now()}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  atEnd(async () => {
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await c.end();
  });
  return { url: url.toString() };
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const us = (v: number | undefined) => (v === undefined ? '?' : v.toFixed(0));

const startService = (env: Record<string, string>) =>
  startChild([CLI, 'serve'], { PORT: '0', LOG_LEVEL: 'info', LEDGER_BOOTSTRAP_EMAIL: 'bench@example.com', LEDGER_BOOTSTRAP_PASSWORD: 'bench password 123', ...env }, 'audit-ledger listening');

const growthBodies = { single: SINGLE_BODIES, batch: BATCH_BODY, traceId: TRACES[0] as string };

const streamsPart = () => streamsOverhead(startService, scratchDir('al-bench-streams-'), BATCH_BODY, (url, body, c, headers) => load(url, body, c, headers), stop);
const sizesPart = () => ingestionBySize(startService, (n) => scratchDir(`al-bench-sizes-${n}-`), (url, body, c, headers) => load(url, body, c, headers), stop);
const featuresPart = () => featureCosts(startService, (url, body, c, headers, service) => load(url, body, c, headers, service), stop, (name) => scratchDir(`al-bench-features-${name}-`), (i) => event(i));
const citusPart = () =>
  runCitusPart({ plainUrl: async () => (await freshPgDatabase()).url, start: startService, seconds: DURATION, batchBody: manyBody, single: SINGLE_BODIES[0] as string, entries: VERIFY_ENTRIES, event: (i) => event(i) });
const custodyPart = () => custodyCosts(startService, (url, body, c, headers) => load(url, body, c, headers), stop, (i) => event(i));

async function main(): Promise<void> {
  const options = new Command('bench').option('--compare <file>', "print each figure beside a previous run's saved JSON (docs/performance.json)").parse().opts<{ compare?: string }>();
  console.log(`audit-ledger bench: ${DURATION} s per load run`);
  // Start to ready alone: on a new (empty) data directory, or on BENCH_START_DIR's ledger as it is.
  if (ONLY === 'start') return void console.log(`start to ready: ${await startToReady(startService, process.env.BENCH_START_DIR ?? scratchDir('al-bench-start-'))} ms (median of 3)`);
  if (ONLY === 'parser') return void console.log(`body parser: ${parserLine(parserCost())}`);
  if (ONLY === 'forensics') return void console.log(`forensics: ${forensicsLine(await forensicsOnLongTrace(10_000))}`);
  if (ONLY === 'console') return void console.log(`console: ${consoleLine(await consoleBudgets())}`);
  if (ONLY === 'otlp') return void console.log(otlpLine(otlpMappingCost()));
  if (ONLY === 'streams') return void console.log(`streams: ${streamsLine(await streamsPart())}`);
  if (ONLY === 'features') return void console.log(`features: ${featuresLine(await featuresPart())}`);
  if (ONLY === 'citus') return void console.log(`citus: ${citusLine(await citusPart())}`);
  if (ONLY === 'custody') return void console.log(`custody: ${custodyLine(await custodyPart())}`);
  if (ONLY === 'sizes') return void console.log(`sizes: ${sizesLine(await sizesPart())}; ed25519 per core ${JSON.stringify(ed25519Rates())}`);
  if (ONLY === 'search') {
    const n = Number(process.env.BENCH_SEARCH_ENTRIES ?? 1_000_000);
    console.log(searchLine(await searchBench(n)));
    return void console.log(searchLine(await searchBench(n, (await freshPgDatabase()).url)));
  }
  if (ONLY === 'neighbour') return void console.log(JSON.stringify(await noisyNeighbour((await freshPgDatabase()).url, startService, DURATION, SINGLE_BODIES[0] as string, BATCH_BODY)));
  if (ONLY === 'multi') {
    for (const n of [1, 2, 4]) console.log(JSON.stringify(await manyCompanies((await freshPgDatabase()).url, startService, n, DURATION, manyBody)));
    return void console.log(JSON.stringify(await noisyNeighbour((await freshPgDatabase()).url, startService, DURATION, SINGLE_BODIES[0] as string, BATCH_BODY)));
  }
  if (ONLY === 'profile') {
    const cases = [['single', SINGLE_BODIES, '/api/v1/logs', 64, 1], ['batch (per event)', BATCH_BODY, '/api/v1/logs/batch', 4, BATCH], ['batch of 4 KB events (per event)', sizedBody('large', 200).text, '/api/v1/logs/batch', 4, 200]] as const;
    for (const [name, body, p, c, per] of cases) {
      const stages = await profiledStages(body as string | string[], p, c);
      if (process.env.PROFILE_JSON) fs.writeFileSync(`${process.env.PROFILE_JSON}-${per}.json`, JSON.stringify(Object.fromEntries(stages)));
      console.log(`${name}: ${[...stages].sort((a, b) => b[1] - a[1]).map(([st, t]) => `${st} ${(t / per).toFixed(1)} µs`).join(', ')}; all ${([...stages.values()].reduce((a, b) => a + b, 0) / per).toFixed(1)} µs`);
    }
    return;
  }
  if (ONLY === 'sqlite' || ONLY === 'postgres') {
    const pgdb = ONLY === 'postgres' ? await freshPgDatabase() : undefined;
    const r = await measureService(ONLY, pgdb ? { DATABASE_URL: pgdb.url } : {});
    return void console.log(`${ONLY}: batch ${fmt(r.batch.rps * BATCH)} events/s; single ${fmt(r.single.rps)} req/s p50 ${r.single.p50} ms p99 ${r.single.p99} ms, CPU per request: service ${us(r.single.serviceCpuUs)} µs (request thread ${us(r.single.requestThreadCpuUs)} µs), load generator ${us(r.single.loadCpuUs)} µs`);
  }
  console.log(`full verification: building a ${fmt(VERIFY_ENTRIES)}-entry SQLite ledger`);
  const verified = await fullVerification(VERIFY_ENTRIES, (i) => event(i));
  for (const [name, v] of [['plain', verified.report], ['entry signatures', verified.signed]] as const) {
    console.log(`full verification (${name}) of ${fmt(v.entries_checked)} entries: ${(v.duration_ms / 1000).toFixed(1)} s (${v.violation_count} violations)`);
  }
  console.log('growth: the empty ledger');
  const growth = [await growthPoint(startService, scratchDir('al-bench-growth-'), { email: 'bench@example.com', password: 'bench password 123' }, Math.min(DURATION, 5), growthBodies)];
  console.log(`growth: the ${fmt(VERIFY_ENTRIES)}-entry ledger`);
  growth.push(await growthPoint(startService, verified.dataDir, verified.login, Math.min(DURATION, 5), growthBodies));
  for (const g of growth) console.log(`  ${JSON.stringify(g)}`);
  if (ONLY === 'integrity') return;
  const forensics = await forensicsOnLongTrace(10_000);
  console.log(`forensics on one trace of ${forensicsLine(forensics)}`);
  const consoleB = await consoleBudgets();
  console.log(`console: ${consoleLine(consoleB)}`);
  const parser = parserCost();
  console.log(`body parser: ${parserLine(parser)}`);
  const { signs, verifies, opensslVerifies, backend } = ed25519Rates();
  console.log(`ed25519 one core: ${fmt(signs)} signatures/s, ${fmt(verifies)} verifications/s (${backend}; OpenSSL ${fmt(opensslVerifies)}/s)`);
  const raw = await rawSqliteInserts();
  const rawWorst = await rawSqliteInserts(() => randomUUID());
  console.log(`raw SQLite inserts/s: ${fmt(raw)} (a new trace_id on every row: ${fmt(rawWorst)})`);
  const bare = await bareFastify();
  console.log(`bare Fastify req/s: ${fmt(bare.rps)}, CPU per request: service ${us(bare.serviceCpuUs)} µs, load generator ${us(bare.loadCpuUs)} µs`);
  const sqlite = await measureService('sqlite', {});
  console.log(`sqlite: batch ${fmt(sqlite.batch.rps * BATCH)} events/s; single ${fmt(sqlite.single.rps)} req/s, CPU per request: service ${us(sqlite.single.serviceCpuUs)} µs`);
  const postgres = await measureService('postgres', { DATABASE_URL: (await freshPgDatabase()).url });
  console.log(`postgres: batch ${fmt(postgres.batch.rps * BATCH)} events/s; single ${fmt(postgres.single.rps)} req/s, CPU per request: service ${us(postgres.single.serviceCpuUs)} µs`);
  const multi = [];
  for (const n of [1, 2, 4]) {
    multi.push(await manyCompanies((await freshPgDatabase()).url, startService, n, DURATION, manyBody));
    console.log(`many companies: ${JSON.stringify(multi.at(-1))}`);
  }
  const neighbour = await noisyNeighbour((await freshPgDatabase()).url, startService, DURATION, SINGLE_BODIES[0] as string, BATCH_BODY);
  console.log(`noisy neighbour: ${JSON.stringify(neighbour)}`);
  const streams = await streamsPart();
  console.log(`streams: ${streamsLine(streams)}`);
  const custody = await custodyPart();
  console.log(`custody: ${custodyLine(custody)}`);
  const sizes = await sizesPart();
  console.log(`sizes: ${sizesLine(sizes)}`);
  const features = await featuresPart();
  console.log(`features: ${featuresLine(features)}`);

  const citus = await citusPart();
  console.log(`citus: ${citusLine(citus)}`);

  const profile = { single: await profiledStages(SINGLE_BODIES, '/api/v1/logs', 64), batch: await profiledStages(BATCH_BODY, '/api/v1/logs/batch', 4) };
  console.log(`profiles: ${JSON.stringify({ single: Object.fromEntries(profile.single), batch: Object.fromEntries(profile.batch) })}`);
  const cpus = os.cpus();
  const results: BenchResults = {
    runAt: new Date().toISOString(),
    machine: `${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM, ${os.type()} ${os.release()}, Node ${process.version}`,
    cores: cpus.length,
    duration: DURATION,
    verified,
    growth,
    forensics,
    consoleB,
    parser,
    signs,
    verifies,
    opensslVerifies,
    ed25519Backend: backend,
    sizes,
    raw,
    rawWorst,
    bare,
    sqlite,
    postgres,
    multi,
    neighbour,
    streams,
    custody,
    features,
    profile,
    citus,
  };
  const figures = benchFigures(results);
  const jsonFile = path.join(DOCS, 'performance.json');
  const previous = options.compare ? readFigures(options.compare) : undefined;
  saveFigures(jsonFile, figures);
  const docFile = path.join(DOCS, 'performance.md');
  fs.writeFileSync(docFile, performanceDoc(results, readExisting(docFile)));
  console.log('\nwritten to docs/performance.md and docs/performance.json');
  if (previous) console.log(`\n${compareFigures(previous, figures)}`);
}

main()
  .finally(cleanUp)
  .catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
