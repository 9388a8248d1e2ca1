// Log streams on both stores, against receivers that follow each protocol's acknowledgement
// rules (helpers/stream-receivers.ts): what each destination receives verifies offline against
// the pinned key; a failing destination is retried with backoff on the injected clock, then
// marked failed with a webhook event; pause and resume; an erased entry goes as its skeleton with
// its erasure record; the lag in /metrics; bad requests store nothing. The real syslog server is
// in streams-rsyslog.test.ts.
import fs from 'node:fs';
import path from 'node:path';
import { parseTrustedKeys, StreamCopyVerifier, type TrustedKey } from '@audit-ledger/core';
import { verifyCommand } from '@audit-ledger/verify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { batchId, backoffMs, FIRST_BACKOFF_MS } from '../src/streams/delivery.js';
import { SERVER_STORE, STORE_KINDS } from './helpers/env.js';
import { buildApp } from '../src/app.js';
import { MemoryCounterStore } from '../src/ratelimit/counter.js';
import { createUser } from '../src/users/accounts.js';
import { FakeClock, problem, startTestApp, testConfig, type TestApp } from './helpers/app.js';
import { createTestDatabase } from './helpers/stores.js';
import { datadogReceiver, ndjsonReceiver, splunkReceiver } from './helpers/stream-receivers.js';
import { verifySignature } from './helpers/webhook-receiver.js';

const waitFor = <T>(fn: () => T | Promise<T>) => vi.waitFor(fn, { timeout: 15_000, interval: 25 });

