// Dependencies going away under load, and the login lockout under concurrency:
// - the database cut off (through a proxy, so the shared server keeps running): clients get
//   503 with Retry-After, never 500; the log gets one warn line for the outage, not an error
//   with a stack per request; nothing acknowledged is lost and the service recovers by itself;
// - Redis cut off: login, ingestion and readiness keep working on per-process counters, with
//   one warn line, the fallback gauge at 1, and no ioredis output outside the service's logger;
// - 40 parallel logins for one email: at most the lockout's allowance is checked at all.
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { createUser } from '../src/users/accounts.js';
import { buildApp } from '../src/app.js';
import { MemoryCounterStore, RedisCounterStore, type CounterStore } from '../src/ratelimit/counter.js';
import { openPostgresStore } from '../src/store/postgres.js';
import { STORE_KINDS, TEST_REDIS_URL } from './helpers/env.js';
import { problem, startTestApp, testConfig } from './helpers/app.js';
import { assertChainIntact } from './helpers/ledger.js';
import { createTestDatabase, createTestStore } from './helpers/stores.js';
import { tcpProxy } from './helpers/tcp-proxy.js';

function capturedLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino({ level: 'info' }, stream), lines };
}

describe.skipIf(!STORE_KINDS.includes('postgres'))('a PostgreSQL outage under ingestion', () => {
  it('answers 503 with Retry-After and one warn line, loses nothing acknowledged, and recovers by itself', async () => {
    const db = await createTestDatabase('postgres');
    const direct = new URL(db.databaseUrl as string);
    const migrator = db.open();
    await migrator.migrate();
    const { company } = await createUser(migrator, { company: 'outage', email: 'outage@example.com', password: 'outage password 1', role: 'admin' }, Date.now, null);
    await migrator.close();
    const proxy = await tcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    const viaProxy = new URL(direct);
    viaProxy.port = String(proxy.port());
    const store = openPostgresStore(viaProxy.toString());
    const { log, lines } = capturedLogger();
    const app = await buildApp({ config: testConfig({ dataDir: db.dataDir, databaseUrl: viaProxy.toString() }, { CHECKPOINT_INTERVAL_MS: '0' }), store, counters: new MemoryCounterStore(), log });
    await app.ready();
    try {
      const token = (await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'outage@example.com', password: 'outage password 1' } })).json().access_token;
      const key = (await app.inject({ method: 'POST', url: '/api/v1/auth/api_keys', headers: { authorization: `Bearer ${token}` }, payload: { name: 'k', rate_limit_per_minute: 100000 } })).json().key as string;
      const send = (i: number) => app.inject({ method: 'POST', url: '/api/v1/logs', headers: { 'x-api-key': key }, payload: { event_type: 'outage', data: { i } } });
      const acknowledged: string[] = [];
      for (const r of await Promise.all(Array.from({ length: 20 }, (_, i) => send(i)))) {
        expect(r.statusCode).toBe(200);
        acknowledged.push(r.json().log_id);
      }
      await proxy.down();
      const during = await Promise.all(Array.from({ length: 30 }, (_, i) => send(100 + i)));
      for (const r of during) {
        const p = problem(r, 503, 'service_unavailable');
        expect(r.headers['retry-after']).toBe('2');
        expect(String(p.detail)).not.toMatch(/127\.0\.0\.1|ECONN/);
      }
      // Reads fail the same way.
      problem(await app.inject({ method: 'GET', url: '/api/v1/logs', headers: { 'x-api-key': key } }), 503, 'service_unavailable');
      await proxy.up();
      await vi.waitFor(async () => {
        const r = await send(200);
        expect(r.statusCode).toBe(200);
        acknowledged.push(r.json().log_id);
      }, { timeout: 15_000, interval: 200 });
      const warns = lines.filter((l) => l.msg?.toString().startsWith('database unavailable'));
      expect(warns).toHaveLength(1);
      expect(warns[0]).toMatchObject({ level: 40 });
      expect(lines.filter((l) => Number(l.level) >= 50)).toEqual([]);
      // Every acknowledged event is there, and the chain holds.
      const check = openPostgresStore(db.databaseUrl as string);
      try {
        await assertChainIntact(check, company.company_id);
        for (const id of acknowledged) expect(await check.db.selectFrom('log_entries').select('seq').where('company_id', '=', company.company_id).where('log_id', '=', id).executeTakeFirst(), id).toBeDefined();
      } finally {
        await check.close();
      }
    } finally {
      await app.close();
      await store.close();
      await proxy.down();
      await db.drop();
    }
  });
});

