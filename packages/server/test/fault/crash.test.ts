// Crash consistency: the real service, under concurrent single and batch ingestion, is killed
// with SIGKILL at a random moment, restarted, and checked: every acknowledged log_id is stored
// exactly as it was sent and verifies, seq has no gap, a full verification (entry signatures
// included) finds 0 violations, and ingestion goes on. A 200 means committed.
// `npm run test:all`: 3 kills per store. `npm run chaos`: 20.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '@audit-ledger/core';
import { STORE_KINDS } from '../helpers/env.js';
import { assertChainIntact } from '../helpers/ledger.js';
import { createTestDatabase, type TestDatabase } from '../helpers/stores.js';
import { BOOTSTRAP, bootstrapKey, call, fullVerification, killLeftovers, random, scale, startService } from './harness.js';

const KILLS = scale(3, 20);
const CLIENTS = 8;

interface Sent {
  event_type: string;
  data: Record<string, unknown>;
}

describe.each(STORE_KINDS)(`kill -9 under load, ${KILLS} times (%s)`, (kind) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase(kind);
  });
  afterAll(async () => {
    killLeftovers();
    await db.drop();
  });

  it('loses nothing acknowledged, leaves no gap, and verifies clean after every restart', async () => {
    const env = { LEDGER_DATA_DIR: db.dataDir, ...(db.databaseUrl ? { DATABASE_URL: db.databaseUrl } : {}), ...BOOTSTRAP, CHECKPOINT_INTERVAL_MS: '200' };
    const rnd = random(kind === 'sqlite' ? 7 : 11);
    const acked = new Map<string, Sent>();
    let key = '';
    let companyId = '';
    let answered = { ok: 0, refused: 0, lost: 0 };
    const unexpected: string[] = [];

    for (let cycle = 0; cycle <= KILLS; cycle++) {
      const svc = await startService(env);
      if (!key) key = await bootstrapKey(svc.url);
      const me = await call(`${svc.url}/api/v1/auth/me`, 'GET', undefined, { 'x-api-key': key });
      companyId = me.json().company.id;

      // After a restart: what was acknowledged is all there, as sent; the chain holds.
      if (cycle > 0) {
        const store = db.open();
        try {
          const n = await assertChainIntact(store, companyId);
          expect(n).toBeGreaterThanOrEqual(acked.size);
          const rows = await store.db.selectFrom('log_entries').select(['log_id', 'event_type', 'data']).where('company_id', '=', companyId).execute();
          const stored = new Map(rows.map((r) => [r.log_id, r]));
          for (const [id, sent] of acked) {
            const row = stored.get(id);
            expect(row, `acknowledged ${id} is missing after kill ${cycle}`).toBeDefined();
            expect(row?.event_type).toBe(sent.event_type);
            expect(row?.data).toBe(canonicalJson(sent.data));
          }
        } finally {
          await store.close();
        }
        const report = await fullVerification(svc.url, key, svc.logs);
        expect(report.violation_count).toBe(0);
      }
      if (cycle === KILLS) {
        // Ingestion goes on after the last restart.
        const after = await call(`${svc.url}/api/v1/logs`, 'POST', { event_type: 'after.crashes', data: {} }, { 'x-api-key': key });
        expect(after.status).toBe(200);
        expect(await svc.stop()).toBe(0);
        break;
      }

      // Load until the kill.
      let running = true;
      const client = async (c: number) => {
        for (let i = 0; running; i++) {
          const batch = rnd() < 0.3;
          const events: Sent[] = Array.from({ length: batch ? 1 + Math.floor(rnd() * 40) : 1 }, (_, j) => ({ event_type: batch ? 'crash.batch' : 'crash.single', data: { cycle, c, i, j, nonce: randomUUID() } }));
          try {
            const res = batch
              ? await call(`${svc.url}/api/v1/logs/batch`, 'POST', { logs: events }, { 'x-api-key': key })
              : await call(`${svc.url}/api/v1/logs`, 'POST', events[0], { 'x-api-key': key });
            if (res.status === 200) {
              const ids: string[] = batch ? res.json().log_ids : [res.json().log_id];
              ids.forEach((id, k) => acked.set(id, events[k] as Sent));
              answered.ok++;
            } else if (res.status === 503) {
              // The only acceptable refusal: shutting down, or the chain moved.
              answered.refused++;
            } else {
              unexpected.push(`${res.status} ${res.body.slice(0, 300)}`);
              return;
            }
          } catch {
            answered.lost++; // the connection died with the process: not acknowledged
            return;
          }
        }
      };
      let finished = 0;
      const clients = Array.from({ length: CLIENTS }, (_, c) => client(c).finally(() => finished++));
      // A random moment: after at least some acknowledged appends, 0–800 ms into the load. If
      // every client stopped first (an answer other than 200 or 503), fail with what they got.
      const target = acked.size + 20;
      while (acked.size < target && finished < CLIENTS) await new Promise((r) => setTimeout(r, 5));
      expect(unexpected, 'answers other than 200 or 503 under load').toEqual([]);
      expect(acked.size, 'every client stopped before the kill').toBeGreaterThanOrEqual(target);
      await new Promise((r) => setTimeout(r, Math.floor(rnd() * 800)));
      await svc.kill9();
      running = false;
      await Promise.all(clients);
    }
    expect(acked.size).toBeGreaterThan(KILLS * 20);
    console.log(`crash suite (${kind}): ${KILLS} kills, ${acked.size} acknowledged, all present and verified; ${answered.ok} answered 200, ${answered.refused} 503, ${answered.lost} cut by the kill`);
    answered = { ok: 0, refused: 0, lost: 0 };
  }, 600_000);
});
