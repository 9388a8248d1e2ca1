// The Citus cluster the issue-45 suites run on (helpers/citus.ts), built from the extension that
// scripts/install-citus.sh installs: a coordinator and two workers of the test's own, on free
// ports. A table distributed by company puts each company's rows on one shard, on a worker, and a
// company's rows are found there and through the coordinator; a reference table is on every node.
// The ledger's migrations distribute its schema there; LEDGER_STORE=citus refuses a database that
// is not a coordinator; and docs/operations.md's `sh citus` blocks, run as written, distribute an
// existing single-server ledger in place, add a worker and rebalance, and find a company's worker.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOTSTRAP, bootstrapKey, call, fullVerification, killLeftovers, startService } from './fault/harness.js';
import { type CitusCluster, citusCluster } from './helpers/citus.js';
import { cliOnPath, runLine, shellBlocks } from './helpers/doc-blocks.js';
import { runCli } from './helpers/process.js';
import { createTestDatabase } from './helpers/stores.js';
import { CITUS_REFERENCE_TABLES } from '../src/store/citus.js';
import { openPostgresStore } from '../src/store/postgres.js';

describe('a Citus cluster of the test\'s own', () => {
  let cluster: CitusCluster;
  beforeAll(async () => {
    cluster = await citusCluster('smoke');
  }, 120_000);
  afterAll(() => {
    killLeftovers();
    cluster?.drop();
  });

  it('has two active workers, distributes by company_id (one shard per company) and replicates a reference table to every node', async () => {
    const nodes = await cluster.query<{ nodeport: number; isactive: boolean }>("SELECT nodeport, isactive FROM pg_dist_node WHERE noderole = 'primary' AND groupid > 0 ORDER BY nodeport");
    expect(nodes.map((n) => n.nodeport).sort()).toEqual([...cluster.ports.workers].sort());
    expect(nodes.every((n) => n.isactive)).toBe(true);

    await cluster.query('CREATE TABLE entries (company_id text NOT NULL, seq bigint NOT NULL, data text, PRIMARY KEY (company_id, seq))');
    await cluster.query("SELECT create_distributed_table('entries', 'company_id')");
    await cluster.query('CREATE TABLE keys (key_id text PRIMARY KEY, public_key text NOT NULL)');
    await cluster.query("SELECT create_reference_table('keys')");
    const companies = Array.from({ length: 8 }, (_, i) => `company-${i}`);
    for (const c of companies) await cluster.query('INSERT INTO entries SELECT $1, s, $2 FROM generate_series(0, 9) s', [c, `of ${c}`]);
    await cluster.query("INSERT INTO keys VALUES ('k1', 'pk')");

    // Each company's rows on exactly one shard; the shards spread over both workers.
    const placements = await cluster.query<{ company: string; nodeport: number }>(
      "SELECT c AS company, p.nodeport FROM unnest($1::text[]) c, LATERAL (SELECT nodeport FROM pg_dist_shard_placement WHERE shardid = get_shard_id_for_distribution_column('entries', c)) p",
      [companies],
    );
    expect(placements).toHaveLength(companies.length);
    expect(new Set(placements.map((p) => p.nodeport)).size).toBe(2);
    for (const c of companies) expect(await cluster.query('SELECT seq FROM entries WHERE company_id = $1 ORDER BY seq', [c])).toHaveLength(10);
    expect(Number((await cluster.query<{ n: string }>('SELECT count(*) AS n FROM entries'))[0]?.n)).toBe(80);
    // The reference table is on every worker, read there directly.
    for (const w of [0, 1]) expect(await cluster.query('SELECT key_id FROM keys', [], w)).toEqual([{ key_id: 'k1' }]);
  }, 120_000);

  it("the ledger's migrations on the coordinator distribute its schema: every table of a company's data by company_id, co-located; the service-wide ones as reference tables; again, nothing changes", async () => {
    const store = openPostgresStore(cluster.url);
    try {
      expect((await store.migrate()).length).toBeGreaterThan(0);
      const parts = await cluster.query<{ name: string; method: string; colocation: number }>('SELECT logicalrelid::regclass::text AS name, partmethod AS method, colocationid AS colocation FROM pg_dist_partition');
      const tables = await cluster.query<{ name: string; has_company: boolean }>(
        "SELECT t.table_name AS name, EXISTS (SELECT 1 FROM information_schema.columns c WHERE c.table_schema = t.table_schema AND c.table_name = t.table_name AND c.column_name = 'company_id') AS has_company FROM information_schema.tables t WHERE t.table_schema = 'public' AND t.table_type = 'BASE TABLE' AND t.table_name NOT IN ('entries', 'keys')",
      );
      const by = new Map(parts.map((p) => [p.name, p]));
      const reference = tables.filter((t) => CITUS_REFERENCE_TABLES.includes(t.name));
      expect(reference.map((t) => t.name).sort()).toEqual([...CITUS_REFERENCE_TABLES].sort());
      for (const t of reference) expect(by.get(t.name)?.method, t.name).toBe('n');
      const companies = tables.filter((t) => t.has_company && !CITUS_REFERENCE_TABLES.includes(t.name));
      expect(companies.length).toBeGreaterThan(30);
      for (const t of companies) expect(by.get(t.name)?.method, t.name).toBe('h');
      // One co-location group: a company's rows of every table on one node.
      expect(new Set(companies.map((t) => by.get(t.name)?.colocation)).size).toBe(1);
      // Only the migration bookkeeping stays on the coordinator alone.
      expect(tables.filter((t) => !by.has(t.name)).map((t) => t.name).sort()).toEqual(['schema_migrations', 'schema_migrations_lock']);
      // Migrating again changes nothing.
      expect(await store.migrate()).toEqual([]);
      expect(await cluster.query('SELECT logicalrelid::regclass::text AS name, partmethod AS method, colocationid AS colocation FROM pg_dist_partition')).toHaveLength(parts.length);
    } finally {
      await store.close();
    }
  }, 120_000);

  it('LEDGER_STORE=citus on a plain PostgreSQL: migrate refuses (exit 1, saying why) and creates nothing; the service will not start', async () => {
    const db = await createTestDatabase('postgres');
    try {
      const env = { DATABASE_URL: db.databaseUrl as string, LEDGER_STORE: 'citus' };
      const r = await runCli(['migrate'], env);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('LEDGER_STORE=citus, but DATABASE_URL is not a Citus coordinator');
      const store = openPostgresStore(db.databaseUrl as string);
      try {
        const tables = await store.db.selectFrom('information_schema.tables' as never).select('table_name' as never).where('table_schema' as never, '=', 'public' as never).execute();
        expect(tables).toEqual([]);
      } finally {
        await store.close();
      }
      const serve = await runCli(['serve'], { ...env, PORT: '0', LEDGER_DATA_DIR: db.dataDir });
      expect(serve.code).not.toBe(0);
      expect(serve.stderr).toContain('not a Citus coordinator');
      // Without DATABASE_URL it is a configuration error.
      const noUrl = await runCli(['migrate'], { LEDGER_STORE: 'citus', LEDGER_DATA_DIR: db.dataDir });
      expect(noUrl.code).not.toBe(0);
      expect(noUrl.stderr).toContain('LEDGER_STORE=citus needs DATABASE_URL');
    } finally {
      await db.drop();
    }
  }, 120_000);

  it("docs/operations.md's Citus runbook as written: a single-server ledger distributed in place (nothing lost, verification clean), a worker added and the cluster rebalanced, a company's worker found", async () => {
    const blocks = shellBlocks('docs/operations.md').filter((b) => b.name === 'citus');
    expect(blocks).toHaveLength(3);
    const [distribute, rebalance, where] = blocks as [(typeof blocks)[number], (typeof blocks)[number], (typeof blocks)[number]];
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-citus-runbook-'));
    const bin = cliOnPath(dir);
    // The ledger's server, not yet a coordinator: a database without the extension on the
    // coordinator node (Citus preloaded, as the runbook's first step leaves it); the workers have
    // the database with the extension.
    const db = 'single_server';
    await cluster.query(`CREATE DATABASE ${db}`, [], undefined, 'postgres');
    // 8 shards per table, not 32: the rebalance below moves a few shard groups (the suite's time), as the fault suite does.
    await cluster.query(`ALTER DATABASE ${db} SET citus.shard_count = 8`, [], undefined, 'postgres');
    for (const w of [0, 1]) {
      await cluster.query(`CREATE DATABASE ${db}`, [], w, 'postgres');
      await cluster.query('CREATE EXTENSION citus', [], w, db);
    }
    const url = `postgres://postgres@127.0.0.1:${cluster.ports.coordinator}/${db}`;
    const env = { ...BOOTSTRAP, DATABASE_URL: url, LEDGER_DATA_DIR: path.join(dir, 'data'), CHECKPOINT_INTERVAL_MS: '100' };
    let svc = await startService(env);
    const key = await bootstrapKey(svc.url);
    const companyId = (await call(`${svc.url}/api/v1/auth/me`, 'GET', undefined, { 'x-api-key': key })).json().company.id as string;
    for (let i = 0; i < 5; i++) expect((await call(`${svc.url}/api/v1/logs/batch`, 'POST', { logs: Array.from({ length: 100 }, (_, j) => ({ event_type: 'before.distribution', data: { i, j } })) }, { 'x-api-key': key })).status).toBe(200);
    expect(await svc.stop()).toBe(0);
    expect(await cluster.query('SELECT 1 FROM pg_extension WHERE extname = $1', ['citus'], undefined, db)).toEqual([]);

    const run = async (line: string, vars: Record<string, string>) => {
      const r = await runLine(line, { cwd: dir, env: { DATABASE_URL: url, ...vars }, bin });
      expect(r.code, `${line}\n${r.stdout}\n${r.stderr}`).toBe(0);
      return r.stdout;
    };
    let out = '';
    for (const line of distribute.lines) {
      // "Run the citus_add_node line once per worker."
      const workers = line.includes('$WORKER_PORT') ? cluster.ports.workers : [0];
      for (const port of workers) out += await run(line, { COORDINATOR_HOST: '127.0.0.1', COORDINATOR_PORT: String(cluster.ports.coordinator), WORKER_HOST: '127.0.0.1', WORKER_PORT: String(port) });
    }
    expect(out).toMatch(/citus: distributed \d+ tables by company_id and made 8 reference tables/);
    const placed = await cluster.query<{ nodeport: number }>('SELECT DISTINCT nodeport FROM pg_dist_shard_placement p JOIN pg_dist_shard s USING (shardid) WHERE s.logicalrelid = $1::regclass', ['log_entries'], undefined, db);
    expect(placed.map((p) => p.nodeport).sort()).toEqual([...cluster.ports.workers].sort());

    svc = await startService({ ...env, LEDGER_STORE: 'citus' });
    expect((await call(`${svc.url}/api/v1/logs/batch`, 'POST', { logs: [{ event_type: 'after.distribution', data: {} }] }, { 'x-api-key': key })).status).toBe(200);
    const report = await fullVerification(svc.url, key, svc.logs);
    expect(report.violation_count).toBe(0);
    expect(report.entries_checked).toBeGreaterThanOrEqual(501);

    // A third worker (Citus preloaded, the database, the extension), added and rebalanced by the runbook while the service runs.
    const third = await cluster.addWorker();
    await cluster.query(`CREATE DATABASE ${db}`, [], third, 'postgres');
    await cluster.query('CREATE EXTENSION citus', [], third, db);
    for (const line of rebalance.lines) await run(line, { NEW_WORKER_HOST: '127.0.0.1', NEW_WORKER_PORT: String(cluster.ports.workers[third]) });
    const onThird = await cluster.query<{ n: string }>('SELECT count(*) AS n FROM pg_dist_shard_placement WHERE nodeport = $1', [cluster.ports.workers[third]], undefined, db);
    expect(Number(onThird[0]?.n)).toBeGreaterThan(0);
    expect((await call(`${svc.url}/api/v1/logs/batch`, 'POST', { logs: [{ event_type: 'after.rebalance', data: {} }] }, { 'x-api-key': key })).status).toBe(200);
    expect((await fullVerification(svc.url, key, svc.logs)).violation_count).toBe(0);

    const found = (await run(where.lines[0] as string, { COMPANY_ID: companyId })).trim();
    const actual = await cluster.query<{ nodeport: number }>("SELECT nodeport FROM pg_dist_shard_placement WHERE shardid = get_shard_id_for_distribution_column('log_entries', $1::text)", [companyId], undefined, db);
    expect(found).toBe(`127.0.0.1|${actual[0]?.nodeport}`);
    expect(await svc.stop()).toBe(0);
    fs.rmSync(dir, { recursive: true, force: true });
  }, 240_000);
});
