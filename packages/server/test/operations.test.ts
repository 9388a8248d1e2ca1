// Health, readiness through a real database outage, Prometheus metrics and usage. Both stores.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../src/app.js';
import { MemoryCounterStore } from '../src/ratelimit/counter.js';
import { openPostgresStore } from '../src/store/postgres.js';
import { LATEST_MIGRATION } from '../src/store/migrations.js';
import { tcpProxy } from './helpers/tcp-proxy.js';
import { STORE_KINDS } from './helpers/env.js';
import { FakeClock, problem, startTestApp, testConfig, type TestApp } from './helpers/app.js';
import { ingest, ingestBatch } from './helpers/ledger.js';
import { createTestDatabase } from './helpers/stores.js';

/** Parses the Prometheus text format strictly enough to fail on malformed output (NaN in any case, as Prometheus reads it). */
function parsePrometheus(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? (-?[0-9.]+(?:e[+-]?[0-9]+)?|[Nn]a[Nn]|[+-]Inf)$/.exec(line);
    if (!m) throw new Error(`not Prometheus text: ${line}`);
    out.set(`${m[1]}${m[2] ?? ''}`, Number(m[3]));
  }
  return out;
}

describe.each(STORE_KINDS)('health, metrics and usage on %s', (kind) => {
  let t: TestApp;
  const clock = new FakeClock();
  beforeAll(async () => {
    t = await startTestApp(kind, { clock });
  });
  afterAll(() => t.close());

  it('reports health without a credential and without company data', async () => {
    const h = await t.inject({ method: 'GET', url: '/api/v1/health' });
    expect(h.statusCode).toBe(200);
    expect(h.json()).toMatchObject({
      status: 'ok',
      version: expect.any(String),
      uptime_seconds: expect.any(Number),
      checks: { database: { status: 'ok', latency_ms: expect.any(Number) }, signing_key: { status: 'ok' }, migrations: { status: 'ok', version: LATEST_MIGRATION }, search_index: { status: 'ok' } },
    });
    expect(h.json().checks.redis).toBeUndefined();
    expect((await t.inject({ method: 'GET', url: '/api/v1/health/live' })).json()).toEqual({ status: 'ok' });
    const ready = await t.inject({ method: 'GET', url: '/api/v1/health/ready' });
    expect(ready.statusCode).toBe(200);
    expect(ready.body).not.toMatch(/company|@example/);
  });

  it('serves metrics that parse as Prometheus text and count a known number of requests exactly', async () => {
    const acct = await t.newAccount();
    const { key } = await t.createKey(acct.token, 100_000);
    const before = parsePrometheus((await t.inject({ method: 'GET', url: '/api/v1/metrics' })).body);
    const series = 'audit_ledger_http_requests_total{route="/api/v1/integrity/checkpoint",method="GET",status="404"}';
    for (let i = 0; i < 7; i++) await t.inject({ method: 'GET', url: '/api/v1/integrity/checkpoint', headers: { 'x-api-key': key } });
    await ingestBatch(t, key, Array.from({ length: 5 }, (_, i) => ({ event_type: 'm', data: { i } })));
    const res = await t.inject({ method: 'GET', url: '/api/v1/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const after = parsePrometheus(res.body);
    expect((after.get(series) ?? 0) - (before.get(series) ?? 0)).toBe(7);
    expect((after.get('audit_ledger_events_appended_total') ?? 0) - (before.get('audit_ledger_events_appended_total') ?? 0)).toBe(5);
    expect(after.get('audit_ledger_append_batch_size_count')).toBeGreaterThanOrEqual(1);
    expect([...after.keys()].some((k) => k.startsWith('audit_ledger_process_cpu_user_seconds_total'))).toBe(true);
    // Bounded labels only: no company or key ever appears.
    expect(res.body).not.toContain(acct.companyId);
    expect(res.body).not.toContain(key.slice(0, 12));
    // Without METRICS_TOKEN, only loopback clients.
    problem(await t.inject({ method: 'GET', url: '/api/v1/metrics', remoteAddress: '10.1.2.3' }), 403, 'forbidden');
  });

  it('requires METRICS_TOKEN when it is set', async () => {
    const m = await startTestApp(kind, { env: { METRICS_TOKEN: 'scrape-token-0123456789' } });
    try {
      problem(await m.inject({ method: 'GET', url: '/api/v1/metrics' }), 401, 'missing_credential');
      problem(await m.inject({ method: 'GET', url: '/api/v1/metrics', headers: { authorization: 'Bearer wrong-token-0123456789' } }), 401, 'invalid_credential');
      const ok = await m.inject({ method: 'GET', url: '/api/v1/metrics', remoteAddress: '10.1.2.3', headers: { authorization: 'Bearer scrape-token-0123456789' } });
      expect(ok.statusCode).toBe(200);
      expect(() => parsePrometheus(ok.body)).not.toThrow();
    } finally {
      await m.close();
    }
  });

  it('reports usage per key and per day, exactly, and only the own company', async () => {
    const acct = await t.newAccount();
    const { id: keyId, key } = await t.createKey(acct.token, 100_000);
    const other = await t.newAccount();
    const otherKey = (await t.createKey(other.token, 100_000)).key;
    const day1 = new Date(clock.now()).toISOString().slice(0, 10);
    // Day 1: 3 single events (one an idempotent repeat), a batch of 4, one read, all with the key.
    await ingest(t, key, { event_type: 'u', data: {} }, { 'idempotency-key': 'k1' });
    await ingest(t, key, { event_type: 'u', data: {} }, { 'idempotency-key': 'k1' });
    await ingest(t, key, { event_type: 'u', data: { big: 'x'.repeat(100) } });
    await ingestBatch(t, key, Array.from({ length: 4 }, () => ({ event_type: 'u', data: { a: 1 } })));
    await t.inject({ method: 'GET', url: '/api/v1/logs', headers: { 'x-api-key': key } });
    await t.inject({ method: 'GET', url: '/api/v1/logs', headers: { authorization: `Bearer ${acct.token}` } });
    await ingest(t, otherKey, { event_type: 'other', data: {} });
    // Day 2: 2 more events.
    clock.advance(86_400_000);
    const day2 = new Date(clock.now()).toISOString().slice(0, 10);
    await ingestBatch(t, key, [{ event_type: 'u', data: {} }, { event_type: 'u', data: {} }]);

    const res = await t.inject({ method: 'GET', url: `/api/v1/usage?from=${day1}&to=${day2}`, headers: { 'x-api-key': key } });
    expect(res.statusCode, res.body).toBe(200);
    const u = res.json();
    expect(u.company_id).toBe(acct.companyId);
    // Requests: the key's 5 on day 1 and 1 on day 2, plus the user token's 2 (creating the key, one read).
    expect(u.by_day).toEqual([
      { day: day1, api_requests: 7, events_ingested: 6, rate_limited_requests: 0 },
      { day: day2, api_requests: 1, events_ingested: 2, rate_limited_requests: 0 },
    ]);
    expect(u.totals).toEqual({ api_requests: 8, events_ingested: 8, rate_limited_requests: 0 });
    expect(u.by_key).toEqual(
      expect.arrayContaining([
        { key_id: null, name: null, key_prefix: null, api_requests: 2, events_ingested: 0, rate_limited_requests: 0 },
        { key_id: keyId, name: 'integration', key_prefix: expect.stringMatching(/^alk_/), api_requests: 6, events_ingested: 8, rate_limited_requests: 0 },
      ]),
    );
    expect(u.storage.entries).toBe(8);
    // data bytes of the 8 appended events: {} , {"big":"x…x"}, 4 × {"a":1}, 2 × {} (the repeat adds nothing).
    expect(u.storage.data_bytes).toBe(2 + `{"big":"${'x'.repeat(100)}"}`.length + 4 * '{"a":1}'.length + 2 * 2);
    expect(u.rate_limit).toEqual({ key_id: keyId, key_prefix: expect.any(String), rate_limit_per_minute: 100_000 });
    // The other company sees only its own.
    const theirs = (await t.inject({ method: 'GET', url: `/api/v1/usage?from=${day1}&to=${day2}`, headers: { 'x-api-key': otherKey } })).json();
    expect(theirs.totals).toEqual({ api_requests: 2, events_ingested: 1, rate_limited_requests: 0 });
    expect(theirs.storage.entries).toBe(1);
  });

  it('counts rate-limited requests per key', async () => {
    const acct = await t.newAccount();
    const { key } = await t.createKey(acct.token, 3);
    const codes: number[] = [];
    for (let i = 0; i < 5; i++) codes.push((await t.inject({ method: 'GET', url: '/api/v1/logs', headers: { 'x-api-key': key } })).statusCode);
    expect(codes).toEqual([200, 200, 200, 429, 429]);
    const u = (await t.inject({ method: 'GET', url: '/api/v1/usage', headers: { authorization: `Bearer ${acct.token}` } })).json();
    // 5 with the key (2 refused) and 1 with the user token (creating the key).
    expect(u.totals).toEqual({ api_requests: 6, events_ingested: 0, rate_limited_requests: 2 });
  });

  it('refuses bad usage ranges', async () => {
    const acct = await t.newAccount();
    const h = { authorization: `Bearer ${acct.token}` };
    problem(await t.inject({ method: 'GET', url: '/api/v1/usage?from=2026-03-02&to=2026-03-01', headers: h }), 400, 'validation_failed');
    problem(await t.inject({ method: 'GET', url: '/api/v1/usage?from=yesterday', headers: h }), 400, 'validation_failed');
    problem(await t.inject({ method: 'GET', url: '/api/v1/usage?from=2024-01-01&to=2026-01-01', headers: h }), 400, 'validation_failed');
    problem(await t.inject({ method: 'GET', url: '/api/v1/usage' }), 401, 'missing_credential');
  });
});

describe.skipIf(!STORE_KINDS.includes('postgres'))('readiness through a PostgreSQL outage', () => {
  it('goes 503 naming the database while PostgreSQL is unreachable, and 200 when it is back', async () => {
    const db = await createTestDatabase('postgres');
    const direct = new URL(db.databaseUrl as string);
    const migrator = db.open();
    await migrator.migrate();
    await migrator.close();
    const proxy = await tcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    const viaProxy = new URL(direct);
    viaProxy.port = String(proxy.port());
    const store = openPostgresStore(viaProxy.toString());
    const counters = new MemoryCounterStore();
    const app = await buildApp({ config: testConfig({ dataDir: db.dataDir, databaseUrl: viaProxy.toString() }), store, counters, logger: false });
    try {
      expect((await app.inject({ method: 'GET', url: '/api/v1/health/ready' })).statusCode).toBe(200);
      await proxy.down();
      const down = await app.inject({ method: 'GET', url: '/api/v1/health/ready' });
      expect(down.statusCode).toBe(503);
      expect(down.json()).toMatchObject({ status: 'down', checks: { database: { status: 'down', latency_ms: null, error: expect.any(String) }, migrations: { status: 'down' } } });
      expect(down.body).not.toContain('127.0.0.1'); // public: no internal addresses
      expect((await app.inject({ method: 'GET', url: '/api/v1/health' })).statusCode).toBe(503);
      expect((await app.inject({ method: 'GET', url: '/api/v1/health/live' })).statusCode).toBe(200);
      await proxy.up();
      await vi.waitFor(async () => expect((await app.inject({ method: 'GET', url: '/api/v1/health/ready' })).statusCode).toBe(200), { timeout: 10_000, interval: 100 });
    } finally {
      await app.close();
      await store.close();
      await proxy.down();
      await db.drop();
    }
  });
});

describe('health with Redis', () => {
  it('reports the Redis check when rate limits live in Redis', async () => {
    const { RedisCounterStore } = await import('../src/ratelimit/counter.js');
    const { Redis } = await import('ioredis');
    const { TEST_REDIS_URL } = await import('./helpers/env.js');
    const counters = new RedisCounterStore({ redis: new Redis(TEST_REDIS_URL), prefix: `audit-ledger-test:${randomUUID()}:` });
    const t = await startTestApp('sqlite', { counters });
    try {
      const h = (await t.inject({ method: 'GET', url: '/api/v1/health' })).json();
      expect(h).toMatchObject({ status: 'ok', checks: { redis: { status: 'ok' } } });
    } finally {
      await t.close();
    }
  });
});