describe.each(STORE_KINDS)('log streams on %s', (kind) => {
  let t: TestApp;
  const clock = new FakeClock();
  let keys: TrustedKey[];
  beforeAll(async () => {
    t = await startTestApp(kind, { clock, env: { STREAM_ALLOW_PRIVATE: 'true', STREAM_TIMEOUT_MS: '2000', CHECKPOINT_INTERVAL_MS: '0', WEBHOOK_ALLOW_PRIVATE: 'true' } });
  });
  afterAll(() => t.close());

  async function setup() {
    const acct = await t.newAccount();
    const admin = { authorization: `Bearer ${acct.token}` };
    const { key } = await t.createKey(acct.token, 100_000);
    keys = parseTrustedKeys((await t.inject({ method: 'GET', url: '/api/v1/integrity/keys', headers: admin })).body);
    const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) => t.inject({ method, url: `/api/v1${url}`, headers: admin, ...(payload === undefined ? {} : { payload: payload as object }) });
    const append = async (n: number, extra: Record<string, unknown> = {}) => {
      const res = await t.inject({ method: 'POST', url: '/api/v1/logs/batch', headers: { 'x-api-key': key }, payload: { logs: Array.from({ length: n }, (_, i) => ({ event_type: i % 3 === 2 ? 'tool.failed' : 'tool.called', agent_id: `agent-${i % 2}`, data: { i, note: 'a=b|c\\d' }, ...extra })) } });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().log_ids as string[];
    };
    const stream = async (id: string) => (await call('GET', `/streams/${id}`)).json();
    return { acct, admin, key, call, append, stream };
  }

  const verifyLines = (lines: string[]) => {
    const v = new StreamCopyVerifier();
    for (const l of lines) v.addLine(l);
    return v.finish(keys);
  };

  it('an HTTPS stream sends signed NDJSON batches with stable ids that verify offline; a failure is retried with backoff, then the stream fails and says so', async () => {
    const s = await setup();
    const rx = await ndjsonReceiver();
    try {
      await s.append(5);
      const created = await s.call('POST', '/streams', { name: 'soc', destination: { type: 'https', url: rx.url }, format: 'ledger', start: 'beginning', retry_window_seconds: 600 });
      expect(created.statusCode, created.body).toBe(201);
      const st = created.json();
      expect(st).toMatchObject({ name: 'soc', destination: { type: 'https', url: rx.url }, has_secret: true, status: 'active', cursor_seq: 0, secret: expect.stringMatching(/^whsec_/) });
      // The secret is kept encrypted and never shown again.
      expect((await s.stream(st.id)).secret).toBeUndefined();
      const stored = await t.store.db.selectFrom('log_streams').select('secret_encrypted').where('stream_id', '=', st.id).executeTakeFirstOrThrow();
      expect(stored.secret_encrypted).not.toContain(st.secret.slice(6, 20));

      // Seq 0–4 and seq 5, the stream's own creation record in the administrators' trail.
      await waitFor(async () => expect((await s.stream(st.id)).cursor_seq).toBe(6));
      expect(rx.got).toHaveLength(1);
      const first = rx.got[0]!;
      expect(first.headers['content-type']).toBe('application/x-ndjson');
      expect(first.headers['idempotency-key']).toBe(batchId(st.id, 0, 5));
      expect(verifySignature(st.secret, { headers: { ...first.headers, 'webhook-id': first.headers['webhook-id'] }, body: first.body })).toBe(true);
      const lines = first.body.trim().split('\n').map((l) => JSON.parse(l));
      expect(lines.map((l) => l.kind)).toEqual(['batch', 'entry', 'entry', 'entry', 'entry', 'entry', 'entry']);
      expect(lines[0]).toMatchObject({ from_seq: 0, to_seq: 5, entry_count: 6, filtered: false, previous_checkpoint: null });
      expect(lines[6].entry).toMatchObject({ event_type: 'stream.created', source: 'audit-ledger/admin', data: { stream_id: st.id, name: 'soc' } });
      const report = verifyLines(rx.lines());
      expect(report.ok, JSON.stringify(report.checks)).toBe(true);
      expect(report.pinned).toBe(true);
      expect((await s.stream(st.id)).lag).toEqual({ entries: 0, seconds: 0 });

      // The receiver fails: the same batch is retried after a backoff (the clock moves, nobody sleeps).
      rx.script.push(503, 503);
      await s.append(2);
      await waitFor(async () => expect((await s.stream(st.id)).attempts).toBe(1));
      let now = await s.stream(st.id);
      expect(now).toMatchObject({ status: 'active', cursor_seq: 6, last_error: expect.stringContaining('HTTP 503'), failing_since: expect.any(String), lag: { entries: 2 } });
      const waited = Date.parse(now.next_attempt_at) - clock.now();
      expect(waited).toBeGreaterThanOrEqual(FIRST_BACKOFF_MS * 0.8);
      expect(waited).toBeLessThanOrEqual(FIRST_BACKOFF_MS * 1.2);
      clock.advance(waited);
      await waitFor(async () => expect((await s.stream(st.id)).attempts).toBe(2));
      now = await s.stream(st.id);
      expect(Date.parse(now.next_attempt_at) - clock.now()).toBeGreaterThan(FIRST_BACKOFF_MS * 1.5);
      clock.advance(Date.parse(now.next_attempt_at) - clock.now());
      await waitFor(async () => expect((await s.stream(st.id)).cursor_seq).toBe(8));
      // Three sends of the one batch, all with its one id; the copy (with repeats) still verifies.
      const ids = rx.got.slice(1).map((g) => g.headers['idempotency-key']);
      expect(ids).toEqual([batchId(st.id, 6, 7), batchId(st.id, 6, 7), batchId(st.id, 6, 7)]);
      expect(verifyLines(rx.lines()).ok).toBe(true);
      now = await s.stream(st.id);
      expect(now).toMatchObject({ attempts: 0, failing_since: null, last_error: null, delivered_batches: 2, delivered_entries: 8 });
      // The second batch proves its checkpoint extends the first's.
      const second = rx.got.at(-1)!.body.split('\n')[0]!;
      expect(JSON.parse(second)).toMatchObject({ previous_checkpoint: { tree_size: 6 }, consistency_proof: expect.any(Array) });

      // Failing for the whole retry window: failed, a webhook event, and resume sends it.
      rx.script.push(...Array(40).fill(500));
      await s.append(1);
      for (let i = 0; i < 40 && (await s.stream(st.id)).status === 'active'; i++) {
        const before = (await s.stream(st.id)).attempts;
        await waitFor(async () => expect((await s.stream(st.id)).attempts).toBeGreaterThan(before));
        const n = await s.stream(st.id);
        if (n.status !== 'active') break;
        clock.advance(Date.parse(n.next_attempt_at) - clock.now());
      }
      now = await s.stream(st.id);
      expect(now).toMatchObject({ status: 'failed', status_reason: expect.stringContaining('retry window'), cursor_seq: 8 });
      const events = (await s.call('GET', '/webhooks/events?type=log_stream.failed')).json().items;
      expect(events).toHaveLength(1);
      expect(events[0].data).toMatchObject({ stream_id: st.id, name: 'soc', destination_type: 'https', cursor_seq: 8, last_error: 'HTTP 500' });
      const metrics = (await t.inject({ method: 'GET', url: '/api/v1/metrics', remoteAddress: '127.0.0.1' })).body;
      expect(metrics).toMatch(/audit_ledger_stream_batches_total\{result="failed"\} [1-9]/);
      expect(metrics).toContain(`audit_ledger_stream_lag_entries{company_id="${s.acct.companyId}",stream_id="${st.id}",status="failed"} 1`);
      rx.script.length = 0;
      expect((await s.call('POST', `/streams/${st.id}/resume`)).json()).toMatchObject({ status: 'active', attempts: 0, failing_since: null });
      // Seq 8 and seq 9, the resume's own record.
      await waitFor(async () => expect((await s.stream(st.id)).cursor_seq).toBe(10));
      expect(verifyLines(rx.lines()).ok).toBe(true);

      // Every change is in the administrators' trail.
      const trail = (await s.call('GET', '/logs?source=audit-ledger/admin&limit=100')).json().items.map((e: { event_type: string }) => e.event_type);
      expect(trail).toEqual(expect.arrayContaining(['stream.created', 'stream.resumed']));

      // A collector that answers 429 with Retry-After is not sent the batch again before then.
      rx.script.push({ status: 429, headers: { 'retry-after': '120' } });
      await s.append(1);
      await waitFor(async () => expect((await s.stream(st.id)).attempts).toBe(1));
      const asked = await s.stream(st.id);
      expect(asked.last_error).toContain('HTTP 429');
      expect(Date.parse(asked.next_attempt_at) - clock.now()).toBeGreaterThanOrEqual(120_000);
      clock.advance(Date.parse(asked.next_attempt_at) - clock.now());
      await waitFor(async () => expect((await s.stream(st.id)).attempts).toBe(0));
      const batches = (await s.call('GET', `/streams/${st.id}/batches`)).json().items;
      // Newest first; the resume's record may have come in its own batch.
      expect(batches.map((b: { from_seq: number }) => b.from_seq).slice(-3)).toEqual([8, 6, 0]);
      expect(batches.at(-2)).toMatchObject({ batch_id: batchId(st.id, 6, 7), attempts: 3, entry_count: 2 });
    } finally {
      await rx.close();
    }
  });

  it('Splunk HEC: events wrapped as HEC wants, sent again only when not acknowledged; Datadog: a JSON array with the API key; both OCSF, both verify', async () => {
    const s = await setup();
    const splunk = await splunkReceiver('hec-token-1');
    const dd = await datadogReceiver('dd-key-1');
    const rx = await ndjsonReceiver();
    try {
      await s.append(4);
      const a = (await s.call('POST', '/streams', { name: 'splunk', destination: { type: 'splunk_hec', url: splunk.url, token: 'hec-token-1', index: 'audit' }, format: 'ocsf', start: 'beginning' })).json();
      const b = (await s.call('POST', '/streams', { name: 'dd', destination: { type: 'datadog', url: dd.url, api_key: 'dd-key-1', service: 'agents' }, format: 'ocsf', start: { from_seq: 1 }, filter: { event_types: ['tool.called'] } })).json();
      // Several agents in one filter: every entry of either, none of the trail's.
      const agents = (await s.call('POST', '/streams', { name: 'agents', destination: { type: 'https', url: rx.url }, format: 'ledger', start: 'beginning', filter: { agent_ids: ['agent-0', 'agent-1'] } })).json();
      expect(a).toMatchObject({ has_secret: true, destination: { type: 'splunk_hec', url: splunk.url, index: 'audit' } });
      expect(a.destination.token).toBeUndefined();
      expect(b.destination.api_key).toBeUndefined();
      // Seq 0–3, then the three streams' creation records (seq 4–6).
      await waitFor(async () => expect((await s.stream(a.id)).cursor_seq).toBe(7));
      // Datadog's filter selects seq 1 and 3: the rest waits for an entry it selects.
      await waitFor(() => expect(dd.logs.length).toBe(3));
      // Splunk: each batch acknowledged at its second poll, so each sent once.
      expect(splunk.events.length).toBe((await s.stream(a.id)).delivered_batches);
      for (const e of splunk.events) expect(splunk.polls.get(e.ackId)).toBe(2);
      expect(splunk.events.every((e) => e.channel === a.id)).toBe(true);
      const items = splunk.events.flatMap((e) => e.items);
      expect(items[0]).toMatchObject({ source: 'audit-ledger', sourcetype: '_json', index: 'audit', event: { class_uid: 6003, activity_name: 'audit_ledger.stream_batch' } });
      expect(items[1]!.event).toMatchObject({ class_uid: 6003, category_uid: 6, type_uid: 600399, activity_name: 'tool.called', metadata: { sequence: 0, product: { name: 'audit-ledger' } }, actor: { user: { uid: 'agent-0' } } });
      expect(items[3]!.event).toMatchObject({ activity_name: 'tool.failed', status: 'Failure', status_id: 2 });
      let report = verifyLines(items.map((i) => JSON.stringify(i)));
      expect(report.ok, JSON.stringify(report.checks)).toBe(true);
      // Datadog: from seq 1, tool.called only (seq 1 and 3); the copy says it is filtered.
      expect(dd.logs.map((l) => l.service)).toEqual(['agents', 'agents', 'agents']);
      const seqs = dd.logs.slice(1).map((l) => JSON.parse(l.message).metadata.sequence);
      expect(seqs).toEqual([1, 3]);
      report = verifyLines(dd.logs.map((l) => JSON.stringify(l)));
      expect(report.ok, JSON.stringify(report.checks)).toBe(true);
      expect(report.checks.at(-1)!.message).toMatch(/seq 1–[56], 2 entries verified.*filtered/);
      await waitFor(() => expect(rx.lines().filter((l) => l.includes('"kind":"entry"'))).toHaveLength(4));
      expect(rx.lines().flatMap((l) => (JSON.parse(l).kind === 'entry' ? [JSON.parse(l).entry.seq] : []))).toEqual([0, 1, 2, 3]);
      expect(verifyLines(rx.lines()).ok).toBe(true);
      expect(agents.filter).toEqual({ agent_ids: ['agent-0', 'agent-1'] });
      // A tampered copy fails: one entry's data changed in what Datadog holds.
      const tampered = dd.logs.map((l, i) => (i === 1 ? JSON.stringify({ ...l, message: l.message.replace('"i":1', '"i":9') }) : JSON.stringify(l)));
      expect(verifyLines(tampered).ok).toBe(false);
      // A dropped batch header leaves its entries unproven; a dropped entry is missing from its batch.
      expect(verifyLines(items.slice(1).map((i) => JSON.stringify(i))).ok).toBe(false);
      expect(verifyLines(items.filter((_, i) => i !== 2).map((i) => JSON.stringify(i))).checks.some((c) => c.code === 'entries_missing')).toBe(true);
    } finally {
      await splunk.close();
      await dd.close();
      await rx.close();
    }
  });

  it('a directory of sealed CEF segments verifies with audit-ledger-verify --stream; an erased entry goes as its skeleton with its erasure record; pause holds the cursor', async () => {
    const s = await setup();
    const ids = await s.append(3);
    const erased = await s.call('POST', '/compliance/erasures', { log_ids: [ids[1]!], legal_basis: 'GDPR Art. 17' });
    expect(erased.statusCode, erased.body).toBe(201);
    const folder = 'cef';
    const st = (await s.call('POST', '/streams', { name: 'files', destination: { type: 'directory', folder }, format: 'cef', start: 'beginning' })).json();
    const control = (await s.call('POST', '/streams', { name: 'control', destination: { type: 'directory', folder: `${folder}-control` }, format: 'ledger', start: 'beginning' })).json();
    // Under the company's own folder: two companies naming the same folder never share it.
    const dir = path.join(t.config.streamDirectory, s.acct.companyId, folder);
    await waitFor(async () => expect((await s.stream(st.id)).lag.entries).toBe(0));
    const files = fs.readdirSync(dir).sort();
    // Private like the rest of the data directory: no access for group or others.
    expect(fs.statSync(dir).mode & 0o077).toBe(0);
    for (const f of files) expect(fs.statSync(path.join(dir, f)).mode & 0o077, f).toBe(0);
    expect(files[0]).toMatch(new RegExp(`^00000000000000000000-0000000000000000000\\d-[0-9a-f-]{36}\\.cef$`));
    const segments = files.length;
    const text = fs.readFileSync(path.join(dir, files[0]!), 'utf8');
    const lines = text.trim().split('\n');
    expect(lines[1]).toMatch(/^CEF:0\|audit-ledger\|audit-ledger\|[^|]+\|tool\.called\|tool\.called\|3\|rt=\d+ externalId=[0-9a-f-]{36} act=tool\.called suser=agent-0 sourceServiceName=\S+ cs1Label=trace_id/);
    expect(lines[3]).toMatch(/\|tool\.failed\|tool\.failed\|7\|/);
    // The erased entry: its skeleton (no data), proven by the erasure record in the header.
    const erasedLine = JSON.parse(Buffer.from(/auditLedger=([A-Za-z0-9_-]+)/.exec(lines[2]!)![1]!, 'base64url').toString('utf8'));
    expect(erasedLine.entry).toMatchObject({ seq: 1, data: null, erasure_id: expect.any(String) });
    const header = JSON.parse(Buffer.from(/auditLedger=([A-Za-z0-9_-]+)/.exec(lines[0]!)![1]!, 'base64url').toString('utf8'));
    expect(header.erasure_records.map((r: { entry: { log_id: string } }) => r.entry.log_id)).toEqual([erasedLine.entry.erasure_id]);
    const keyFile = path.join(t.db.dataDir, `keys-${st.id}.json`);
    fs.writeFileSync(keyFile, (await s.call('GET', '/integrity/keys')).body);
    const verified = await verifyCommand(dir, { stream: true, publicKey: keyFile });
    expect(verified.output).toContain('VERIFIED');
    expect(verified.output).toMatch(/erased/i);
    expect(verified.code).toBe(0);

    // Paused: the control stream delivers what comes next, the paused one does not.
    expect((await s.call('POST', `/streams/${st.id}/pause`)).json()).toMatchObject({ status: 'paused' });
    await s.append(2);
    await waitFor(async () => expect((await s.stream(control.id)).lag.entries).toBe(0));
    const paused = await s.stream(st.id);
    // The pause's own record and the two entries wait.
    expect(paused).toMatchObject({ status: 'paused', lag: { entries: 3 } });
    expect(fs.readdirSync(dir)).toHaveLength(segments);
    await s.call('POST', `/streams/${st.id}/resume`);
    await waitFor(async () => expect((await s.stream(st.id)).lag.entries).toBe(0));
    expect(fs.readdirSync(dir).length).toBeGreaterThan(segments);
    expect((await verifyCommand(dir, { stream: true, publicKey: keyFile })).code).toBe(0);
    // A segment changed on disk no longer verifies: seq 0's data, inside its auditLedger payload.
    const payload = /auditLedger=([A-Za-z0-9_-]+)/.exec(lines[1]!)![1]!;
    const changed = Buffer.from(Buffer.from(payload, 'base64url').toString('utf8').replace('"i":0', '"i":5')).toString('base64url');
    expect(changed).not.toBe(payload);
    fs.writeFileSync(path.join(dir, files[0]!), text.replace(payload, changed));
    expect((await verifyCommand(dir, { stream: true, publicKey: keyFile })).code).toBe(1);
    expect((await s.call('DELETE', `/streams/${st.id}`)).statusCode).toBe(204);
    expect((await s.call('GET', `/streams/${st.id}`)).statusCode).toBe(404);
  });

  it('refuses what a client can send wrong with a 400 naming the field, and stores nothing; only admins manage streams', async () => {
    const s = await setup();
    await s.append(2);
    const bad: Array<[unknown, string]> = [
      [{ name: 'x', destination: { type: 'https', url: 'https://example.com/x' }, format: 'cef' }, '/body/format'],
      [{ name: 'x', destination: { type: 'splunk_hec', url: 'https://example.com' }, format: 'ledger' }, '/body/destination'],
      [{ name: 'x', destination: { type: 'ftp', url: 'ftp://x' }, format: 'ledger' }, '/body/destination'],
      [{ name: 'x', destination: { type: 'directory', folder: '../etc' }, format: 'ledger' }, '/body/destination'],
      [{ name: 'x', destination: { type: 'syslog', host: 'siem.example', port: 70000 }, format: 'cef' }, '/body/destination'],
      [{ name: 'x', destination: { type: 'syslog', host: '127.0.0.1', port: 6514, ca: 'not a certificate' }, format: 'cef' }, '/body/destination/ca'],
      [{ name: 'x', destination: { type: 'directory', folder: 'ok' }, format: 'xml' }, '/body/format'],
      [{ name: 'x', destination: { type: 'directory', folder: 'ok' }, format: 'ledger', start: { from_seq: 3 } }, '/body/start/from_seq'],
      [{ name: 'x', destination: { type: 'directory', folder: 'ok' }, format: 'ledger', retry_window_seconds: 5 }, '/body/retry_window_seconds'],
      [{ name: 'x', destination: { type: 'https', url: 'not a url' }, format: 'ledger' }, '/body/destination/url'],
    ];
    for (const [payload, field] of bad) {
      const res = await s.call('POST', '/streams', payload);
      const p = problem(res, 400, 'validation_failed');
      expect(JSON.stringify(p.errors), JSON.stringify(payload)).toContain(field);
    }
    expect((await s.call('GET', '/streams')).json().items).toEqual([]);
    expect(await t.store.db.selectFrom('log_streams').select('stream_id').where('company_id', '=', s.acct.companyId).execute()).toEqual([]);
    const auditor = await t.newAccount({ role: 'auditor', company: s.acct.companyName });
    const res = await t.inject({ method: 'POST', url: '/api/v1/streams', headers: { authorization: `Bearer ${auditor.token}` }, payload: { name: 'x', destination: { type: 'directory', folder: 'ok' }, format: 'ledger' } });
    problem(res, 403, 'forbidden');
    problem(await s.call('PATCH', '/streams/019ca945-0a00-7a11-8000-0000000000d1', { name: 'y' }), 404, 'not_found');
  });
});

