// Webhook events and delivery with a real HTTP receiver on loopback. The retry schedule
// is driven by the injected clock: tests move it forward instead of sleeping. Both stores.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../src/app.js';
import { MemoryCounterStore } from '../src/ratelimit/counter.js';
import { RETRY_DELAYS_MS } from '../src/webhooks/delivery.js';
import { SERVER_STORE, STORE_KINDS } from './helpers/env.js';
import { FakeClock, problem, startTestApp, testConfig, type TestApp } from './helpers/app.js';
import { createTestDatabase } from './helpers/stores.js';
import { LogWatcher, spawnCli } from './helpers/process.js';

import { type Received, receiver, verifySignature } from './helpers/webhook-receiver.js';

describe.each(STORE_KINDS)('webhooks on %s', (kind) => {
  let t: TestApp;
  const clock = new FakeClock();
  let rx: Awaited<ReturnType<typeof receiver>>;
  beforeAll(async () => {
    t = await startTestApp(kind, { clock, env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_MS: '300', CHECKPOINT_INTERVAL_MS: '0' } });
  });
  afterAll(() => t.close());
  afterEach(() => rx?.close());

  async function setup(eventTypes = ['hitl.rejected']) {
    rx = await receiver();
    const acct = await t.newAccount();
    const admin = { authorization: `Bearer ${acct.token}` };
    // Through the route, so its api_key.created event is recorded too.
    const created = await t.inject({ method: 'POST', url: '/api/v1/auth/api_keys', headers: admin, payload: { name: 'integration', rate_limit_per_minute: 100_000 } });
    const { key } = created.json();
    const res = await t.inject({ method: 'POST', url: '/api/v1/webhooks/endpoints', headers: admin, payload: { url: rx.url, event_types: eventTypes, description: 'test receiver' } });
    expect(res.statusCode, res.body).toBe(201);
    const endpoint = res.json();
    const reject = () => t.inject({ method: 'POST', url: '/api/v1/hitl/reject', headers: { 'x-api-key': key }, payload: { reviewer: 'r@example.com', rejection_reason: 'no' } });
    // With the API key: the tests move the clock past the access token's lifetime.
    const attempts = async () => (await t.inject({ method: 'GET', url: `/api/v1/webhooks/endpoints/${endpoint.id}/deliveries`, headers: { 'x-api-key': key } })).json().items as Array<Record<string, unknown>>;
    return { acct, key, admin, endpoint, reject, attempts };
  }

  it('delivers a signed Standard Webhooks message, and records the event and the attempt', async () => {
    const s = await setup();
    expect(s.endpoint).toMatchObject({ url: rx.url, event_types: ['hitl.rejected'], enabled: true, description: 'test receiver', secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/) });
    // The secret is stored encrypted, and never shown again.
    const stored = await t.store.db.selectFrom('webhook_endpoints').select('secret_encrypted').where('endpoint_id', '=', s.endpoint.id).executeTakeFirstOrThrow();
    expect(stored.secret_encrypted.startsWith('v1.')).toBe(true);
    expect(stored.secret_encrypted).not.toContain(s.endpoint.secret.slice(6, 20));
    expect((await t.inject({ method: 'GET', url: `/api/v1/webhooks/endpoints/${s.endpoint.id}`, headers: s.admin })).json().secret).toBeUndefined();

    const rejection = (await s.reject()).json();
    await vi.waitFor(() => expect(rx.got).toHaveLength(1), { timeout: 5000, interval: 20 });
    const msg = rx.got[0] as Received;
    expect(verifySignature(s.endpoint.secret, msg)).toBe(true);
    expect(verifySignature(`whsec_${Buffer.alloc(32).toString('base64')}`, msg)).toBe(false);
    expect(msg.headers['content-type']).toBe('application/json');
    expect(msg.headers['webhook-timestamp']).toBe(String(Math.floor(clock.now() / 1000)));
    const body = JSON.parse(msg.body);
    expect(body).toMatchObject({ type: 'hitl.rejected', timestamp: expect.any(String), data: { id: rejection.id, log_id: rejection.log_id, reviewer: 'r@example.com' } });

    const events = (await t.inject({ method: 'GET', url: '/api/v1/webhooks/events', headers: { 'x-api-key': s.key } })).json();
    expect(events.items.map((e: { type: string }) => e.type)).toEqual(['hitl.rejected', 'api_key.created']);
    expect(events.items[0].id).toBe(msg.headers['webhook-id']);
    expect((await t.inject({ method: 'GET', url: '/api/v1/webhooks/events?type=api_key.created', headers: { 'x-api-key': s.key } })).json().items).toHaveLength(1);
    const page = (await t.inject({ method: 'GET', url: '/api/v1/webhooks/events?limit=1', headers: { 'x-api-key': s.key } })).json();
    const page2 = (await t.inject({ method: 'GET', url: `/api/v1/webhooks/events?limit=1&after=${page.next_cursor}`, headers: { 'x-api-key': s.key } })).json();
    expect(page2.items[0].type).toBe('api_key.created');

    await vi.waitFor(async () => expect(await s.attempts()).toHaveLength(1), { timeout: 5000, interval: 20 });
    expect((await s.attempts())[0]).toMatchObject({ status_code: 200, result: 'delivered', error: null, event_type: 'hitl.rejected', latency_ms: expect.any(Number) });
  });

  it('a receiver that answers 500 twice and then 200 gets three attempts, on schedule, and one success', async () => {
    const s = await setup();
    rx.script.push(500, 500);
    await s.reject();
    await vi.waitFor(() => expect(rx.got).toHaveLength(1), { timeout: 5000, interval: 20 });
    const delivery = async () => t.store.db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', s.endpoint.id).executeTakeFirstOrThrow();
    await vi.waitFor(async () => expect((await delivery()).attempts).toBe(1), { timeout: 5000, interval: 20 });
    let d = await delivery();
    const wait1 = Date.parse(d.next_attempt_at) - clock.now();
    expect(wait1).toBeGreaterThanOrEqual(RETRY_DELAYS_MS[0] as number * 0.9);
    expect(wait1).toBeLessThanOrEqual(RETRY_DELAYS_MS[0] as number * 1.1);
    clock.advance(wait1);
    await vi.waitFor(async () => expect((await delivery()).attempts).toBe(2), { timeout: 5000, interval: 20 });
    d = await delivery();
    const wait2 = Date.parse(d.next_attempt_at) - clock.now();
    expect(wait2).toBeGreaterThanOrEqual(RETRY_DELAYS_MS[1] as number * 0.9);
    expect(wait2).toBeLessThanOrEqual(RETRY_DELAYS_MS[1] as number * 1.1);
    clock.advance(wait2);
    await vi.waitFor(async () => expect((await delivery()).status).toBe('delivered'), { timeout: 5000, interval: 20 });
    expect(rx.got).toHaveLength(3);
    expect(new Set(rx.got.map((r) => r.headers['webhook-id'])).size).toBe(1); // the same message each time
    const a = await s.attempts();
    expect(a.map((x) => [x.status_code, x.result])).toEqual([
      [200, 'delivered'],
      [500, 'retry'],
      [500, 'retry'],
    ]);
  });

  it('a receiver that never answers is retried on the documented schedule, then given up', async () => {
    const s = await setup();
    rx.script.push(...Array.from({ length: 8 }, () => 'hang' as const));
    await s.reject();
    const delivery = async () => t.store.db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', s.endpoint.id).executeTakeFirstOrThrow();
    for (let n = 1; n <= RETRY_DELAYS_MS.length; n++) {
      await vi.waitFor(async () => expect((await delivery()).attempts).toBe(n), { timeout: 5000, interval: 20 });
      const d = await delivery();
      expect(d.status).toBe('pending');
      const wait = Date.parse(d.next_attempt_at) - clock.now();
      const planned = RETRY_DELAYS_MS[n - 1] as number;
      expect(wait, `wait after attempt ${n}`).toBeGreaterThanOrEqual(planned * 0.9);
      expect(wait, `wait after attempt ${n}`).toBeLessThanOrEqual(planned * 1.1);
      clock.advance(wait);
    }
    await vi.waitFor(async () => expect((await delivery()).status).toBe('failed'), { timeout: 5000, interval: 20 });
    const a = await s.attempts();
    expect(a).toHaveLength(8);
    expect(a.every((x) => x.status_code === null && /timed out after 300 ms/.test(String(x.error)))).toBe(true);
    expect(a[0]?.result).toBe('failed');
  });

  it('honours Retry-After on 429 when it asks for longer than the schedule', async () => {
    const s = await setup();
    rx.script.push(429);
    await s.reject();
    const delivery = async () => t.store.db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', s.endpoint.id).executeTakeFirstOrThrow();
    await vi.waitFor(async () => expect((await delivery()).attempts).toBe(1), { timeout: 5000, interval: 20 });
    expect(Date.parse((await delivery()).next_attempt_at) - clock.now()).toBe(600_000);
    clock.advance(600_000);
    await vi.waitFor(async () => expect((await delivery()).status).toBe('delivered'), { timeout: 5000, interval: 20 });
    expect((await s.attempts()).map((a) => [a.status_code, a.result])).toEqual([
      [200, 'delivered'],
      [429, 'retry'],
    ]);
  });

  it('records the events the service emits: keys, verification, violations, anomalies, rejections', async () => {
    const s = await setup();
    const h = { 'x-api-key': s.key };
    // A full verification of a clean chain, then of one with a changed entry.
    const ids = (await t.inject({ method: 'POST', url: '/api/v1/logs/batch', headers: h, payload: { logs: [{ event_type: 'tool.failed', trace_id: randomUUID(), data: { tool: 'search', error: 'boom' } }, { event_type: 'x', data: {} }] } })).json().log_ids;
    const verify = async () => {
      const job = (await t.inject({ method: 'POST', url: '/api/v1/integrity/verify', headers: h })).json();
      await vi.waitFor(async () => expect((await t.inject({ method: 'GET', url: `/api/v1/integrity/jobs/${job.job_id}`, headers: h })).json().status).toBe('completed'), { timeout: 10_000, interval: 20 });
    };
    await verify();
    await t.store.db.updateTable('log_entries').set({ event_type: 'y' }).where('log_id', '=', ids[1]).execute();
    await verify();
    // A forensics answer that detects something.
    const entry = (await t.inject({ method: 'GET', url: `/api/v1/logs/${ids[0]}`, headers: h })).json();
    const session = (await t.inject({ method: 'POST', url: '/api/v1/forensics/replays', headers: h, payload: { trace_id: entry.trace_id, metadata: {} } })).json();
    await t.inject({ method: 'GET', url: `/api/v1/forensics/replays/${session.id}/root-cause`, headers: h });
    await t.inject({ method: 'GET', url: `/api/v1/forensics/replays/${session.id}/root-cause`, headers: h }); // reported once
    await s.reject();
    // Revoking the key (and revoking it again, which reports nothing).
    const keys = (await t.inject({ method: 'GET', url: '/api/v1/auth/api_keys', headers: s.admin })).json().items;
    for (let i = 0; i < 2; i++) await t.inject({ method: 'DELETE', url: `/api/v1/auth/api_keys/${keys[0].id}`, headers: s.admin });
    const events = (await t.inject({ method: 'GET', url: '/api/v1/webhooks/events', headers: s.admin })).json().items as Array<{ type: string; data: Record<string, unknown> }>;
    expect(events.map((e) => e.type)).toEqual([
      'api_key.revoked',
      'hitl.rejected',
      'forensics.anomaly_detected',
      'integrity.verification_completed',
      'integrity.violation_detected',
      'integrity.verification_completed',
      'api_key.created',
    ]);
    expect(events[2]?.data).toMatchObject({ session_id: session.id, root_cause_type: 'TOOL_ERROR' });
    expect(events[4]?.data).toMatchObject({ source: 'full', count: 1, kinds: ['hash_mismatch'] });
    expect(events[3]?.data).toMatchObject({ chain_status: 'broken', violation_count: 1 });
    expect(events[5]?.data).toMatchObject({ chain_status: 'valid', violation_count: 0 });
  });

  it('410 disables the endpoint and emits webhook_endpoint.disabled', async () => {
    const s = await setup(['hitl.rejected', 'webhook_endpoint.disabled']);
    rx.script.push(410);
    await s.reject();
    await vi.waitFor(
      async () => expect((await t.inject({ method: 'GET', url: `/api/v1/webhooks/endpoints/${s.endpoint.id}`, headers: s.admin })).json().enabled).toBe(false),
      { timeout: 5000, interval: 20 },
    );
    const e = (await t.inject({ method: 'GET', url: `/api/v1/webhooks/endpoints/${s.endpoint.id}`, headers: s.admin })).json();
    expect(e.disabled_reason).toMatch(/410/);
    const disabled = (await t.inject({ method: 'GET', url: '/api/v1/webhooks/events?type=webhook_endpoint.disabled', headers: s.admin })).json().items;
    expect(disabled).toHaveLength(1);
    expect(disabled[0].data).toMatchObject({ endpoint_id: s.endpoint.id, url: rx.url });
    expect((await s.attempts())[0]).toMatchObject({ status_code: 410, result: 'disabled' });
    // A disabled endpoint gets nothing more; re-enabling it resumes delivery.
    await s.reject();
    const patched = await t.inject({ method: 'PATCH', url: `/api/v1/webhooks/endpoints/${s.endpoint.id}`, headers: s.admin, payload: { enabled: true, rotate_secret: true, description: 'the receiver, renamed' } });
    expect(patched.json()).toMatchObject({ enabled: true, disabled_reason: null, description: 'the receiver, renamed', secret: expect.stringMatching(/^whsec_/) });
    await s.reject();
    await vi.waitFor(() => expect(rx.got).toHaveLength(2), { timeout: 5000, interval: 20 });
    expect(verifySignature(patched.json().secret, rx.got[1] as Received)).toBe(true);
    expect(verifySignature(s.endpoint.secret, rx.got[1] as Received)).toBe(false);
  });

  it('refuses bad endpoints with clear 400s, and management without an admin token', async () => {
    rx = await receiver();
    const acct = await t.newAccount();
    const admin = { authorization: `Bearer ${acct.token}` };
    const { key } = await t.createKey(acct.token, 1000);
    const bad: Array<[unknown, string]> = [
      [{ event_types: ['hitl.rejected'] }, '/body/url'],
      [{ url: 'ftp://example.com/x', event_types: ['hitl.rejected'] }, '/body/url'],
      [{ url: 'not a url', event_types: ['hitl.rejected'] }, '/body/url'],
      [{ url: 'https://user:pw@example.com/x', event_types: ['hitl.rejected'] }, '/body/url'],
      [{ url: rx.url, event_types: [] }, '/body/event_types'],
      [{ url: rx.url, event_types: ['log.created'] }, '/body/event_types/0'],
      [{ url: rx.url, event_types: ['hitl.rejected', 'hitl.rejected'] }, '/body/event_types'],
      [{ url: rx.url, event_types: ['hitl.rejected'], secret: 'mine' }, '/body/secret'],
    ];
    for (const [payload, field] of bad) {
      const p = problem(await t.inject({ method: 'POST', url: '/api/v1/webhooks/endpoints', headers: admin, payload: payload as object }), 400, 'validation_failed');
      expect((p.errors as Array<{ field: string }>).map((x) => x.field).join(' '), JSON.stringify(payload)).toContain(field);
    }
    const created = (await t.inject({ method: 'POST', url: '/api/v1/webhooks/endpoints', headers: admin, payload: { url: rx.url, event_types: ['hitl.rejected'] } })).json();
    problem(await t.inject({ method: 'PATCH', url: `/api/v1/webhooks/endpoints/${created.id}`, headers: admin, payload: {} }), 400, 'validation_failed');
    problem(await t.inject({ method: 'PATCH', url: `/api/v1/webhooks/endpoints/${created.id}`, headers: admin, payload: { rotate_secret: false } }), 400, 'validation_failed');
    problem(await t.inject({ method: 'POST', url: '/api/v1/webhooks/endpoints', headers: { 'x-api-key': key }, payload: { url: rx.url, event_types: ['hitl.rejected'] } }), 403, 'forbidden');
    const member = await t.newAccount({ role: 'reviewer', company: acct.companyName });
    problem(await t.inject({ method: 'GET', url: '/api/v1/webhooks/endpoints', headers: { authorization: `Bearer ${member.token}` } }), 403, 'forbidden');
    problem(await t.inject({ method: 'GET', url: '/api/v1/webhooks/events?type=nope', headers: admin }), 400, 'validation_failed');
    problem(await t.inject({ method: 'GET', url: '/api/v1/webhooks/events?after=zzz', headers: admin }), 400, 'invalid_cursor');
    expect((await t.inject({ method: 'DELETE', url: `/api/v1/webhooks/endpoints/${created.id}`, headers: admin })).statusCode).toBe(204);
    problem(await t.inject({ method: 'DELETE', url: `/api/v1/webhooks/endpoints/${created.id}`, headers: admin }), 404, 'not_found');
  });

  it("never shows or touches another company's endpoints, deliveries or events", async () => {
    const s = await setup();
    await s.reject();
    await vi.waitFor(() => expect(rx.got).toHaveLength(1), { timeout: 5000, interval: 20 });
    const other = await t.newAccount();
    const h = { authorization: `Bearer ${other.token}` };
    const id = s.endpoint.id;
    problem(await t.inject({ method: 'GET', url: `/api/v1/webhooks/endpoints/${id}`, headers: h }), 404, 'not_found');
    problem(await t.inject({ method: 'PATCH', url: `/api/v1/webhooks/endpoints/${id}`, headers: h, payload: { enabled: false } }), 404, 'not_found');
    problem(await t.inject({ method: 'DELETE', url: `/api/v1/webhooks/endpoints/${id}`, headers: h }), 404, 'not_found');
    problem(await t.inject({ method: 'GET', url: `/api/v1/webhooks/endpoints/${id}/deliveries`, headers: h }), 404, 'not_found');
    expect((await t.inject({ method: 'GET', url: '/api/v1/webhooks/endpoints', headers: h })).json().items).toEqual([]);
    expect((await t.inject({ method: 'GET', url: '/api/v1/webhooks/events', headers: h })).json().items).toEqual([]);
    expect((await t.inject({ method: 'GET', url: `/api/v1/webhooks/endpoints/${id}`, headers: s.admin })).json().enabled).toBe(true);
  });
});

