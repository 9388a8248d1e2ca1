// The bench's results as docs/performance.md (generated part) and as the figures saved to
// docs/performance.json. What follows the HAND_WRITTEN marker in the existing document (the
// profiles, the console's budgets) is kept as it is.
import { type CitusBench, citusLine } from './citus.js';
import fs from 'node:fs';
import type { ConsoleBudgets } from './console.js';
import { consoleLine } from './console.js';
import type { Figure, FiguresFile } from './compare.js';
import type { ForensicsTimings } from './forensics.js';
import type { GrowthRow } from './growth.js';
import type { FeatureCost } from './features.js';
import type { ExportResult, VerifyResult } from './integrity.js';
import type { MultiRow, Neighbour } from './multi.js';
import { streamsLine, type StreamsRow } from './streams.js';
import { custodyLine, type CustodyRow } from './custody.js';
import { sizesLine, type SizesRow } from './sizes.js';
import { parserLine, type parserCost } from './parser.js';

export interface Load {
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

export interface ServiceResult {
  batch: Load;
  single: Load;
  exported: ExportResult;
}

export interface BenchResults {
  runAt: string;
  machine: string;
  cores: number;
  duration: number;
  verified: VerifyResult;
  growth: GrowthRow[];
  forensics: ForensicsTimings;
  consoleB: ConsoleBudgets;
  parser: ReturnType<typeof parserCost>;
  signs: number;
  /** One core's Ed25519 verifications/s: the floor of a verification with entry signatures is a million of them over the cores. */
  verifies: number;
  /** The same with OpenSSL (node:crypto), and which library `verifies` measured. */
  opensslVerifies: number;
  ed25519Backend: string;
  /** Batch ingestion by event size (sizes.ts). */
  sizes: SizesRow;
  raw: number;
  rawWorst: number;
  bare: Load;
  sqlite: ServiceResult;
  postgres: ServiceResult;
  multi: MultiRow[];
  neighbour: Neighbour;
  streams: StreamsRow;
  /** Key custody and agent signatures (custody.ts). */
  custody: CustodyRow;
  /** Each feature on the append path against none (features.ts): the first row is the base. */
  features: FeatureCost[];
  /** µs of CPU per request by stage, all threads, from CPU profiles (profile-stages.ts). */
  profile: { single: Map<string, number>; batch: Map<string, number> };
  /** The ledger on a Citus cluster of the bench's own (citus.ts). */
  citus: CitusBench;
}

export const HAND_WRITTEN = '<!-- Everything below is written by hand and kept by `npm run bench`. -->';

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const x = (n: number) => `${n.toFixed(2)}×`;
const s1 = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const met = (ok: boolean) => (ok ? 'met' : '**not met**');

export const exportLine = (e: ExportResult) =>
  `${fmt(e.entries)} entries, ${e.megabytes.toFixed(0)} MiB in ${e.seconds.toFixed(1)} s; service peak RSS ${e.peakBeforeMiB.toFixed(0)} MiB before, ${e.peakAfterMiB.toFixed(0)} MiB after`;

export const forensicsLine = (f: ForensicsTimings) =>
  `${fmt(f.events)} events: ${Object.entries(f.ms)
    .map(([p, [first, again]]) => `${p} ${first.toFixed(0)} ms (again ${again.toFixed(0)} ms)`)
    .join(', ')}`;

/** Seconds a million entry signatures take at one core's verification rate on every core: the floor of a verification with them. */
export const verifyFloor1mS = (r: BenchResults) => 1e6 / (r.verifies * r.cores);

/**
 * Events/s the machine could ingest if an event cost only its signature and its raw insert (into the
 * real table, with its indexes and the search index), every core busy: the bound batch ingestion
 * meets long before any HTTP, parsing or hashing is counted. When the raw insert is slower than a
 * signature, this bound is below twice the signing rate, and "1.0× the signing rate" needs the rest
 * of a request to cost (almost) nothing.
 */
export const twoCoreBound = (r: BenchResults) => r.cores / (1 / r.signs + 1 / r.raw);

/** A stage's name as part of a figure's: `log line` → `log_line`. */
const stageKey = (st: string) => st.replace(/[^a-z0-9]+/gi, '_').toLowerCase();

/** The unavoidable CPU of one single-event request: a signature, a raw insert, the bare route's own CPU (µs). */
export function unavoidableUs(r: BenchResults): number {
  return 1e6 / r.signs + 1e6 / r.raw + (r.bare.serviceCpuUs ?? 0);
}

export function benchFigures(r: BenchResults): FiguresFile {
  const f: Record<string, Figure> = {};
  const put = (name: string, value: number, unit: string, better: Figure['better']) => (f[name] = { value, unit, better });
  const floor = unavoidableUs(r);
  put('batch_sqlite_per_signing_rate', (r.sqlite.batch.rps * 1000) / r.signs, '×', 'higher');
  put('batch_sqlite_events_per_s', r.sqlite.batch.rps * 1000, 'ev/s', 'higher');
  put('batch_sqlite_per_signature_and_insert_bound', (r.sqlite.batch.rps * 1000) / twoCoreBound(r), '×', 'higher');
  put('raw_insert_per_signing_rate', r.raw / r.signs, '×', 'higher');
  put('batch_postgres_per_signing_rate', (r.postgres.batch.rps * 1000) / r.signs, '×', 'higher');
  put('single_sqlite_cpu_per_unavoidable', (r.sqlite.single.serviceCpuUs ?? 0) / floor, '×', 'lower');
  put('single_postgres_cpu_per_unavoidable', (r.postgres.single.serviceCpuUs ?? 0) / floor, '×', 'lower');
  put('single_sqlite_per_bare', r.sqlite.single.rps / r.bare.rps, '×', 'higher');
  put('single_sqlite_p99_ms', r.sqlite.single.p99, 'ms', 'lower');
  put('verify_1m_plain_s', (r.verified.report.duration_ms / 1000) * (1e6 / r.verified.entries), 's', 'lower');
  put('verify_1m_signatures_s', (r.verified.signed.duration_ms / 1000) * (1e6 / r.verified.entries), 's', 'lower');
  put('verify_1m_signatures_per_floor', (r.verified.signed.duration_ms / 1000) * (1e6 / r.verified.entries) / verifyFloor1mS(r), '×', 'lower');
  put('ed25519_verify_per_sign_cost', r.signs / r.verifies, '×', 'lower');
  put('ed25519_verify_rate_per_openssl', r.verifies / r.opensslVerifies, '×', 'higher');
  for (const k of ['small', 'usual', 'large'] as const) put(`batch_sqlite_${k}_events_per_signing_rate`, r.sizes[k].eventsPerSecond / r.signs, '×', 'higher');
  // What the index of words costs ingestion: with it, against SEARCH_INDEX=off, same run.
  put('search_index_usual_batch_per_off', r.sizes.usual.eventsPerSecond / r.sizes.searchOff.usual.eventsPerSecond, '×', 'higher');
  put('search_index_4kb_batch_per_off', r.sizes.large.eventsPerSecond / r.sizes.searchOff.large.eventsPerSecond, '×', 'higher');
  // The budget by stage (issue 33): each stage's CPU per event under the profiler, as a share of one
  // signature's cost in the same run, so a change's cost shows in the stage it went to.
  const sig = 1e6 / r.signs;
  for (const [st, us] of r.profile.single) put(`stage_single_${stageKey(st)}_per_signature`, us / sig, '×', 'lower');
  for (const [st, us] of r.profile.batch) put(`stage_batch_${stageKey(st)}_per_signature`, us / 1000 / sig, '×', 'lower');
  put('citus_100_companies_batch_per_plain', r.citus.citus.eventsPerSecond / r.citus.plain.eventsPerSecond, '×', 'higher');
  put('citus_singles_p99_ms', r.citus.singles.citus.p99, 'ms', 'lower');
  put('citus_verify_1m_plain_s', r.citus.verify.citusSeconds * (1e6 / r.citus.verify.entries), 's', 'lower');
  put('citus_distribute_1m_in_place_s', r.citus.verify.distributeSeconds * (1e6 / r.citus.verify.entries), 's', 'lower');
  put('citus_shard_move_1m_s', r.citus.verify.moveSeconds * (1e6 / r.citus.verify.entries), 's', 'lower');
  for (const g of r.growth) {
    const at = g.entries < 1e6 ? 'empty' : `${Math.round(g.entries / 1e6)}m`;
    put(`growth_${at}_batch_events_per_s`, g.batchEventsPerSecond, 'ev/s', 'higher');
    put(`growth_${at}_entry_read_p99_ms`, g.entryReadP99, 'ms', 'lower');
    put(`growth_${at}_inclusion_p99_ms`, g.inclusionProofP99, 'ms', 'lower');
    put(`growth_${at}_trace_search_p99_ms`, g.traceSearchP99, 'ms', 'lower');
    put(`growth_${at}_bytes_per_canonical_byte`, g.bytesPerEntry / g.canonicalBytesPerEntry, '×', 'lower');
    if (g.startToReadyMs !== undefined) put(`growth_${at}_start_to_ready_ms`, g.startToReadyMs, 'ms', 'lower');
  }
  for (const m of r.multi) put(`multi_${m.processes}p_events_per_s`, m.eventsPerSecond, 'ev/s', 'higher');
  put('neighbour_single_p99_ms', r.neighbour.besideBatches.p99, 'ms', 'lower');
  put('streams_3_batch_per_none', r.streams.ratio, '×', 'higher');
  put('pkcs11_sign_per_key_file', r.custody.tokenSignUs / r.custody.fileSignUs, '×', 'lower');
  put('pkcs11_batch_ingest_per_key_file', r.custody.ingestToken / r.custody.ingestFile, '×', 'higher');
  put('agent_signed_batch_ingest_per_unsigned', r.custody.agentSigned / r.custody.agentNone, '×', 'higher');
  // Each append-path feature against the base row of the same run (features.ts).
  const [base, ...withFeature] = r.features ?? [];
  for (const f of base ? withFeature : []) {
    const k = featureKey(f.feature);
    put(`feature_${k}_single_cpu_added_us`, f.singleCpuUs - (base as FeatureCost).singleCpuUs, 'µs', 'lower');
    put(`feature_${k}_batch_per_none`, f.batchEventsPerSecond / (base as FeatureCost).batchEventsPerSecond, '×', 'higher');
    if (f.freshnessLagMs) {
      put('search_freshness_lag_p50_ms', f.freshnessLagMs.p50, 'ms', 'lower');
      put('search_freshness_lag_p99_ms', f.freshnessLagMs.p99, 'ms', 'lower');
    }
  }
  return { run_at: r.runAt, machine: r.machine, figures: f };
}

const featureKey = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '');