describe('log streams with the default address policy', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite');
  });
  afterAll(() => t.close());

  it('refuses plain http and private addresses unless STREAM_ALLOW_PRIVATE=true', async () => {
    const acct = await t.newAccount();
    const call = (payload: object) => t.inject({ method: 'POST', url: '/api/v1/streams', headers: { authorization: `Bearer ${acct.token}` }, payload });
    expect(JSON.stringify(problem(await call({ name: 'x', destination: { type: 'https', url: 'http://siem.example/x' }, format: 'ledger' }), 400, 'validation_failed').errors)).toContain('must be https');
    expect(JSON.stringify(problem(await call({ name: 'x', destination: { type: 'https', url: 'https://10.0.0.7/x' }, format: 'ledger' }), 400, 'validation_failed').errors)).toContain('STREAM_ALLOW_PRIVATE');
    expect(JSON.stringify(problem(await call({ name: 'x', destination: { type: 'syslog', host: '127.0.0.1', port: 6514 }, format: 'cef' }), 400, 'validation_failed').errors)).toContain('STREAM_ALLOW_PRIVATE');
  });

  it('backs off exponentially with jitter, capped', () => {
    expect(backoffMs(1, () => 0.5)).toBe(FIRST_BACKOFF_MS);
    expect(backoffMs(3, () => 0.5)).toBe(4 * FIRST_BACKOFF_MS);
    expect(backoffMs(3, () => 0)).toBe(Math.round(4 * FIRST_BACKOFF_MS * 0.8));
    // The cap is the longest wait, jitter included (the core's retry policy); a Retry-After is a floor, capped too.
    expect(backoffMs(60, () => 1)).toBe(300_000);
    expect(backoffMs(1, () => 0.5, 120_000)).toBe(120_000);
    expect(backoffMs(1, () => 0.5, 86_400_000)).toBe(300_000);
  });
});