describe.skipIf(!SERVER_STORE)(`two processes on one ${SERVER_STORE} database`, () => {
  it('deliver each message exactly once', async () => {
    const rx = await receiver();
    const db = await createTestDatabase(SERVER_STORE ?? 'postgres');
    const config = testConfig(db, { WEBHOOK_ALLOW_PRIVATE: 'true', CHECKPOINT_INTERVAL_MS: '0' });
    const apps: Array<Awaited<ReturnType<typeof buildApp>>> = [];
    const stores: Array<ReturnType<typeof db.open>> = [];
    try {
      for (let i = 0; i < 2; i++) {
        const store = db.open();
        if (i === 0) await store.migrate();
        stores.push(store);
        const app = await buildApp({ config, store, counters: new MemoryCounterStore(), logger: false });
        await app.ready();
        apps.push(app);
      }
      const [a, b] = apps as [(typeof apps)[number], (typeof apps)[number]];
      const { createUser } = await import('../src/users/accounts.js');
      await createUser(stores[0] as never, { company: 'two', email: 'two@example.com', password: 'two processes 123', role: 'admin' }, Date.now, null);
      const token = (await a.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'two@example.com', password: 'two processes 123' } })).json().access_token;
      await a.inject({ method: 'POST', url: '/api/v1/webhooks/endpoints', headers: { authorization: `Bearer ${token}` }, payload: { url: rx.url, event_types: ['hitl.rejected'] } });
      for (let i = 0; i < 30; i++) {
        const app = i % 2 === 0 ? a : b;
        expect((await app.inject({ method: 'POST', url: '/api/v1/hitl/reject', headers: { authorization: `Bearer ${token}` }, payload: { reviewer: `r${i}`, rejection_reason: 'x' } })).statusCode).toBe(201);
      }
      await vi.waitFor(async () => {
        const pending = await (stores[0] as (typeof stores)[number]).db.selectFrom('webhook_deliveries').select('status').where('status', '!=', 'delivered').execute();
        expect(pending).toEqual([]);
      }, { timeout: 10_000, interval: 50 });
      const ids = rx.got.map((r) => r.headers['webhook-id']);
      expect(ids).toHaveLength(30);
      expect(new Set(ids).size).toBe(30);
    } finally {
      for (const app of apps) await app.close();
      for (const s of stores) await s.close();
      await rx.close();
      await db.drop();
    }
  });
});

