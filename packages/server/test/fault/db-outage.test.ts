// A database outage under load, for real: a PostgreSQL cluster of the test's own (another port,
// dropped after; the shared server is never touched) is stopped while clients ingest, then
// started again. Clients get 503 with Retry-After, never 500; the service logs the outage as a
// warning, not an error per request; nothing acknowledged is lost; it recovers by itself.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres.js';
import { STORE_KINDS } from '../helpers/env.js';
import { assertChainIntact } from '../helpers/ledger.js';
import { BOOTSTRAP, bootstrapKey, call, fullVerification, killLeftovers, scale, startService } from './harness.js';

const VERSION = fs.existsSync('/etc/postgresql') ? (fs.readdirSync('/etc/postgresql').sort().at(-1) ?? '') : '';
const NAME = `al_outage_${process.pid}`;
const pg = (cmd: string, ...args: string[]) => execFileSync(cmd, args, { stdio: 'pipe' });
const OUTAGES = scale(1, 3);

describe.skipIf(!STORE_KINDS.includes('postgres'))(`a PostgreSQL cluster of its own stopped under load, ${OUTAGES} time(s)`, () => {
  // A port nothing listens on (a fixed range once collided with RabbitMQ's 5672).
  let PORT = 0;
  beforeAll(async () => {
    PORT = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    if (!VERSION) throw new Error('no PostgreSQL cluster tools (pg_createcluster) on this machine: the outage suite must run');
    // Clusters left by interrupted runs (their names carry another pid).
    for (const old of fs.readdirSync(path.join('/etc/postgresql', VERSION)).filter((n) => n.startsWith('al_outage_'))) {
      try {
        pg('pg_dropcluster', '--stop', VERSION, old);
      } catch {
        // already gone
      }
    }
    pg('pg_createcluster', '-p', String(PORT), VERSION, NAME, '--', '--auth=trust');
    pg('pg_ctlcluster', VERSION, NAME, 'start');
  });
  afterAll(() => {
    try {
      killLeftovers();
    } finally {
      pg('pg_dropcluster', '--stop', VERSION, NAME);
    }
  });

  it('answers 503 with Retry-After while it is down, loses nothing acknowledged, and recovers by itself', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-outage-'));
    const databaseUrl = `postgres://postgres@127.0.0.1:${PORT}/postgres`;
    const svc = await startService({ LEDGER_DATA_DIR: dataDir, DATABASE_URL: databaseUrl, ...BOOTSTRAP, LOG_LEVEL: 'info' });
    const acked = new Set<string>();
    const statuses = new Map<number, number>();
    let withoutRetryAfter = 0;
    try {
      const key = await bootstrapKey(svc.url);
      for (let outage = 0; outage < OUTAGES; outage++) {
        let running = true;
        const client = async (c: number) => {
          for (let i = 0; running; i++) {
            const res = await call(`${svc.url}/api/v1/logs`, 'POST', { event_type: 'outage', data: { outage, c, i } }, { 'x-api-key': key });
            statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
            if (res.status === 200) acked.add(res.json().log_id);
            else if (res.status === 503 && res.headers['retry-after'] === undefined) withoutRetryAfter++;
            if (res.status === 503) await new Promise((r) => setTimeout(r, 20)); // a polite client backs off
          }
        };
        const clients = Array.from({ length: 6 }, (_, c) => client(c));
        const before = acked.size;
        await vi.waitFor(() => expect(acked.size).toBeGreaterThan(before + 50), { timeout: 30_000, interval: 10 });
        pg('pg_ctlcluster', VERSION, NAME, 'stop', '-m', 'fast');
        // While it is down, readiness says so.
        const ready = await call(`${svc.url}/api/v1/health/ready`, 'GET');
        expect(ready.status).toBe(503);
        await vi.waitFor(() => expect(statuses.get(503) ?? 0).toBeGreaterThan(20 * (outage + 1)), { timeout: 30_000, interval: 10 });
        pg('pg_ctlcluster', VERSION, NAME, 'start');
        const back = acked.size;
        await vi.waitFor(() => expect(acked.size).toBeGreaterThan(back + 50), { timeout: 30_000, interval: 50 });
        running = false;
        await Promise.all(clients);
      }
      // Only 200 and 503, and every 503 said when to retry.
      expect([...statuses.keys()].sort()).toEqual([200, 503]);
      expect(withoutRetryAfter).toBe(0);
      // Every acknowledged entry is there and the chain verifies.
      const store = openPostgresStore(databaseUrl);
      try {
        const companyId = (await call(`${svc.url}/api/v1/auth/me`, 'GET', undefined, { 'x-api-key': key })).json().company.id;
        expect(await assertChainIntact(store, companyId)).toBeGreaterThanOrEqual(acked.size);
        const ids = new Set((await store.db.selectFrom('log_entries').select('log_id').where('company_id', '=', companyId).execute()).map((r) => r.log_id));
        for (const id of acked) expect(ids.has(id), id).toBe(true);
      } finally {
        await store.close();
      }
      expect((await fullVerification(svc.url, key)).violation_count).toBe(0);
      // The log: a warning per outage (a few at most), never an error with a stack per request.
      const warns = svc.logs.lines.filter((l) => String(l.msg).startsWith('database unavailable'));
      expect(warns.length).toBeGreaterThanOrEqual(1);
      expect(warns.length).toBeLessThanOrEqual(OUTAGES * 3);
      expect(svc.logs.lines.filter((l) => l.msg === 'unhandled error')).toEqual([]);
      console.log(`db outage suite: ${OUTAGES} outage(s); ${acked.size} acknowledged, all present; answers ${JSON.stringify(Object.fromEntries(statuses))}; ${warns.length} warn line(s)`);
    } finally {
      expect(await svc.stop()).toBe(0);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 300_000);
});