describe.skipIf(!SERVER_STORE)(`a log stream served by two processes on one ${SERVER_STORE} database`, () => {
  it('delivers each batch once: one process holds the stream at a time', async () => {
    const rx = await ndjsonReceiver();
    const db = await createTestDatabase(SERVER_STORE ?? 'postgres');
    const config = testConfig(db, { STREAM_ALLOW_PRIVATE: 'true', CHECKPOINT_INTERVAL_MS: '0' });
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
      await createUser(stores[0] as never, { company: 'two-streams', email: 'two-streams@example.com', password: 'two processes 123', role: 'admin' }, Date.now, null);
      const admin = { authorization: `Bearer ${(await a.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'two-streams@example.com', password: 'two processes 123' } })).json().access_token}` };
      const agent = { 'x-api-key': (await a.inject({ method: 'POST', url: '/api/v1/auth/api_keys', headers: admin, payload: { name: 'agents', rate_limit_per_minute: 100_000 } })).json().key as string };
      const st = (await a.inject({ method: 'POST', url: '/api/v1/streams', headers: admin, payload: { name: 'shared', destination: { type: 'https', url: rx.url }, format: 'ledger', start: 'beginning' } })).json();
      for (let i = 0; i < 20; i++) {
        const app = i % 2 === 0 ? a : b;
        const res = await app.inject({ method: 'POST', url: '/api/v1/logs/batch', headers: agent, payload: { logs: Array.from({ length: 25 }, (_, j) => ({ event_type: 'tool.called', data: { i, j } })) } });
        expect(res.statusCode, res.body).toBe(200);
      }
      await vi.waitFor(async () => expect((await b.inject({ method: 'GET', url: `/api/v1/streams/${st.id}`, headers: admin })).json().lag.entries).toBe(0), { timeout: 20_000, interval: 50 });
      const ids = rx.got.map((g) => g.headers['idempotency-key']);
      expect(new Set(ids).size).toBe(ids.length);
      const seqs = rx.lines().flatMap((l) => (JSON.parse(l).kind === 'entry' ? [JSON.parse(l).entry.seq as number] : []));
      expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i));
      expect(seqs.length).toBeGreaterThanOrEqual(501);
    } finally {
      for (const app of apps) await app.close();
      for (const s of stores) await s.close();
      await rx.close();
      await db.drop();
    }
  });
});