describe('a crash between commit and delivery', () => {
  it('still delivers the message, once, when the service starts again', async () => {
    const rx = await receiver();
    const dataDir = fs.mkdtempSync(path.join((await import('node:os')).tmpdir(), 'al-crash-'));
    const env = {
      LEDGER_DATA_DIR: dataDir,
      PORT: '0',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      LEDGER_BOOTSTRAP_EMAIL: 'crash@example.com',
      LEDGER_BOOTSTRAP_PASSWORD: 'crash test password',
    };
    const start = async (delivery: 'on' | 'off') => {
      const child = spawnCli(['serve'], { ...env, WEBHOOK_DELIVERY: delivery });
      const logs = new LogWatcher(child);
      const url = String((await logs.waitFor((l) => l.msg === 'audit-ledger listening')).url);
      return { child, url, logs };
    };
    const first = await start('off');
    try {
      const login = await fetch(`${first.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'crash@example.com', password: 'crash test password' }) });
      const token = ((await login.json()) as { access_token: string }).access_token;
      const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      const ep = await fetch(`${first.url}/api/v1/webhooks/endpoints`, { method: 'POST', headers: auth, body: JSON.stringify({ url: rx.url, event_types: ['api_key.created'] }) });
      expect(ep.status).toBe(201);
      // The event and its outbox row commit with this 201; nothing delivers it in this process.
      const key = await fetch(`${first.url}/api/v1/auth/api_keys`, { method: 'POST', headers: auth, body: JSON.stringify({ name: `k-${randomUUID()}`, rate_limit_per_minute: 10 }) });
      expect(key.status).toBe(201);
      first.child.kill('SIGKILL');
      await new Promise((r) => first.child.once('exit', r));
      expect(rx.got).toHaveLength(0);

      const second = await start('on');
      try {
        await vi.waitFor(() => expect(rx.got, JSON.stringify(second.logs.lines.filter((l) => Number(l.level) >= 40))).toHaveLength(1), { timeout: 10_000, interval: 50 });
        expect(JSON.parse((rx.got[0] as Received).body).type).toBe('api_key.created');
        // Delivered once: the outbox row is done, with a single attempt.
        const attempts = await fetch(`${second.url}/api/v1/webhooks/endpoints/${((await ep.json()) as { id: string }).id}/deliveries`, { headers: auth });
        expect(((await attempts.json()) as { items: unknown[] }).items).toHaveLength(1);

        // Request logs: an id that matches X-Request-Id, route, status, latency and company; never the key or the payload.
        const apiKey = ((await key.json()) as { key: string }).key;
        const ingest = await fetch(`${second.url}/api/v1/logs`, {
          method: 'POST',
          headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
          body: JSON.stringify({ event_type: 'log.test', data: { marker: 'payload-marker-7f3a' } }),
        });
        expect(ingest.status).toBe(200);
        const line = await second.logs.waitFor((l) => l.msg === 'request completed' && l.route === '/api/v1/logs');
        expect(line).toMatchObject({ reqId: ingest.headers.get('x-request-id'), method: 'POST', status: 200, latency_ms: expect.any(Number), company_id: expect.any(String) });
        const text = JSON.stringify(second.logs.lines);
        for (const secret of [apiKey, token, 'payload-marker-7f3a', 'crash test password']) expect(text).not.toContain(secret);
      } finally {
        second.child.kill('SIGTERM');
        await new Promise((r) => second.child.once('exit', r));
      }
    } finally {
      if (first.child.exitCode === null) first.child.kill('SIGKILL');
      await rx.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
