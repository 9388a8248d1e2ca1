// The bench's Citus part (issue 45), on this machine: a Citus cluster of its own (a coordinator
// and two workers, bench/citus-cluster.ts) beside the shared PostgreSQL.
// - 100 companies ingesting batches through one service process: plain PostgreSQL, then Citus,
//   as a ratio from the same run; and single events spread over the 100 companies, p50/p99.
// - A 1M-entry ledger built on the coordinator before distribution (LEDGER_STORE=postgres: plain
//   tables there): a full verification; then `migrate` distributing it in place (Citus copies
//   the rows to the workers), timed; the same verification on the distributed ledger; and the
//   company's shard group moved to the other worker (logical replication), timed.
import autocannon from 'autocannon';
import type { CompletedVerificationReport } from '../src/kernel/shapes.js';
import { openPostgresStore } from '../src/store/postgres.js';
import type { Store } from '../src/store/store.js';
import { citusCluster, createCitusDatabase } from './citus-cluster.js';
import { benchVerifier, buildLedger } from './integrity.js';
import { companies, manyCompanies, type MultiRow, type Start, stopChild } from './multi.js';
import { scratchDir } from './scratch.js';

export interface CitusBench {
  /** 100 companies, batches of 100, one process: plain PostgreSQL and Citus. */
  plain: MultiRow;
  citus: MultiRow;
  /** Single events over 100 companies (64 connections), one process. */
  singles: { plain: { rps: number; p50: number; p99: number }; citus: { rps: number; p50: number; p99: number } };
  verify: { entries: number; buildSeconds: number; plainSeconds: number; citusSeconds: number; distributeSeconds: number; moveSeconds: number; megabytes: number };
}

/** A full verification (plain: chain, tree and checkpoints) of one company, and the seconds it took. */
async function verifyOnce(store: Store, companyId: string, url: string): Promise<{ seconds: number; report: CompletedVerificationReport }> {
  const verifier = benchVerifier(store, { databaseUrl: url, dataDir: scratchDir('al-bench-citus-verify-') });
  try {
    const started = performance.now();
    const report = await verifier.run(companyId, false);
    return { seconds: (performance.now() - started) / 1000, report };
  } finally {
    await verifier.close();
  }
}

/** Single events from 64 connections, each request a company's (round robin over the keys). */
async function singles(url: string, keys: string[], body: string, seconds: number) {
  const r = await autocannon({
    url: `${url}/api/v1/logs`,
    connections: 64,
    duration: seconds,
    requests: keys.map((key) => ({ method: 'POST' as const, body, headers: { 'content-type': 'application/json', 'x-api-key': key } })),
  });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99 };
}

export async function citusPart(opts: { plainUrl: () => Promise<string>; start: Start; seconds: number; batchBody: (n: number) => string; single: string; entries: number; event: (i: number) => unknown }): Promise<CitusBench> {
  const cluster = await citusCluster('bench');
  try {
    const loads = async (url: string) => {
      const row = await manyCompanies(url, opts.start, 1, opts.seconds, opts.batchBody);
      const s = await opts.start({ DATABASE_URL: url });
      try {
        const keys = await companies(url, s.url, 100, `singles-${Date.now()}`);
        return { row, singles: await singles(s.url, keys.map((k) => k.key), opts.single, opts.seconds) };
      } finally {
        await stopChild(s.child);
      }
    };
    console.log('  citus: 100 companies on plain PostgreSQL');
    const plain = await loads(await opts.plainUrl());
    console.log('  citus: 100 companies on Citus');
    const citusUrl = await createCitusDatabase(cluster.ports, 'companies');
    const citus = await loads(citusUrl);

    // The 1M-entry ledger: built on the coordinator's own tables, verified, distributed in place, verified again, moved.
    const url = await createCitusDatabase(cluster.ports, 'million');
    const local = openPostgresStore(url, 10, undefined, 'postgres');
    await local.migrate();
    const { companyId, buildSeconds } = await buildLedger(local, scratchDir('al-bench-citus-'), opts.entries, opts.event, 'citus', 'citus@example.com');
    const plainVerify = await verifyOnce(local, companyId, url);
    await local.close();
    const megabytes = Number((await cluster.query<{ b: string }>("SELECT pg_total_relation_size('log_entries') + pg_total_relation_size('merkle_hashes') AS b", [], undefined, 'million'))[0]?.b) / 2 ** 20;

    const distributed = openPostgresStore(url, 10, undefined, 'citus');
    const d0 = performance.now();
    await distributed.migrate();
    const distributeSeconds = (performance.now() - d0) / 1000;
    const citusVerify = await verifyOnce(distributed, companyId, url);
    for (const r of [plainVerify.report, citusVerify.report]) if (r.violation_count !== 0 || r.entries_checked < opts.entries) throw new Error(`verification: ${JSON.stringify(r).slice(0, 300)}`);
    await distributed.close();

    const placement = (await cluster.query<{ shardid: string; nodeport: number }>("SELECT shardid, nodeport FROM pg_dist_shard_placement WHERE shardid = get_shard_id_for_distribution_column('log_entries', $1::text)", [companyId], undefined, 'million'))[0];
    const to = cluster.ports.workers.find((p) => p !== Number(placement?.nodeport)) as number;
    const m0 = performance.now();
    await cluster.query("SELECT citus_move_shard_placement($1, '127.0.0.1', $2, '127.0.0.1', $3)", [placement?.shardid, placement?.nodeport, to], undefined, 'million');
    const moveSeconds = (performance.now() - m0) / 1000;
    return {
      plain: plain.row,
      citus: citus.row,
      singles: { plain: plain.singles, citus: citus.singles },
      verify: { entries: opts.entries, buildSeconds, plainSeconds: plainVerify.seconds, citusSeconds: citusVerify.seconds, distributeSeconds, moveSeconds, megabytes },
    };
  } finally {
    cluster.drop();
  }
}

export const citusLine = (c: CitusBench): string =>
  `100 companies' batches: plain ${Math.round(c.plain.eventsPerSecond)} events/s, Citus ${Math.round(c.citus.eventsPerSecond)} (${(c.citus.eventsPerSecond / c.plain.eventsPerSecond).toFixed(2)}×), chains intact ${c.plain.gapFree && c.citus.gapFree && c.plain.linked && c.citus.linked}; ` +
  `singles over 100 companies p50/p99: plain ${c.singles.plain.p50}/${c.singles.plain.p99} ms, Citus ${c.singles.citus.p50}/${c.singles.citus.p99} ms; ` +
  `${c.verify.entries} entries (${c.verify.megabytes.toFixed(0)} MB): verification ${c.verify.plainSeconds.toFixed(1)} s plain, ${c.verify.citusSeconds.toFixed(1)} s distributed; distributed in place in ${c.verify.distributeSeconds.toFixed(1)} s; shard move ${c.verify.moveSeconds.toFixed(1)} s`;
