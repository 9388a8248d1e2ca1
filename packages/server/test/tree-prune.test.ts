// `audit-ledger tree prune` on a database written before the tree was thinned: the rows of the
// levels no longer stored go, the kept ones stay, and proofs and a full verification agree
// before and after. The old layout is made by adding every other level's hash, rebuilt from the
// entries, as the appender used to write them. Both stores; the real CLI.
import { entryLeafHash, isStoredLevel, splitStoredHashIndex, storedHashCount, toHex, TreeEdge } from '@audit-ledger/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { STORE_KINDS } from './helpers/env.js';
import { ingestBatch } from './helpers/ledger.js';
import { runCli } from './helpers/process.js';

describe.each(STORE_KINDS)('tree prune on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind, { env: { CHECKPOINT_INTERVAL_MS: '0' } });
  });
  afterAll(() => t.close());

  async function company(n: number) {
    const acct = await t.newAccount();
    const { key } = await t.createKey(acct.token, 1_000_000);
    for (let i = 0; i < n; i += 100) await ingestBatch(t, key, Array.from({ length: Math.min(100, n - i) }, (_, j) => ({ event_type: 'step', data: { i: i + j } })));
    const c = acct.companyId;
    // The old layout: every level's hash, the leaves too.
    const rows = await t.store.db.selectFrom('log_entries').select(['seq', 'hash']).where('company_id', '=', c).orderBy('seq').execute();
    const edge = TreeEdge.empty();
    const old: Array<{ company_id: string; idx: number; hash: string }> = [];
    for (const r of rows) for (const h of edge.append(entryLeafHash(r.hash))) old.push({ company_id: c, idx: old.length, hash: toHex(h) });
    const extra = old.filter((o) => !isStoredLevel(splitStoredHashIndex(o.idx).level));
    for (let i = 0; i < extra.length; i += 500) await t.store.db.insertInto('merkle_hashes').values(extra.slice(i, i + 500)).execute();
    const req = (url: string) => t.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
    const treeRows = async () => (await t.store.db.selectFrom('merkle_hashes').select('idx').where('company_id', '=', c).orderBy('idx').execute()).map((r) => r.idx);
    return { c, n: rows.length, old, req, treeRows, key };
  }

  /** A full verification's report. */
  async function verify(key: string) {
    const started = await t.inject({ method: 'POST', url: '/api/v1/integrity/verify', headers: { 'x-api-key': key }, payload: {} });
    expect(started.statusCode, started.body).toBe(202);
    const jobId = started.json().job_id as string;
    let job = started.json();
    await vi.waitFor(async () => {
      job = (await t.inject({ method: 'GET', url: `/api/v1/integrity/jobs/${jobId}`, headers: { 'x-api-key': key } })).json();
      expect(job.status).toBe('completed');
    });
    return job.report;
  }

  it('removes the rows of levels no longer stored, and nothing a proof or a verification needs', async () => {
    const a = await company(700);
    const b = await company(40);
    expect(await a.treeRows()).toHaveLength(storedHashCount(a.n));
    const proofBefore = (await a.req(`/api/v1/logs?limit=1&order=asc`)).json().items[0].log_id as string;
    const proof = await a.req(`/api/v1/logs/${proofBefore}/proof`);
    expect(proof.statusCode, proof.body).toBe(200);
    const before = proof.json();
    expect(before).toMatchObject({ leaf_index: 0, proof: expect.arrayContaining([expect.stringMatching(/^[0-9a-f]{64}$/)]) });

    const env: Record<string, string> = kind !== 'sqlite' ? { DATABASE_URL: t.db.databaseUrl as string } : { LEDGER_DATA_DIR: t.db.dataDir };
    const res = await runCli(['tree', 'prune'], env);
    expect(res.code, res.stderr).toBe(0);
    const removedA = a.old.filter((o) => !isStoredLevel(splitStoredHashIndex(o.idx).level)).length;
    expect(res.stdout).toContain(`company ${a.c}: ${removedA} tree hash rows removed (${a.n} entries)`);
    expect(res.stdout).toContain(`company ${b.c}: `);

    // Only the kept levels are left, each with the hash the entries give.
    const kept = a.old.filter((o) => isStoredLevel(splitStoredHashIndex(o.idx).level));
    expect(await a.treeRows()).toEqual(kept.map((o) => o.idx));
    expect(await b.treeRows()).toEqual(b.old.filter((o) => isStoredLevel(splitStoredHashIndex(o.idx).level)).map((o) => o.idx));
    expect((await a.req(`/api/v1/logs/${proofBefore}/proof`)).json()).toEqual(before);
    expect(await verify(a.key)).toMatchObject({ chain_status: 'valid', violation_count: 0 });

    // A second run finds nothing left to remove.
    const again = await runCli(['tree', 'prune'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^0 tree hash rows removed in all, \d+ companies checked$/m);
  });
});
