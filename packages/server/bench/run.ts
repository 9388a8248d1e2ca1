// `npm run bench`: ingestion throughput over real HTTP (autocannon) on SQLite and PostgreSQL,
// with the ceilings measured in the same run on the same machine. Prints a table and writes
// docs/performance.md. Needs the local PostgreSQL (BENCH_DATABASE_URL, default the test server).
import { type ChildProcess, execSync, spawn } from 'node:child_process';
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import autocannon from 'autocannon';
import pg from 'pg';
import { openSqliteStore } from '../src/store/sqlite.js';
import { LOG_ENTRY_COLUMNS } from '../src/store/columns.js';
import { uuidv7 } from '../src/ledger/uuidv7.js';
import { type ExportResult, exportMemory, fullVerification } from './integrity.js';
import { consoleBudgets, consoleLine } from './console.js';
import { forensicsOnLongTrace, type ForensicsTimings } from './forensics.js';
import { atEnd, cleanUp, scratchDir } from './scratch.js';
import { parserCost, parserLine } from './parser.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
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

function startChild(args: string[], env: Record<string, string>, ready: string): Promise<{ url: string; child: ChildProcess }> {
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
          resolve({ url: l.url, child });
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

interface Load {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** CPU time per request (all threads), in µs: the service's (when measured) and the load generator's. */
  serviceCpuUs?: number;
  /** The part of serviceCpuUs spent on the service's main thread (HTTP, validation, hashing, building groups). */
  requestThreadCpuUs?: number;
  loadCpuUs: number;
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
  const tx = db.transaction((start: number) => {
    for (let i = start; i < start + 1000; i++) {
      const e = event(i, traceOf(i));
      insert.run({
        company_id: 'c', seq: i, log_id: uuidv7(Date.now()), format_version: 1, event_type: e.event_type, data: JSON.stringify(e.data), source: e.source, trace_id: e.trace_id,
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

function ed25519PerSecond(): number {
  const { privateKey } = generateKeyPairSync('ed25519');
  const msg = Buffer.from('audit-ledger/v1/entry-signature\n' + 'ab'.repeat(32));
  let n = 0;
  const started = performance.now();
  while (performance.now() - started < 2000) {
    for (let i = 0; i < 1000; i++) sign(null, msg, privateKey);
    n += 1000;
  }
  return n / ((performance.now() - started) / 1000);
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
const pct = (a: number, b: number) => `${((a / b) * 100).toFixed(0)}%`;
const us = (v: number | undefined) => (v === undefined ? '?' : v.toFixed(0));

const exportLine = (e: ExportResult) =>
  `${fmt(e.entries)} entries, ${e.megabytes.toFixed(0)} MiB in ${e.seconds.toFixed(1)} s; service peak RSS ${e.peakBeforeMiB.toFixed(0)} MiB before, ${e.peakAfterMiB.toFixed(0)} MiB after`;

const forensicsLine = (f: ForensicsTimings) =>
  `${fmt(f.events)} events: ${Object.entries(f.ms)
    .map(([p, [first, again]]) => `${p} ${first.toFixed(0)} ms (again ${again.toFixed(0)} ms)`)
    .join(', ')}`;

async function main(): Promise<void> {
  console.log(`audit-ledger bench: ${DURATION} s per load run`);
  if (ONLY === 'parser') {
    console.log(`body parser: ${parserLine(parserCost())}`);
    return;
  }
  if (ONLY === 'forensics') {
    console.log(`forensics: ${forensicsLine(await forensicsOnLongTrace(10_000))}`);
    return;
  }
  if (ONLY === 'console') {
    console.log(`console: ${consoleLine(await consoleBudgets())}`);
    return;
  }
  if (ONLY === 'sqlite' || ONLY === 'postgres') {
    const pgdb = ONLY === 'postgres' ? await freshPgDatabase() : undefined;
    const r = await measureService(ONLY, pgdb ? { DATABASE_URL: pgdb.url } : {});
    console.log(`${ONLY}: batch ${fmt(r.batch.rps * BATCH)} events/s; single ${fmt(r.single.rps)} req/s p50 ${r.single.p50} ms p99 ${r.single.p99} ms, CPU per request: service ${us(r.single.serviceCpuUs)} µs (request thread ${us(r.single.requestThreadCpuUs)} µs), load generator ${us(r.single.loadCpuUs)} µs`);
    return;
  }
  console.log(`full verification: building a ${fmt(VERIFY_ENTRIES)}-entry SQLite ledger`);
  const verified = await fullVerification(VERIFY_ENTRIES, (i) => event(i));
  const v = verified.report;
  console.log(
    `full verification of ${fmt(v.entries_checked)} entries: ${(v.duration_ms / 1000).toFixed(1)} s (${v.tree_hashes_checked} tree hashes, ${v.checkpoints_checked} checkpoints, ${v.violation_count} violations); ledger built in ${verified.buildSeconds.toFixed(0)} s`,
  );
  const forensics = await forensicsOnLongTrace(10_000);
  console.log(`forensics on one trace of ${forensicsLine(forensics)}`);
  const consoleB = await consoleBudgets();
  console.log(`console: ${consoleLine(consoleB)}`);
  if (ONLY === 'integrity') {
    const sqliteOnly = await measureService('sqlite', {});
    console.log(`export: ${exportLine(sqliteOnly.exported)}`);
    return;
  }
  const parser = parserCost();
  console.log(`body parser: ${parserLine(parser)}`);
  const signs = ed25519PerSecond();
  console.log(`ed25519 signatures/s (one core): ${fmt(signs)}`);
  const raw = await rawSqliteInserts();
  const rawWorst = await rawSqliteInserts(() => randomUUID());
  console.log(`raw SQLite inserts/s: ${fmt(raw)} (a new trace_id on every row: ${fmt(rawWorst)})`);
  const bare = await bareFastify();
  console.log(`bare Fastify req/s: ${fmt(bare.rps)}, CPU per request: service ${us(bare.serviceCpuUs)} µs, load generator ${us(bare.loadCpuUs)} µs`);
  const sqlite = await measureService('sqlite', {});
  console.log(`sqlite: batch ${fmt(sqlite.batch.rps * BATCH)} events/s; single ${fmt(sqlite.single.rps)} req/s p50 ${sqlite.single.p50} ms p99 ${sqlite.single.p99} ms, CPU per request: service ${us(sqlite.single.serviceCpuUs)} µs (request thread ${us(sqlite.single.requestThreadCpuUs)} µs), load generator ${us(sqlite.single.loadCpuUs)} µs`);
  console.log('  postgres: creating a database');
  const pgdb = await freshPgDatabase();
  const postgres = await measureService('postgres', { DATABASE_URL: pgdb.url });
  console.log(`postgres: batch ${fmt(postgres.batch.rps * BATCH)} events/s; single ${fmt(postgres.single.rps)} req/s p50 ${postgres.single.p50} ms p99 ${postgres.single.p99} ms, CPU per request: service ${us(postgres.single.serviceCpuUs)} µs (request thread ${us(postgres.single.requestThreadCpuUs)} µs; not the database server's), load generator ${us(postgres.single.loadCpuUs)} µs`);

  const bad = [sqlite.batch, sqlite.single, postgres.batch, postgres.single].filter((l) => l.non2xx > 0 || l.errors > 0);
  // The single-event floor: per request, what no implementation of this design avoids (see the doc text).
  const floorUs = 1e6 / signs + 1e6 / raw + (bare.serviceCpuUs ?? 0) + bare.loadCpuUs;
  const floorRps = (os.cpus().length * 1e6) / floorUs;
  const budgetUs = (os.cpus().length * 1e6) / (0.4 * bare.rps);
  const rows: string[][] = [
    ['Batch ingestion, SQLite (1000 × ~500 B per request, 4 connections)', `${fmt(sqlite.batch.rps * BATCH)} events/s`, 'raw SQLite inserts', `${fmt(raw)} rows/s`, pct(sqlite.batch.rps * BATCH, raw), '≥ 20,000 events/s'],
    ['Batch ingestion, PostgreSQL (same)', `${fmt(postgres.batch.rps * BATCH)} events/s`, 'Ed25519 signing, one core', `${fmt(signs)} sig/s`, pct(postgres.batch.rps * BATCH, signs), '≥ 10,000 events/s'],
    ['Single-event ingestion, SQLite (64 connections)', `${fmt(sqlite.single.rps)} req/s, p50 ${sqlite.single.p50} ms, p99 ${sqlite.single.p99} ms`, 'bare Fastify route', `${fmt(bare.rps)} req/s`, pct(sqlite.single.rps, bare.rps), '≥ 40% of bare, p99 < 50 ms'],
    ['Single-event ingestion, PostgreSQL (64 connections)', `${fmt(postgres.single.rps)} req/s, p50 ${postgres.single.p50} ms, p99 ${postgres.single.p99} ms`, 'bare Fastify route', `${fmt(bare.rps)} req/s`, pct(postgres.single.rps, bare.rps), '≥ 40% of bare, p99 < 50 ms'],
    ['Single-event bound of the design: the cores divided by what a request cannot avoid (signature, raw insert, bare route, load generator; see below)', `${fmt(floorRps)} req/s`, 'bare Fastify route', `${fmt(bare.rps)} req/s`, pct(floorRps, bare.rps), ''],
    [`Full verification, SQLite, ${fmt(v.entries_checked)} entries (hashes, links, every tree hash, ${v.checkpoints_checked} checkpoint signatures)`, `${(v.duration_ms / 1000).toFixed(1)} s`, '', '', '', '< 30 s for 1,000,000'],
    ['Streamed JSONL export, SQLite (everything the loads above ingested)', exportLine(sqlite.exported), '', '', '', 'constant memory'],
    ['Streamed JSONL export, PostgreSQL (same)', exportLine(postgres.exported), '', '', '', 'constant memory'],
    ['Forensics on one trace, SQLite (each endpoint through the app; first call, then again)', forensicsLine(forensics), '', '', '', '< 1 s on 10,000 events'],
    ['Web console in Chromium, SQLite (JS shipped; logs first paint; in-browser verification)', consoleLine(consoleB), '', '', '', '≤ 250 KB JS; < 1 s paint; < 50 ms per entry; < 2 s per 1,000-event trace'],
    ['Strict body parser (UTF-8, surrogates, NUL, duplicate keys, exact numbers), one core', parserLine(parser), 'JSON.parse of the same bytes', '', '', ''],
  ];
  const table = [
    '| Measure | Result | Ceiling | Ceiling value | Ratio | Target |',
    '|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
  const cpus = os.cpus();
  const machine = `${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM, ${os.type()} ${os.release()}, Node ${process.version}`;
  const out = `# Performance

Measured by \`npm run bench\` (code in \`bench/\`): the service runs as its own process, and
autocannon drives it over real HTTP on loopback from the bench process, on the same machine (so the
load generator shares the cores). Each load runs ${DURATION} s after a warm-up. Each part's files and
databases are removed only when the whole run is over, and the disk is synced before each service
starts, so no part's writes or deletions slow the next. The ceilings are measured
in the same run on the same machine. SQLite runs with WAL and \`synchronous=FULL\` (every
acknowledged commit is on disk); PostgreSQL is the local server with default settings.

Latest run: ${new Date().toISOString()} on ${machine}.

${table}

${bad.length ? `**Warning:** ${bad.length} load run(s) had non-2xx answers or errors; see the console output.\n` : 'Every request in every load run was answered 2xx.'}

## How to read it

- **Batch ingestion** is the rate of events committed (hashed, signed, inserted, fsynced) through
  \`POST /api/v1/logs/batch\`. Concurrent requests for one company are grouped into one transaction.
- **Single-event ingestion** is \`POST /api/v1/logs\` with one event per request, 64 connections. Each
  200 means the event is committed; concurrent requests share a commit (group commit).
- **Ceilings**: raw prepared inserts of the same events into the real \`log_entries\` table (same
  indexes and settings) in 1000-row transactions; Ed25519 signatures per second on one core with
  node:crypto; a bare Fastify route that parses the same body and answers.
- **Workload**: events of about 500 bytes belonging to agent traces (a batch carries 20 traces of 50
  events; single-event requests cycle through 8 traces). Index work depends on it: with a new
  \`trace_id\` on every event, raw inserts fall from ${fmt(raw)} to ${fmt(rawWorst)} rows/s in this run,
  because every row then lands at a random place in the trace index.

## What limits it

Profiled with \`node --cpu-prof\` on the service under the same loads:

- **Batch, SQLite**: three threads share the two cores with the load generator: the request
  thread (parsing, validation, canonical JSON, hashing, the Merkle edge, garbage collection), the
  signing worker (Ed25519, ${(1e6 / signs).toFixed(0)} µs a signature here: at 20,000 events/s that alone is
  ${pct(20_000, signs)} of one core) and the SQLite writer thread (inserts into the entry table and its six
  indexes, the tree hashes, the commit's WAL writes and fsync). The appender builds and signs the
  next group while the writer commits the last. Profiles show all three threads busy and the
  request thread about a quarter idle: the cores, not one thread, bound the figure.
- **Batch, PostgreSQL**: one transaction per group holding the company's chain lock (what several
  processes need); signing is shared between the request thread and the worker, and the database
  server runs on the same two cores.
- **Single event**: each 200 waits for its own group's commit, so with 64 connections the
  rate is 64 divided by a group's latency (p50 ${sqlite.single.p50} ms on SQLite), and each request pays for work on
  three threads: the request thread (HTTP, authentication, validation, canonical JSON, hashing,
  the Merkle edge, its log line and metrics, handing the group over: ${us(sqlite.single.requestThreadCpuUs)} µs here) and the
  writer thread (its Ed25519 signature, as groups of up to 64 entries are signed there, its insert
  and the commit). In
  all a request cost the service ${us(sqlite.single.serviceCpuUs)} µs of CPU on SQLite and the load generator ${us(sqlite.single.loadCpuUs)} µs; the
  bare route costs ${us(bare.serviceCpuUs)} µs and ${us(bare.loadCpuUs)} µs.
- **Why single-event ingestion stays far from 40% of the bare route on this machine.** Four costs
  of a single-event request cannot be designed away while every entry carries its own signature
  and every 200 means committed: the Ed25519 signature (${(1e6 / signs).toFixed(1)} µs, the ceiling above), the
  indexed insert of the row (${(1e6 / raw).toFixed(1)} µs at the raw-insert ceiling), the bare route's own HTTP work
  (${us(bare.serviceCpuUs)} µs) and the load generator's share of the same cores (${us(bare.loadCpuUs)} µs). Even if nothing
  else cost anything, those ${us(floorUs)} µs cap the rate at ${os.cpus().length} cores / ${us(floorUs)} µs = ${fmt(floorRps)} req/s,
  ${pct(floorRps, bare.rps)} of the bare route. At the 40% target (${fmt(0.4 * bare.rps)} req/s) a request may cost ${us(budgetUs)} µs of CPU
  in all, which leaves ${us(budgetUs - floorUs)} µs for authentication, validation, canonicalization, hashing, the
  Merkle tree, the commit, the log line, metrics and the hand-offs between threads; the request
  thread alone spends ${us((sqlite.single.requestThreadCpuUs ?? 0) - (bare.serviceCpuUs ?? 0))} µs beyond the bare route's whole process. Tuning cannot close that
  gap: reaching the target needs more cores, or a signature per group of entries instead of per
  entry (a ledger-format change) together with a much cheaper request path.
- **Full verification** reads the entries, tree hashes and checkpoints page by page (2000 entries),
  recomputes every entry hash and link, rebuilds the Merkle tree and compares every stored tree hash
  and every checkpoint root, and checks each checkpoint's signature. Entry signatures are not
  checked by default (about 60 µs each; \`entry_signatures: true\` adds them): the checkpoint
  signatures cover every entry through the tree.
- **Forensics**: each endpoint loads the session's events (by the trace index, below its pinned
  tree size), verifies each (hash recomputed; signature checked on first sight, then remembered
  by its exact key, hash and signature), and runs its analysis. The first call pays the signature
  checks; later calls only the hashing.
- **Export** memory: the service's peak resident memory (VmHWM) before and after streaming the whole
  ledger a second time; it pages through the store 1000 entries at a time and writes as the socket
  drains. The first export is not counted: on SQLite it also fills the reading connection's page
  cache (appends go through the writer thread's own connection), at most 64 MiB that stay.
`;
  fs.writeFileSync(path.join(ROOT, '..', '..', 'docs', 'performance.md'), out);
  console.log(`\n${table}\n\nwritten to docs/performance.md`);
}

main()
  .finally(cleanUp)
  .catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
