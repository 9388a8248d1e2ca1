// The Citus cluster the issue-45 suites run on (helpers/citus.ts), built from the extension that
// scripts/install-citus.sh installs: a coordinator and two workers of the test's own, on free
// ports. A table distributed by company puts each company's rows on one shard, on a worker, and a
// company's rows are found there and through the coordinator; a reference table is on every node.
// The service's own Citus mode is not built yet (issue 45); this proves the engine and the helper.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CitusCluster, citusCluster } from './helpers/citus.js';
import { CITUS_REFERENCE_TABLES } from '../src/store/citus.js';
import { openPostgresStore } from '../src/store/postgres.js';

describe('a Citus cluster of the test\'s own', () => {
  let cluster: CitusCluster;
  beforeAll(async () => {
    cluster = await citusCluster('smoke');
  }, 120_000);
  afterAll(() => cluster?.drop());

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
});

