// Integrity status, full verification reports and the background verifier, over HTTP,
// with tampering done directly in the database. Both stores.
import { generateKeyPairSync } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { checkpointText, parseCheckpointText, parseNote, storedHashIndex } from '@audit-ledger/core';
import { rawPublicKey, signNote } from '../src/crypto/signing.js';
import { memoryCustody } from '../src/crypto/custody.js';
import { STORE_KINDS } from './helpers/env.js';
import { FakeClock, problem, startTestApp, type TestApp } from './helpers/app.js';
import { ingestBatch } from './helpers/ledger.js';
import { buildApp } from '../src/app.js';
import { MemoryCounterStore } from '../src/ratelimit/counter.js';

interface Violation {
  seq: number | null;
  log_id: string | null;
  kind: string;
  detail: string;
}

describe.each(STORE_KINDS)('full verification on %s', (kind) => {
  let t: TestApp;
  const logLines: string[] = [];
  beforeAll(async () => {
    t = await startTestApp(kind, { env: { CHECKPOINT_INTERVAL_MS: '0', INTEGRITY_VERIFY_INTERVAL_SECONDS: '0' }, logLines });
  });
  afterAll(() => t.close());

  /** A fresh company with `n` entries in batches of 50 (so n/50 checkpoints). */
  async function ledger(n: number) {
    const acct = await t.newAccount();
    const { key } = await t.createKey(acct.token, 1_000_000);
    const ids: string[] = [];
    for (let i = 0; i < n; i += 50) {
      ids.push(...(await ingestBatch(t, key, Array.from({ length: Math.min(50, n - i) }, (_, j) => ({ event_type: 'step', data: { i: i + j } })))).json().log_ids);
    }
    const c = acct.companyId;
    const req = (method: 'GET' | 'POST', url: string, payload?: object) => t.inject({ method, url, headers: { 'x-api-key': key }, ...(payload ? { payload } : {}) });
    /** Starts a full verification and waits for its report. */
    const verify = async (payload: object = {}) => {
      const res = await req('POST', '/api/v1/integrity/verify', payload);
      expect(res.statusCode, res.body).toBe(202);
      expect(res.headers.location).toBe(`/api/v1/integrity/jobs/${res.json().job_id}`);
      const jobId = res.json().job_id;
      let job = res.json();
      await vi.waitFor(
        async () => {
          job = (await req('GET', `/api/v1/integrity/jobs/${jobId}`)).json();
          expect(job.status, JSON.stringify(job)).toBe('completed');
        },
        { timeout: 20_000, interval: 20 },
      );
      const report = (await req('GET', '/api/v1/integrity/report')).json();
      expect(report).toEqual(job.report);
      return report as { chain_status: string; violations: Violation[]; violation_count: number; entries_checked: number } & Record<string, unknown>;
    };
    const sql = t.store.db;
    return { acct, key, ids, c, req, verify, sql };
  }

  it('17: an idempotency mark added, changed or removed in the database fails the service\'s own checks (GET /logs/{id}/verify, and the full scan for added and changed ones), as docs/ledger-format.md §10 says', async () => {
    const l = await ledger(0);
    // seq 0 key k1; seq 1 key k2; seq 2 key k1 with other data: appended and marked (conflict of seq 0).
    const ids = (await ingestBatch(t, l.key, [
      { event_type: 'step', idempotency_key: 'k1', data: { v: 1 } },
      { event_type: 'step', idempotency_key: 'k2', data: { v: 2 } },
      { event_type: 'step', idempotency_key: 'k1', data: { v: 3 } },
      { event_type: 'step', data: { v: 4 } },
    ])).json().log_ids as string[];
    const check = async (id: string) => (await l.req('GET', `/api/v1/logs/${id}/verify`)).json() as { chain_valid: boolean; problems: Array<{ kind: string }> };
    for (const id of ids) expect((await check(id)).problems, id).toEqual([]);
    expect((await l.verify()).violations).toEqual([]);
    const mark = (seq: number, value: string | null) => l.sql.updateTable('log_entries').set({ idempotency_conflict_of: value }).where('company_id', '=', l.c).where('seq', '=', seq).execute();
    // Added (an entry with a new key, and one with none), changed (naming another entry).
    await mark(1, ids[0] as string);
    await mark(3, ids[0] as string);
    await mark(2, ids[1] as string);
    for (const seq of [1, 2, 3]) expect(await check(ids[seq] as string), String(seq)).toMatchObject({ chain_valid: false, problems: [{ kind: 'idempotency_mark' }] });
    expect((await check(ids[0] as string)).problems).toEqual([]);
    expect((await l.verify()).violations.filter((v) => v.kind === 'idempotency_mark').map((v) => v.seq)).toEqual([1, 2, 3]);
    // Removed: the store's unique index refuses two unmarked entries with one key, so only with it dropped; the entry check still finds it.
    await mark(1, null);
    await mark(3, null);
    await sql`DROP INDEX log_entries_idempotency_uq`.execute(l.sql);
    try {
      await mark(2, null);
      expect(await check(ids[2] as string)).toMatchObject({ chain_valid: false, problems: [{ kind: 'idempotency_mark' }] });
    } finally {
      await mark(2, ids[0] as string);
      await sql`CREATE UNIQUE INDEX log_entries_idempotency_uq ON log_entries (company_id, idempotency_key, (CASE WHEN idempotency_conflict_of IS NULL THEN 0 ELSE seq END)) WHERE idempotency_key IS NOT NULL`.execute(l.sql);
    }
  });

  it('deleting the newest entries: the full verification runs and names them; appends and proofs answer a clear 503, never a 500', async () => {
    const l = await ledger(40);
    // The last three entries (seq 37–39), as an attacker with the database would remove them.
    await l.sql.deleteFrom('log_entries').where('company_id', '=', l.c).where('seq', '>=', 37).execute();
    const append = await l.req('POST', '/api/v1/logs', { event_type: 'after.delete', data: {} });
    expect(append.statusCode, append.body).not.toBe(500);
    const proof = await l.req('GET', `/api/v1/logs/${l.ids[10]}/proof`);
    expect(proof.statusCode, proof.body).not.toBe(500);
    for (const res of [append, proof].filter((r) => r.statusCode >= 500)) {
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ code: 'integrity_failure' });
      expect(res.json().detail).toMatch(/missing/);
    }
    const report = await l.verify();
    expect(report.chain_status).toBe('broken');
    expect(report.violations.filter((v) => v.kind === 'missing_entry').map((v) => v.seq)).toEqual([37]);
    expect(report.violations.find((v) => v.kind === 'missing_entry')?.detail).toMatch(/37.39/);

    // Another process, which has not seen this chain yet, reads its edge from the damaged store:
    // its appends and proofs are refused with 503 integrity_failure, and the full verification
    // (which cannot record its request in the damaged chain) still runs and names the damage.
    const otherStore = t.db.open();
    const other = await buildApp({ config: t.config, store: otherStore, counters: new MemoryCounterStore(), logger: false });
    try {
      const headers = { 'x-api-key': l.key };
      for (const res of [
        await other.inject({ method: 'POST', url: '/api/v1/logs', headers, payload: { event_type: 'after.delete', data: {} } }),
        await other.inject({ method: 'GET', url: `/api/v1/logs/${l.ids[10]}/proof`, headers }),
      ]) {
        expect(problem(res, 503, 'integrity_failure').detail).toMatch(/missing/);
      }
      const job = await other.inject({ method: 'POST', url: '/api/v1/integrity/verify', headers, payload: {} });
      expect(job.statusCode, job.body).toBe(202);
      let done;
      await vi.waitFor(
        async () => {
          done = (await other.inject({ method: 'GET', url: `/api/v1/integrity/jobs/${job.json().job_id}`, headers })).json();
          expect(done.status).toBe('completed');
        },
        { timeout: 20_000, interval: 20 },
      );
      expect((done as unknown as { report: { violations: Violation[] } }).report.violations.filter((v) => v.kind === 'missing_entry').map((v) => v.seq)).toEqual([37]);
    } finally {
      await other.close();
      await otherStore.close();
    }
  });

  it('a clean chain: valid report, counts, range, and status at full coverage', async () => {
    const l = await ledger(300);
    const before = (await l.req('GET', '/api/v1/integrity/status')).json();
    expect(before).toMatchObject({ chain_status: 'unverified', head: { seq: 299 }, last_verified_seq: null, violation_count: 0, coverage_percent: 0 });
    expect(before.checkpoint.tree_size).toBe(300);
    const report = await l.verify();
    // The request is recorded (integrity.verification_requested, seq 300) before the job starts, so the job covers it.
    expect(report).toMatchObject({
      status: 'completed',
      chain_status: 'valid',
      tree_size: 301,
      range: { from_seq: 0, to_seq: 300 },
      entries_checked: 301,
      entries_erased: 0,
      checkpoints_checked: 7,
      signatures_checked: 0,
      violation_count: 0,
      violations: [],
      options: { entry_signatures: false },
    });
    // The stored levels only: 18 level-4 nodes (16 entries each) and one level-8 node (256 entries).
    expect(report.tree_hashes_checked).toBe(19);
    const after = (await l.req('GET', '/api/v1/integrity/status')).json();
    expect(after).toMatchObject({ chain_status: 'valid', head: { seq: 300, hash: expect.stringMatching(/^[0-9a-f]{64}$/) }, last_verified_seq: 300, violation_count: 0, coverage_percent: 100 });
    expect(after.last_verified_at).toEqual(expect.any(String));
    const record = (await l.req('GET', `/api/v1/logs?source=${encodeURIComponent('audit-ledger/admin')}`)).json().items[0];
    expect(record).toMatchObject({ seq: 300, event_type: 'integrity.verification_requested', data: { job_id: report.job_id, entry_signatures: false, actor: { kind: 'api_key' } } });
    const withSigs = await l.verify({ entry_signatures: true });
    expect(withSigs).toMatchObject({ chain_status: 'valid', signatures_checked: 302 });
  });

  it('a changed entry → content_mismatch (changed data) or hash_mismatch (changed event_type) at that entry, nothing else; status broken', async () => {
    const l = await ledger(100);
    await l.sql.updateTable('log_entries').set({ data: '{"i":999}' }).where('company_id', '=', l.c).where('seq', '=', 42).execute();
    await l.sql.updateTable('log_entries').set({ event_type: 'other' }).where('company_id', '=', l.c).where('seq', '=', 43).execute();
    const report = await l.verify();
    expect(report.chain_status).toBe('broken');
    expect(report.violations).toEqual([
      { seq: 42, log_id: l.ids[42], kind: 'content_mismatch', detail: expect.stringMatching(/commit to/) },
      { seq: 43, log_id: l.ids[43], kind: 'hash_mismatch', detail: expect.stringMatching(/recomputed hash/) },
    ]);
    expect((await l.req('GET', '/api/v1/integrity/status')).json()).toMatchObject({ chain_status: 'broken', violation_count: 2 });
    // An error log line an operator's alert can match, naming the company and what failed.
    const logged = logLines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.company_id === l.c);
    expect(logged).toMatchObject([{ level: 50, msg: 'integrity violations found: the chain does not verify', source: 'full', count: 2, kinds: ['content_mismatch', 'hash_mismatch'] }]);
  });

  it('a rewritten entry with its hash recomputed → broken link and the tree no longer matching', async () => {
    const l = await ledger(100);
    const row = await l.sql.selectFrom('log_entries').selectAll().where('company_id', '=', l.c).where('seq', '=', 10).executeTakeFirstOrThrow();
    const { contentCommitment, contentText, entryHash, recordToEntry } = await import('@audit-ledger/core');
    const data = '{"i":-1}';
    const forged = { ...row, data, content_commitment: contentCommitment(Buffer.from(row.content_salt as string, 'base64'), contentText(data, null)) };
    await l.sql.updateTable('log_entries').set({ data, content_commitment: forged.content_commitment, hash: entryHash(recordToEntry(forged)) }).where('company_id', '=', l.c).where('seq', '=', 10).execute();
    const kinds = (await l.verify()).violations.map((v) => `${v.seq}:${v.kind}`);
    expect(kinds).toContain('11:broken_link');
    expect(kinds).toContain('15:merkle_mismatch'); // the stored level-4 node over entries 0–15
    expect(kinds).not.toContain('10:hash_mismatch');
    expect(kinds).not.toContain('10:content_mismatch');
  });

  it('a changed stored tree node → merkle_mismatch naming it', async () => {
    const l = await ledger(64);
    const idx = storedHashIndex(4, 1); // the level-4 node over entries 16–31, completed by entry 31
    await l.sql.updateTable('merkle_hashes').set({ hash: 'ab'.repeat(32) }).where('company_id', '=', l.c).where('idx', '=', idx).execute();
    const report = await l.verify();
    expect(report.violations).toEqual([{ seq: 31, log_id: l.ids[31], kind: 'merkle_mismatch', detail: expect.stringContaining(`stored tree hash ${idx} (level 4`) }]);
  });

  it('a deleted entry: the tree goes on from the stored hash of its block, so later tree damage still shows; with that hash gone too, it says the tree cannot be rebuilt', async () => {
    const l = await ledger(100);
    await l.sql.deleteFrom('log_entries').where('company_id', '=', l.c).where('seq', '=', 30).execute();
    const later = storedHashIndex(4, 4); // entries 64–79, completed by entry 79
    await l.sql.updateTable('merkle_hashes').set({ hash: 'ab'.repeat(32) }).where('company_id', '=', l.c).where('idx', '=', later).execute();
    expect((await l.verify()).violations.map((v) => [v.seq, v.kind])).toEqual([
      [30, 'missing_entry'],
      [79, 'merkle_mismatch'],
    ]);
    await l.sql.deleteFrom('merkle_hashes').where('company_id', '=', l.c).where('idx', '=', storedHashIndex(4, 1)).execute();
    const report = await l.verify();
    expect(report.violations.map((v) => [v.seq, v.kind])).toEqual([
      [30, 'missing_entry'],
      [31, 'merkle_mismatch'],
    ]);
    expect(report.violations[1]?.detail).toMatch(/leaves 16–31 is missing and so is their stored tree hash .*cannot be rebuilt/);
  });

  it('a changed stored checkpoint → checkpoint_inconsistent, whether its root column, its note, or its signer changed', async () => {
    const l = await ledger(150);
    const cps = await l.sql.selectFrom('checkpoints').selectAll().where('company_id', '=', l.c).orderBy('tree_size').execute();
    expect(cps.map((c) => c.tree_size)).toEqual([50, 100, 150]);
    // 1. The root column no longer says what was signed.
    await l.sql.updateTable('checkpoints').set({ root_hash: 'cd'.repeat(32) }).where('company_id', '=', l.c).where('tree_size', '=', 50).execute();
    // 2. The note re-signed by another key (key_id left pointing at the real key).
    const other = generateKeyPairSync('ed25519');
    const body = parseCheckpointText(parseNote(cps[1]?.note as string).text);
    const forgedNote = signNote(checkpointText(body), t.config.ledgerOrigin, memoryCustody(other.privateKey), rawPublicKey(other.publicKey));
    await l.sql.updateTable('checkpoints').set({ note: forgedNote }).where('company_id', '=', l.c).where('tree_size', '=', 100).execute();
    const report = await l.verify();
    expect(report.violations.map((v) => [v.seq, v.kind])).toEqual([
      [49, 'checkpoint_inconsistent'],
      [99, 'checkpoint_inconsistent'],
    ]);
    expect(report.violations[0]?.detail).toMatch(/stored root .* differs from the signed root/);
    expect(report.violations[1]?.detail).toMatch(/note signature does not verify/);
  });

  it('a deleted entry → one missing_entry; a changed signature → bad_signature when signatures are checked', async () => {
    const l = await ledger(100);
    await l.sql.deleteFrom('log_entries').where('company_id', '=', l.c).where('seq', '=', 30).execute();
    await l.sql.updateTable('log_entries').set({ signature: Buffer.alloc(64).toString('base64') }).where('company_id', '=', l.c).where('seq', '=', 70).execute();
    expect((await l.verify()).violations.map((v) => [v.seq, v.kind])).toEqual([[30, 'missing_entry']]);
    const withSigs = await l.verify({ entry_signatures: true });
    expect(withSigs.violations.map((v) => [v.seq, v.kind])).toEqual([
      [30, 'missing_entry'],
      [70, 'bad_signature'],
    ]);
  });

  it('one verification at a time: a second request while one is open → 409 naming it', async () => {
    const l = await ledger(10);
    // Hold the company's verification lease as another process would, so the job stays queued.
    const repo = t.store.integrityStore;
    const now = new Date().toISOString();
    expect(await repo.acquireLease(l.c, 'other-process', now, '2999-01-01T00:00:00.000Z')).toBe(true);
    const first = await l.req('POST', '/api/v1/integrity/verify', {});
    expect(first.statusCode).toBe(202);
    expect(first.json().status).toBe('queued');
    const second = problem(await l.req('POST', '/api/v1/integrity/verify', {}), 409, 'verification_running');
    expect(second.detail).toContain(first.json().job_id);
    await repo.releaseLease(l.c, 'other-process');
    await repo.finishJob(l.c, first.json().job_id, 'failed', now, JSON.stringify({ error: 'test' }));
    expect((await l.req('POST', '/api/v1/integrity/verify', {})).statusCode).toBe(202);
  });

  it('refuses bad input with clear problems, and keeps companies apart', async () => {
    const a = await ledger(5);
    const b = await ledger(5);
    problem(await a.req('POST', '/api/v1/integrity/verify', { entry_signatures: 'yes' }), 400, 'validation_failed');
    problem(await a.req('POST', '/api/v1/integrity/verify', { everything: true }), 400, 'validation_failed');
    problem(await a.req('GET', '/api/v1/integrity/jobs/not-a-uuid'), 400, 'validation_failed');
    problem(await b.req('GET', '/api/v1/integrity/report'), 404, 'not_found');
    const job = (await a.req('POST', '/api/v1/integrity/verify')).json();
    problem(await b.req('GET', `/api/v1/integrity/jobs/${job.job_id}`), 404, 'not_found');
    await vi.waitFor(async () => expect((await a.req('GET', `/api/v1/integrity/jobs/${job.job_id}`)).json().status).toBe('completed'), { timeout: 10_000, interval: 20 });
    problem(await t.inject({ method: 'GET', url: '/api/v1/integrity/status' }), 401, 'missing_credential');
    // A's tampering shows in A's status only.
    await a.sql.updateTable('log_entries').set({ data: '{}' }).where('company_id', '=', a.c).where('seq', '=', 1).execute();
    await a.verify();
    await b.verify();
    expect((await a.req('GET', '/api/v1/integrity/status')).json().chain_status).toBe('broken');
    expect((await b.req('GET', '/api/v1/integrity/status')).json().chain_status).toBe('valid');
  });
});