describe('Redis going away', () => {
  it('login, ingestion and readiness keep working on per-process counters; one warn line; the gauge says so', async () => {
    const target = new URL(TEST_REDIS_URL);
    const proxy = await tcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    const redis = new Redis({ host: '127.0.0.1', port: proxy.port(), maxRetriesPerRequest: 1, commandTimeout: 500, retryStrategy: () => 100 });
    const { log, lines } = capturedLogger();
    const counters = new RedisCounterStore({ redis, prefix: `audit-ledger-test:${Date.now()}:`, log });
    const t = await startTestApp('sqlite', { counters });
    try {
      const acct = await t.newAccount();
      const { key } = await t.createKey(acct.token, 100_000);
      const login = (password: string) => t.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: acct.email, password } });
      const gauge = async () => /^audit_ledger_rate_limit_fallback (\d)$/m.exec((await t.inject({ method: 'GET', url: '/api/v1/metrics', remoteAddress: '127.0.0.1' })).body)?.[1];
      expect(await gauge(), JSON.stringify(lines)).toBe('0');
      // ioredis reports through the service's logger: it has a listener, so it never prints "Unhandled error event".
      expect(redis.listenerCount('error')).toBeGreaterThan(0);

      await proxy.down();
      await vi.waitFor(() => expect(redis.status).not.toBe('ready'), { timeout: 5000, interval: 20 });
      expect((await login(acct.password)).statusCode).toBe(200);
      problem(await login('wrong'), 401, 'invalid_login');
      expect((await t.inject({ method: 'POST', url: '/api/v1/logs', headers: { 'x-api-key': key }, payload: { event_type: 'e', data: {} } })).statusCode).toBe(200);
      expect((await t.inject({ method: 'GET', url: '/api/v1/health/ready' })).statusCode).toBe(200);
      expect((await t.inject({ method: 'GET', url: '/api/v1/health' })).json()).toMatchObject({ status: 'degraded', checks: { redis: { status: 'down' } } });
      expect(await gauge()).toBe('1');
      // The lockout still holds, in this process.
      for (let i = 0; i < 12; i++) await login('wrong');
      problem(await login(acct.password), 429, 'too_many_login_attempts');
      expect(lines.filter((l) => String(l.msg).startsWith('Redis is unreachable'))).toHaveLength(1);

      await proxy.up();
      await vi.waitFor(async () => expect(await gauge()).toBe('0'), { timeout: 10_000, interval: 50 });
      expect(lines.filter((l) => String(l.msg).startsWith('Redis is reachable again'))).toHaveLength(1);
    } finally {
      await t.close();
      await proxy.down();
    }
  });
});

describe.each([
  ['memory', () => new MemoryCounterStore()],
  ['redis', () => new RedisCounterStore({ redis: new Redis(TEST_REDIS_URL), prefix: `audit-ledger-test:${Date.now()}:${Math.random()}:` })],
] as Array<[string, () => CounterStore]>)('the login lockout under 40 parallel attempts (%s counters)', (_name, make) => {
  it('checks at most 10 passwords: the rest are 429 whatever they hold', async () => {
    const { store, db, dispose } = await createTestStore('sqlite');
    const counters = make();
    const app = await buildApp({ config: testConfig(db), store, counters, logger: false });
    await app.ready();
    try {
      await createUser(store, { company: 'lock', email: 'lock@example.com', password: 'the right password', role: 'admin' }, Date.now, null);
      const attempts = Array.from({ length: 40 }, (_, i) => app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'lock@example.com', password: i === 39 ? 'the right password' : `wrong ${i}` } }));
      const statuses = (await Promise.all(attempts)).map((r) => r.statusCode);
      const checked = statuses.filter((s) => s !== 429);
      expect(checked.length).toBeLessThanOrEqual(10);
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(30);
      expect(statuses.every((s) => [200, 401, 429].includes(s))).toBe(true);
    } finally {
      await app.close();
      await counters.close();
      await dispose();
    }
  });

  it('a successful login gives its reservation back', async () => {
    const { store, db, dispose } = await createTestStore('sqlite');
    const counters = make();
    const app = await buildApp({ config: testConfig(db), store, counters, logger: false });
    await app.ready();
    try {
      await createUser(store, { company: 'ok', email: 'ok@example.com', password: 'the right password', role: 'admin' }, Date.now, null);
      for (let i = 0; i < 25; i++) expect((await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'ok@example.com', password: 'the right password' } })).statusCode).toBe(200);
    } finally {
      await app.close();
      await counters.close();
      await dispose();
    }
  });
});