/** The per-feature table of docs/performance.md: each row's cost against the base row's. */
export function featuresTable(rows: FeatureCost[]): string {
  const [base] = rows;
  if (!base) return '';
  return table(
    ['Feature on the append path', 'How the row turns it on', 'Service CPU per single event', 'Added to the base', 'Batch events/s', 'Per base', 'Searchable after (p50 / p99)'],
    rows.map((f) => [
      f.feature,
      f.how,
      `${f.singleCpuUs.toFixed(0)} µs`,
      f === base ? '' : `${(f.singleCpuUs - base.singleCpuUs).toFixed(0)} µs`,
      Math.round(f.batchEventsPerSecond).toLocaleString('en-US'),
      f === base ? '' : `${(f.batchEventsPerSecond / base.batchEventsPerSecond).toFixed(2)}×`,
      f.freshnessLagMs ? `${f.freshnessLagMs.p50.toFixed(0)} / ${f.freshnessLagMs.p99.toFixed(0)} ms` : '',
    ]),
  );
}

function table(head: string[], rows: Array<Array<string | number>>): string {
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n');
}

export function performanceDoc(r: BenchResults, existing: string): string {
  const floor = unavoidableUs(r);
  const v = r.verified;
  /** Milliseconds for a million entries. */
  const per1m = (ms: number) => ms * (1e6 / v.entries);
  const batchRatio = (r.sqlite.batch.rps * 1000) / r.signs;
  const cpuS = (r.sqlite.single.serviceCpuUs ?? 0) / floor;
  const cpuP = (r.postgres.single.serviceCpuUs ?? 0) / floor;
  const [g0, g1] = r.growth;
  const searchLag = (r.features ?? []).find((f) => f.freshnessLagMs)?.freshnessLagMs;
  const kept = existing.includes(HAND_WRITTEN) ? existing.slice(existing.indexOf(HAND_WRITTEN)) : HAND_WRITTEN;
  const targets = table(
    ['Target', 'Measured', 'Ceiling or bound (same run)', 'Ratio', 'Status'],
    [
      ['Full verification of 1,000,000 entries, SQLite, < 5 s', s1(per1m(v.report.duration_ms)), '', '', met(per1m(v.report.duration_ms) < 5000)],
      [
        '… with entry signatures, < 40 s',
        s1(per1m(v.signed.duration_ms)),
        `${s1(verifyFloor1mS(r) * 1000)}: 1,000,000 verifications at ${fmt(r.verifies)}/s a core (${r.ed25519Backend}; OpenSSL ${fmt(r.opensslVerifies)}/s) on ${r.cores} cores`,
        x(per1m(v.signed.duration_ms) / (verifyFloor1mS(r) * 1000)),
        met(per1m(v.signed.duration_ms) < 40_000),
      ],
      [
        'Batch ingestion, SQLite, 1000-event batches on 4 connections, ≥ one-core Ed25519 signing rate',
        `${fmt(r.sqlite.batch.rps * 1000)} events/s`,
        `${fmt(r.signs)} signatures/s; a signature and a raw insert (${fmt(r.raw)}/s) on every core: ${fmt(twoCoreBound(r))} events/s (${x(twoCoreBound(r) / r.signs)})`,
        x(batchRatio),
        met(batchRatio >= 1),
      ],
      [
        'Single-event service CPU per request ≤ 1.6× the unavoidable cost, SQLite',
        `${(r.sqlite.single.serviceCpuUs ?? 0).toFixed(0)} µs`,
        `${floor.toFixed(0)} µs (signature ${(1e6 / r.signs).toFixed(1)} + raw insert ${(1e6 / r.raw).toFixed(1)} + bare route ${(r.bare.serviceCpuUs ?? 0).toFixed(1)})`,
        x(cpuS),
        met(cpuS <= 1.6),
      ],
      ['… PostgreSQL (the service process only)', `${(r.postgres.single.serviceCpuUs ?? 0).toFixed(0)} µs`, `${floor.toFixed(0)} µs`, x(cpuP), met(cpuP <= 1.6)],
      ...(g0 && g1
        ? [
            [`Ingestion at ${fmt(g1.entries)} entries within 10% of the empty ledger (batch)`, `${fmt(g1.batchEventsPerSecond)} events/s`, `${fmt(g0.batchEventsPerSecond)} events/s empty`, x(g1.batchEventsPerSecond / g0.batchEventsPerSecond), met(g1.batchEventsPerSecond >= 0.9 * g0.batchEventsPerSecond)],
            [`Entry read and inclusion proof p99 < 5 ms at ${fmt(g1.entries)}`, `${g1.entryReadP99} ms, ${g1.inclusionProofP99} ms`, '', '', met(g1.entryReadP99 < 5 && g1.inclusionProofP99 < 5)],
            [`Trace search p99 < 10 ms at ${fmt(g1.entries)}`, `${g1.traceSearchP99} ms`, '', '', met(g1.traceSearchP99 < 10)],
            [`Start to ready (spawn to listening, SQLite) < 1.5 s, empty and at ${fmt(g1.entries)}`, `${fmt(g0.startToReadyMs)} ms, ${fmt(g1.startToReadyMs)} ms`, '', '', met(g0.startToReadyMs < 1500 && g1.startToReadyMs < 1500)],
            ['Storage ≤ 2.5× the canonical JSON of the entries', `${fmt(g1.bytesPerEntry)} B per entry`, `${fmt(g1.canonicalBytesPerEntry)} B canonical JSON`, x(g1.bytesPerEntry / g1.canonicalBytesPerEntry), met(g1.bytesPerEntry / g1.canonicalBytesPerEntry <= 2.5)],
          ]
        : []),
      ...(g1?.duringVerification
        ? [
            [
              'A full verification takes at most one core from ingestion (batch ingestion while it runs ≥ half the rate without it)',
              `${fmt(g1.duringVerification.batchEventsPerSecond)} events/s while verifying (${s1(g1.duringVerification.verificationMs)})`,
              `${fmt(g1.batchEventsPerSecond)} events/s without`,
              x(g1.duringVerification.batchEventsPerSecond / g1.batchEventsPerSecond),
              met(g1.duringVerification.batchEventsPerSecond >= 0.5 * g1.batchEventsPerSecond),
            ],
          ]
        : []),
      ['Another company\'s single events beside 1000-event batches on 4 connections, p99 < 50 ms (PostgreSQL)', `${r.neighbour.besideBatches.p99} ms`, `${r.neighbour.alone.p99} ms alone`, '', met(r.neighbour.besideBatches.p99 < 50)],
      [
        'Batch ingestion with the search index (the default) ≥ 0.9× SEARCH_INDEX=off (SQLite; usual events, and 4 KB ones)',
        `${fmt(r.sizes.usual.eventsPerSecond)} and ${fmt(r.sizes.large.eventsPerSecond)} events/s`,
        `${fmt(r.sizes.searchOff.usual.eventsPerSecond)} and ${fmt(r.sizes.searchOff.large.eventsPerSecond)} events/s off`,
        `${x(r.sizes.usual.eventsPerSecond / r.sizes.searchOff.usual.eventsPerSecond)}, ${x(r.sizes.large.eventsPerSecond / r.sizes.searchOff.large.eventsPerSecond)}`,
        met(r.sizes.usual.eventsPerSecond >= 0.9 * r.sizes.searchOff.usual.eventsPerSecond && r.sizes.large.eventsPerSecond >= 0.9 * r.sizes.searchOff.large.eventsPerSecond),
      ],
      ...(searchLag
        ? [['An appended event found by its words p99 < 1 s after its answer, under 1000-event batches on 4 connections (SQLite)', `${searchLag.p99.toFixed(0)} ms (p50 ${searchLag.p50.toFixed(0)} ms, ${searchLag.samples} samples)`, '', '', met(searchLag.p99 < 1000)]]
        : []),
      ['Batch ingestion with three active log streams within 10% of none (SQLite)', `${fmt(r.streams.three)} events/s`, `${fmt(r.streams.none)} events/s without`, x(r.streams.ratio), met(r.streams.ratio >= 0.9)],
      ['Chains gap-free and linked after 100 companies on 1, 2 and 4 processes', r.multi.map((m) => `${m.processes}: ${m.gapFree && m.linked ? 'yes' : 'NO'}`).join(', '), '', '', met(r.multi.every((m) => m.gapFree && m.linked))],
    ],
  );
  const growth = table(
    ['Entries', 'Batch events/s', 'Single req/s (p99)', 'GET /logs/{id} p99', 'Inclusion proof p99', 'Consistency proof p99', 'Trace search p99', 'Bytes on disk per entry', 'Canonical JSON per entry', 'Start to ready'],
    r.growth.map((g) => [fmt(g.entries), fmt(g.batchEventsPerSecond), `${fmt(g.singleRps)} (${g.singleP99} ms)`, `${g.entryReadP99} ms`, `${g.inclusionProofP99} ms`, `${g.consistencyProofP99} ms`, `${g.traceSearchP99} ms`, fmt(g.bytesPerEntry), fmt(g.canonicalBytesPerEntry), `${fmt(g.startToReadyMs)} ms`]),
  );
  const multi = table(
    ['Service processes', 'Companies', 'Events/s (all)', 'p99 (slowest process)', 'Failed requests', 'Every chain gap-free', 'Every chain linked'],
    r.multi.map((m) => [m.processes, m.companies, fmt(m.eventsPerSecond), `${m.p99} ms`, m.non2xx, m.gapFree ? 'yes' : 'NO', m.linked ? 'yes' : 'NO']),
  );
  const stageNames = [...new Set([...r.profile.single.keys(), ...r.profile.batch.keys()])].sort((a, b) => (r.profile.single.get(b) ?? 0) - (r.profile.single.get(a) ?? 0));
  const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  const stages = table(
    ['Stage', 'Single event, µs per request', 'Batch, µs per event'],
    [
      ...stageNames.map((st) => [st, (r.profile.single.get(st) ?? 0).toFixed(1), ((r.profile.batch.get(st) ?? 0) / 1000).toFixed(1)]),
      ['**all threads**', sum(r.profile.single).toFixed(1), (sum(r.profile.batch) / 1000).toFixed(1)],
    ],
  );
  const other = table(
    ['Measure', 'Result'],
    [
      ['Batch ingestion by event size, SQLite', sizesLine(r.sizes)],
      ['Batch ingestion, PostgreSQL', `${fmt(r.postgres.batch.rps * 1000)} events/s (${x((r.postgres.batch.rps * 1000) / r.signs)} the signing rate)`],
      ['Single-event ingestion, SQLite, 64 connections', `${fmt(r.sqlite.single.rps)} req/s, p50 ${r.sqlite.single.p50} ms, p99 ${r.sqlite.single.p99} ms; bare route ${fmt(r.bare.rps)} req/s`],
      ['Single-event ingestion, PostgreSQL, 64 connections', `${fmt(r.postgres.single.rps)} req/s, p50 ${r.postgres.single.p50} ms, p99 ${r.postgres.single.p99} ms`],
      ['Raw SQLite inserts, 1000-row transactions', `${fmt(r.raw)} rows/s (a new trace_id on every row: ${fmt(r.rawWorst)})`],
      ['Streamed JSONL export, SQLite', exportLine(r.sqlite.exported)],
      ['Streamed JSONL export, PostgreSQL', exportLine(r.postgres.exported)],
      ['Forensics on one trace, SQLite (first call, then again)', forensicsLine(r.forensics)],
      ['Web console in Chromium', consoleLine(r.consoleB)],
      ['Strict body parser, one core', parserLine(r.parser)],
    ],
  );
  return `# Performance

Generated by \`npm run bench\` (code in \`packages/server/bench/\`); the figures are also saved to
\`docs/performance.json\`, and \`npm run bench -- --compare docs/performance.json\` (run before the new
results overwrite it, so copy it first) prints every figure beside a saved run's with the change in percent.
The service runs as its own process, driven over real HTTP on loopback by autocannon from the bench
process on the same machine. Each load runs ${r.duration} s after a warm-up (the growth points 5 s).
SQLite runs with WAL and \`synchronous=FULL\`; PostgreSQL is the local server with default settings.
Ceilings are measured in the same run, and targets are ratios to them where one exists: this machine's
absolute speed varies from run to run.

Latest run: ${r.runAt} on ${r.machine}.

## Targets

${targets}

## Verification at scale

A ${fmt(v.entries)}-entry SQLite ledger built through the real appender in ${v.buildSeconds.toFixed(0)} s, then
verified in full by the service's verifier with VERIFY_WORKERS = ${r.cores}: ${s1(v.report.duration_ms)} plain
(${v.report.tree_hashes_checked.toLocaleString('en-US')} tree hashes, ${v.report.checkpoints_checked} checkpoint signatures, ${v.report.violation_count} violations), ${s1(v.signed.duration_ms)} with every
entry signature (${v.signed.signatures_checked.toLocaleString('en-US')} signatures).

## Growth

The same service and loads on the empty ledger and on the verification part's ledger.

${growth}

## Many companies, several processes (PostgreSQL)

100 companies, each loading 100-event batches, split between the processes, 8 connections per process;
every process has its own port on one database. After the load, every company's chain is checked in
SQL: seqs 0…n−1 with none missing, and every \`prev_hash\` equal to the hash before it.

${multi}

Noisy neighbour, one process: company B's single events on 4 connections took p50 ${r.neighbour.alone.p50} ms,
p99 ${r.neighbour.alone.p99} ms alone (${fmt(r.neighbour.alone.rps)} req/s), and p50 ${r.neighbour.besideBatches.p50} ms, p99 ${r.neighbour.besideBatches.p99} ms
(${fmt(r.neighbour.besideBatches.rps)} req/s) while company A loaded 1000-event batches on 4 connections
(${fmt(r.neighbour.batchEventsPerSecond)} events/s).

Log streams (\`bench/streams.ts\`, SQLite): ${streamsLine(r.streams)}. The streams write sealed
directory segments in the ledger's JSON, OCSF and CEF, so their whole cost (planning, inclusion and
consistency proofs, rendering, fsync) is the service's; "no stream" is the mean of a load before they
were created and one while they were paused.

Key custody and agent signatures (\`bench/custody.ts\`, SQLite, a SoftHSM2 token of the bench's own): ${custodyLine(r.custody)}.
With the key in a token, signing workers and SQLite's writer thread sign nothing (a token key cannot be
copied to them): every group is signed by the token, a large one over its sessions in libuv's thread pool
(docs/transparency.md, "Key custody"). Agent-signed events cost the service one Ed25519 verification and
one canonical text each, and one register read per request.

## Citus (a coordinator and two workers on this machine)

A Citus cluster of the bench's own (\`bench/citus.ts\`): three PostgreSQL servers on the same two
cores as the service and the load, so this measures what distribution costs, not what more machines
give. ${citusLine(r.citus)}.

The ${fmt(r.citus.verify.entries)}-entry ledger was built on the coordinator's own tables in ${r.citus.verify.buildSeconds.toFixed(0)} s (\`LEDGER_STORE=postgres\`),
verified, then distributed in place by \`audit-ledger migrate\` (Citus copies the rows to the
workers), verified again, and its shard group moved to the other worker with
\`citus_move_shard_placement\` (logical replication, writes allowed during the copy). docs/scaling.md
says what these mean for operators.

## The append path, feature by feature

Each row is a fresh SQLite service of the same run under the same loads (\`bench/features.ts\`:
single events on 64 connections, the service's CPU per request on every thread; 1000-event batches
on 4 connections); the base has every optional feature off, and each other row turns one on, so its
difference from the base is what that feature costs an event. No webhook fires per appended event
(only on a failed approval check, inside the approval row); the continuity hold is one lookup per
append group, always on, inside the profile's \`commit\` stage below.

${featuresTable(r.features ?? [])}

## Where the CPU goes

The service run again under each load with V8's CPU profiler on every thread (\`node --cpu-prof\`;
the profiler itself slows it, so these totals are above the unprofiled ones), each sample given to
the deepest frame that belongs to a stage (\`bench/profile-stages.ts\`): \`commit\` is the SQLite
writer thread's inserts, tree hashes and commits; \`signature\` the Ed25519 signing wherever it
runs; \`hand-off\` the appender building the group and passing it on; \`HTTP\` Fastify, Node's HTTP
and the route handlers; \`startup\` the loading of modules before the load began.

${stages}

## Other measures

${other}

${kept}
`;
}

export function readExisting(file: string): string {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
}
