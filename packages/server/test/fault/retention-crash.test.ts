// Retention killed mid-way (issue 17): the real service erases content in small batches, is
// killed with SIGKILL in the middle of a run, restarted, and finishes: every due entry is erased
// exactly once, by exactly one recorded erasure, and a full verification (entry signatures
// included) finds the chain valid with every erased entry accounted for. Both stores.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { STORE_KINDS } from '../helpers/env.js';
import { createTestDatabase, type TestDatabase } from '../helpers/stores.js';
import { BOOTSTRAP, bootstrapKey, call, fullVerification, killLeftovers, startService } from './harness.js';

const EVENTS = 600;

describe.each(STORE_KINDS)('retention killed mid-way (%s)', (kind) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase(kind);
  });
  afterAll(async () => {
    killLeftovers();
    await db.drop();
  });

  it('resumes after kill -9: every due entry erased once, every erasure recorded once, the chain valid', async () => {
    const env = { LEDGER_DATA_DIR: db.dataDir, ...(db.databaseUrl ? { DATABASE_URL: db.databaseUrl } : {}), ...BOOTSTRAP, CHECKPOINT_INTERVAL_MS: '200', RETENTION_BATCH_SIZE: '3' };
    const first = await startService({ ...env, RETENTION_INTERVAL_SECONDS: '0' });
    const key = await bootstrapKey(first.url);
    const login = await call(`${first.url}/api/v1/auth/login`, 'POST', { email: BOOTSTRAP.LEDGER_BOOTSTRAP_EMAIL, password: BOOTSTRAP.LEDGER_BOOTSTRAP_PASSWORD });
    const admin = { authorization: `Bearer ${login.json().access_token}` };
    const companyId = (await call(`${first.url}/api/v1/auth/me`, 'GET', undefined, admin)).json().company.id as string;
    for (let i = 0; i < EVENTS; i += 200) {
      const logs = Array.from({ length: 200 }, (_, j) => ({ event_type: 'tool.called', data: { n: i + j } }));
      expect((await call(`${first.url}/api/v1/logs/batch`, 'POST', { logs }, { 'x-api-key': key })).status).toBe(200);
    }
    expect((await call(`${first.url}/api/v1/compliance/retention`, 'PUT', { content_days: 0 }, admin)).status).toBe(200);

    // Start the run, and kill the process once a few batches are applied.
    void call(`${first.url}/api/v1/compliance/retention/run`, 'POST', undefined, admin).catch(() => undefined);
    const store = db.open();
    const erasedCount = async () => Number((await store.db.selectFrom('log_entries').select((eb) => eb.fn.countAll<number>().as('n')).where('company_id', '=', companyId).where('erased_at', 'is not', null).executeTakeFirstOrThrow()).n);
    try {
      await vi.waitFor(async () => expect(await erasedCount()).toBeGreaterThanOrEqual(15), { timeout: 60_000, interval: 5 });
      await first.kill9();
      const atKill = await erasedCount();
      expect(atKill, 'the kill came after the run had finished: nothing to resume').toBeLessThan(EVENTS);

      // Restarted with the job on: it finishes what the crash interrupted, then the rest.
      const second = await startService({ ...env, RETENTION_INTERVAL_SECONDS: '3600' });
      await vi.waitFor(async () => expect(await erasedCount()).toBe(EVENTS), { timeout: 120_000, interval: 50 });
      await vi.waitFor(async () => expect((await call(`${second.url}/api/v1/compliance/retention`, 'GET', undefined, { 'x-api-key': key })).json().pending_erasures).toBe(0), { timeout: 30_000, interval: 50 });

      // Each entry in exactly one erasure; each erasure recorded by exactly one entry, which names it.
      const erasures = await store.db.selectFrom('erasures').selectAll().where('company_id', '=', companyId).execute();
      expect(erasures.every((e) => e.status === 'applied')).toBe(true);
      const listed = erasures.flatMap((e) => JSON.parse(e.log_ids) as string[]);
      expect(new Set(listed).size).toBe(listed.length);
      expect(listed.length).toBe(EVENTS);
      expect(erasures.reduce((n, e) => n + e.erased_count, 0)).toBe(EVENTS);
      const records = await store.db.selectFrom('log_entries').select(['log_id', 'data']).where('company_id', '=', companyId).where('event_type', '=', 'compliance.erasure').execute();
      expect(records.length).toBe(erasures.length);
      const byRecord = new Map(records.map((r) => [r.log_id, JSON.parse(r.data as string) as { erasure_id: string; log_ids: string[] }]));
      for (const e of erasures) expect(byRecord.get(e.record_log_id as string)?.erasure_id).toBe(e.erasure_id);
      const rows = await store.db.selectFrom('log_entries').select(['log_id', 'erasure_id', 'data', 'content_salt']).where('company_id', '=', companyId).where('event_type', '=', 'tool.called').execute();
      for (const r of rows) {
        expect(r.data).toBeNull();
        expect(r.content_salt).toBeNull();
        expect(byRecord.get(r.erasure_id as string)?.log_ids).toContain(r.log_id);
      }

      const report = await fullVerification(second.url, key, second.logs);
      expect(report).toMatchObject({ chain_status: 'valid', violation_count: 0, entries_erased: EVENTS });
      expect(await second.stop()).toBe(0);
    } finally {
      await store.close();
    }
  });
});