describe.each(STORE_KINDS)('background verifier on %s', (kind) => {
  it('verifies newly checkpointed entries every interval and reports what it finds', async () => {
    const clock = new FakeClock();
    const t = await startTestApp(kind, { clock, env: { CHECKPOINT_INTERVAL_MS: '0', INTEGRITY_VERIFY_INTERVAL_SECONDS: '1' } });
    try {
      const acct = await t.newAccount();
      const { key } = await t.createKey(acct.token, 100_000);
      const status = async () => (await t.inject({ method: 'GET', url: '/api/v1/integrity/status', headers: { 'x-api-key': key } })).json();
      await ingestBatch(t, key, Array.from({ length: 20 }, (_, i) => ({ event_type: 'e', data: { i } })));
      expect((await status()).chain_status).toBe('unverified');
      clock.advance(1500);
      await vi.waitFor(async () => expect(await status()).toMatchObject({ chain_status: 'valid', last_verified_seq: 19, coverage_percent: 100 }), { timeout: 10_000, interval: 50 });

      // New entries, one of them altered before the next pass reaches it.
      await ingestBatch(t, key, Array.from({ length: 10 }, (_, i) => ({ event_type: 'e', data: { i: 20 + i } })));
      expect((await status()).coverage_percent).toBeCloseTo(66.66, 1);
      await t.store.db.updateTable('log_entries').set({ event_type: 'forged' }).where('company_id', '=', acct.companyId).where('seq', '=', 25).execute();
      clock.advance(1500);
      await vi.waitFor(async () => expect(await status()).toMatchObject({ chain_status: 'broken', last_verified_seq: 29, violation_count: 1 }), { timeout: 10_000, interval: 50 });
    } finally {
      await t.close();
    }
  });

  it('a pass that ends inside the block of a missing entry saves the gap, and the next pass closes it on the stored hash of that block', async () => {
    const clock = new FakeClock();
    const t = await startTestApp(kind, { clock, env: { CHECKPOINT_INTERVAL_MS: '0', INTEGRITY_VERIFY_INTERVAL_SECONDS: '1' } });
    try {
      const acct = await t.newAccount();
      const c = acct.companyId;
      const { key } = await t.createKey(acct.token, 100_000);
      const status = async () => (await t.inject({ method: 'GET', url: '/api/v1/integrity/status', headers: { 'x-api-key': key } })).json();
      const savedEdge = async () => JSON.parse((await t.store.db.selectFrom('integrity_state').select('verified_edge').where('company_id', '=', c).executeTakeFirstOrThrow()).verified_edge);
      await ingestBatch(t, key, Array.from({ length: 20 }, (_, i) => ({ event_type: 'e', data: { i } })));
      await t.store.db.deleteFrom('log_entries').where('company_id', '=', c).where('seq', '=', 17).execute();
      clock.advance(1500);
      await vi.waitFor(async () => expect(await status()).toMatchObject({ last_verified_seq: 19, violation_count: 1 }), { timeout: 10_000, interval: 50 });
      // Entries 16–31 are one block: the pass stopped at 20, inside it.
      expect(await savedEdge()).toEqual({ edge: expect.any(Array), gap_end: 32 });

      await ingestBatch(t, key, Array.from({ length: 20 }, (_, i) => ({ event_type: 'e', data: { i: 20 + i } })));
      // The block's stored hash is gone too: only a pass that resumed the gap can say so, at entry 31.
      await t.store.db.deleteFrom('merkle_hashes').where('company_id', '=', c).where('idx', '=', storedHashIndex(4, 1)).execute();
      clock.advance(1500);
      await vi.waitFor(async () => expect(await status()).toMatchObject({ last_verified_seq: 39, violation_count: 2 }), { timeout: 10_000, interval: 50 });
      const found = await t.store.db.selectFrom('integrity_violations').select(['seq', 'kind']).where('company_id', '=', c).orderBy('seq').execute();
      expect(found.map((v) => [v.seq, v.kind])).toEqual([
        [17, 'missing_entry'],
        [31, 'merkle_mismatch'],
      ]);
      expect(await savedEdge()).toBeNull();
    } finally {
      await t.close();
    }
  });
});
