// Ingestion, reads, listing and verification over HTTP, on both stores.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENESIS_PREV_HASH } from '@audit-ledger/core';
import { STORE_KINDS } from './helpers/env.js';
import { type Account, problem, startTestApp, type TestApp } from './helpers/app.js';
import { assertChainIntact, countEntries, ingest, ingestBatch } from './helpers/ledger.js';

const TRACE = '6f1c2a4e-3b5d-4c7e-9f10-2a3b4c5d6e7f';
const SESSION = '0b0c0d0e-1a2b-4c3d-8e4f-5a6b7c8d9e0f';

describe.each(STORE_KINDS)('ledger on %s', (kind) => {
  let t: TestApp;
  let acct: Account;
  let key: string;

  beforeAll(async () => {
    t = await startTestApp(kind, { env: { MAX_BATCH_SIZE: '50' } });
    acct = await t.newAccount();
    key = (await t.createKey(acct.token, 1_000_000)).key;
  });
  afterAll(() => t.close());

  const get = (url: string, headers: Record<string, string> = { 'x-api-key': key }) => t.inject({ method: 'GET', url, headers });

  it('appends one event and returns its id, seq and hash; reads and verifies it', async () => {
    const res = await ingest(t, key, { event_type: 'tool.called', data: { tool: 'search', q: 'x' }, source: 'agent-1', trace_id: TRACE, session_id: SESSION });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['company_id', 'created_at', 'event_type', 'hash', 'ingested', 'log_id', 'log_ids', 'seq']);
    // What agent SDKs read besides: the batch answer's shape for one event.
    expect(body).toMatchObject({ ingested: 1, log_ids: [body.log_id] });
    expect(body).toMatchObject({ company_id: acct.companyId, event_type: 'tool.called', seq: 0, created_at: '2026-03-01T12:00:00.000Z' });
    expect(body.log_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(body.hash).toMatch(/^[0-9a-f]{64}$/);

    const entry = (await get(`/api/v1/logs/${body.log_id}`)).json();
    expect(entry).toMatchObject({
      log_id: body.log_id, company_id: acct.companyId, seq: 0, format_version: 3, event_type: 'tool.called', data: { tool: 'search', q: 'x' },
      source: 'agent-1', trace_id: TRACE, session_id: SESSION, timestamp: null, extra: null, event_id: null, links: null, prev_hash: GENESIS_PREV_HASH, hash: body.hash,
      key_id: expect.stringMatching(/^[0-9a-f]{16}$/),
      content_commitment: expect.stringMatching(/^[0-9a-f]{64}$/), erased: false, erasure_id: null, erased_at: null,
    });
    expect(Buffer.from(entry.content_salt, 'base64')).toHaveLength(32);
    expect(entry.content_hash).toBe(body.hash);
    expect((await get(`/api/v1/logs?trace_id=${TRACE}`)).json().items[0].content_hash).toBe(body.hash);
    expect(Buffer.from(entry.signature, 'base64')).toHaveLength(64);

    const v = (await get(`/api/v1/logs/${body.log_id}/verify`)).json();
    expect(v).toEqual({ log_id: body.log_id, hash: body.hash, chain_valid: true, signature_valid: true, erased: false, verified_at: '2026-03-01T12:00:00.000Z', seq: 0, key_id: entry.key_id, problems: [], merkle_included: true, checkpoint: expect.objectContaining({ tree_size: 1 }), erasure: null, agent_signature: { state: 'none', key_id: null, agent_id: null, detail: null } });
  });

  it('stores envelope fields, accepts payload for data, and keeps unknown fields under extra', async () => {
    const res = await ingest(t, key, {
      event_type: 'llm.call', payload: { model: 'm', tokens: 12 }, timestamp: '2026-03-01T11:59:59.5+01:00', span_id: 's1', parent_span_id: 's0',
      parent_event_id: 'e0', root_event_id: 'e-root', agent_id: 'a1', workflow_id: 'w1', causality_type: 'direct', schema_version: 2,
      sdk: { name: 'py', version: '1.2' }, region: 'eu',
    });
    expect(res.statusCode).toBe(200);
    const e = (await get(`/api/v1/logs/${res.json().log_id}`)).json();
    expect(e).toMatchObject({ data: { model: 'm', tokens: 12 }, timestamp: '2026-03-01T11:59:59.5+01:00', span_id: 's1', parent_span_id: 's0', parent_event_id: 'e0',
      root_event_id: 'e-root', agent_id: 'a1', workflow_id: 'w1', causality_type: 'direct', schema_version: '2', extra: { sdk: { name: 'py', version: '1.2' }, region: 'eu' } });
    expect(e).not.toHaveProperty('payload');
    expect((await get(`/api/v1/logs/${e.log_id}/verify`)).json().chain_valid).toBe(true);
  });

  it('appends a batch in request order', async () => {
    const before = await countEntries(t.store, acct.companyId);
    const logs = Array.from({ length: 20 }, (_, i) => ({ event_type: 'agent.step', data: { i }, trace_id: TRACE }));
    const res = await ingestBatch(t, key, logs);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.ingested).toBe(20);
    expect(body.appended).toBe(20);
    expect(body.log_ids).toHaveLength(20);
    const seqs = await Promise.all(body.log_ids.map(async (id: string, i: number) => {
      const e = (await get(`/api/v1/logs/${id}`)).json();
      expect(e.data).toEqual({ i });
      return e.seq;
    }));
    expect(seqs).toEqual(Array.from({ length: 20 }, (_, i) => before + i));
    await assertChainIntact(t.store, acct.companyId);
  });

  describe('rejects every invalid input with 400 and appends nothing', () => {
    const single: Array<[string, unknown, string]> = [
      ['missing event_type', { data: {} }, '/body/event_type'],
      ['empty event_type', { event_type: '', data: {} }, '/body/event_type'],
      ['blank event_type', { event_type: '   ', data: {} }, '/body/event_type'],
      ['event_type over 200', { event_type: 'e'.repeat(201), data: {} }, '/body/event_type'],
      ['event_type not a string', { event_type: 5, data: {} }, '/body/event_type'],
      ['missing data', { event_type: 'x' }, '/body/data'],
      ['data an array', { event_type: 'x', data: [1] }, '/body/data'],
      ['data a string', { event_type: 'x', data: 'text' }, '/body/data'],
      ['data null', { event_type: 'x', data: null }, '/body/data'],
      ['data and payload', { event_type: 'x', data: {}, payload: {} }, '/body/payload'],
      ['trace_id not a UUID', { event_type: 'x', data: {}, trace_id: 'trace-1' }, '/body/trace_id'],
      ['session_id not a UUID', { event_type: 'x', data: {}, session_id: '123' }, '/body/session_id'],
      ['timestamp not ISO 8601', { event_type: 'x', data: {}, timestamp: 'yesterday' }, '/body/timestamp'],
      ['source not a string', { event_type: 'x', data: {}, source: 42 }, '/body/source'],
      ['source over 200', { event_type: 'x', data: {}, source: 's'.repeat(201) }, '/body/source'],
      ['idempotency_key over 255', { event_type: 'x', data: {}, idempotency_key: 'k'.repeat(256) }, '/body/idempotency_key'],
      ['span_id empty', { event_type: 'x', data: {}, span_id: '' }, '/body/span_id'],
      ['event_id not a string', { event_type: 'x', data: {}, event_id: 42 }, '/body/event_id'],
      ['event_id empty', { event_type: 'x', data: {}, event_id: '' }, '/body/event_id'],
      ['event_id over 200', { event_type: 'x', data: {}, event_id: 'e'.repeat(201) }, '/body/event_id'],
      ['data nested too deep', { event_type: 'x', data: JSON.parse('{"a":'.repeat(70) + '1' + '}'.repeat(70)) }, '/body/data'],
      ['body an array', [{ event_type: 'x', data: {} }], '/body'],
      ['an extra field nested too deep', { event_type: 'x', data: {}, meta: JSON.parse('{"a":'.repeat(70) + '1' + '}'.repeat(70)) }, '/body'],
    ];
    it('single: a number out of double range (1e400) in data or an extra field', async () => {
      const before = await countEntries(t.store, acct.companyId);
      for (const [payload, field] of [['{"event_type":"x","data":{"n":1e400}}', '/body/data/n'], ['{"event_type":"x","data":{},"n":-1e400}', '/body/n']]) {
        const res = await t.inject({ method: 'POST', url: '/api/v1/logs', headers: { 'x-api-key': key, 'content-type': 'application/json' }, payload });
        const body = problem(res, 400, 'unrepresentable_number');
        expect((body.errors as Array<{ field: string }>).map((e) => e.field)).toEqual([field]);
      }
      expect(await countEntries(t.store, acct.companyId)).toBe(before);
    });

    it('single: __proto__ and constructor.prototype keys are refused with a clear 400', async () => {
      const before = await countEntries(t.store, acct.companyId);
      for (const payload of ['{"event_type":"x","data":{"__proto__":{"admin":true}}}', '{"event_type":"x","data":{"constructor":{"prototype":{"a":1}}}}']) {
        const body = problem(await t.inject({ method: 'POST', url: '/api/v1/logs', headers: { 'x-api-key': key, 'content-type': 'application/json' }, payload }), 400, 'malformed_json');
        expect(body.detail).toMatch(/"(__proto__|prototype)" is refused/);
      }
      expect(await countEntries(t.store, acct.companyId)).toBe(before);
    });

    it('single: a bad value in a nullable field is reported once, without union noise', async () => {
      const body = problem(await ingest(t, key, { event_type: 'x', data: {}, timestamp: '2026-03-01T12:00:00' }), 400, 'validation_failed');
      expect(body.errors).toEqual([{ field: '/body/timestamp', message: 'must match format "date-time"' }]);
    });
    it.each(single)('single: %s', async (_name, payload, field) => {
      const before = await countEntries(t.store, acct.companyId);
      const body = problem(await ingest(t, key, payload), 400, 'validation_failed');
      expect((body.errors as Array<{ field: string }>).map((e) => e.field)).toContain(field);
      expect(await countEntries(t.store, acct.companyId)).toBe(before);
    });

    const batch: Array<[string, unknown, string]> = [
      ['logs missing', {}, '/body/logs'],
      ['logs empty', { logs: [] }, '/body/logs'],
      ['logs not an array', { logs: { event_type: 'x', data: {} } }, '/body/logs'],
      ['one bad item among good ones', { logs: [{ event_type: 'ok', data: {} }, { event_type: 'ok', data: {} }, { event_type: 'ok', data: {} }, { data: {} }] }, '/body/logs/3/event_type'],
      ['bad trace_id in an item', { logs: [{ event_type: 'ok', data: {} }, { event_type: 'ok', data: {}, trace_id: 'nope' }] }, '/body/logs/1/trace_id'],
      ['data and payload in an item', { logs: [{ event_type: 'ok', data: {}, payload: {} }] }, '/body/logs/0/payload'],
      ['missing data in an item', { logs: [{ event_type: 'ok', data: {} }, { event_type: 'ok' }] }, '/body/logs/1/data'],
      ['unknown top-level field', { logs: [{ event_type: 'ok', data: {} }], extra: 1 }, '/body/extra'],
    ];
    it.each(batch)('batch: %s', async (_name, payload, field) => {
      const before = await countEntries(t.store, acct.companyId);
      const res = await t.inject({ method: 'POST', url: '/api/v1/logs/batch', headers: { 'x-api-key': key }, payload: payload as object });
      const body = problem(res, 400, 'validation_failed');
      expect((body.errors as Array<{ field: string }>).map((e) => e.field)).toContain(field);
      expect(await countEntries(t.store, acct.companyId)).toBe(before);
    });

    it('batch over MAX_BATCH_SIZE → 413', async () => {
      const before = await countEntries(t.store, acct.companyId);
      const body = problem(await ingestBatch(t, key, Array.from({ length: 51 }, () => ({ event_type: 'x', data: {} }))), 413, 'batch_too_large');
      expect(body.detail).toContain('50');
      expect(await countEntries(t.store, acct.companyId)).toBe(before);
      expect((await ingestBatch(t, key, Array.from({ length: 50 }, () => ({ event_type: 'x', data: {} })))).statusCode).toBe(200);
      // The size is checked before any item is validated: invalid items still get 413.
      problem(await ingestBatch(t, key, Array.from({ length: 51 }, () => ({ data: 'not an object' }))), 413, 'batch_too_large');
    });

    it('malformed JSON, wrong content type and oversize bodies', async () => {
      const before = await countEntries(t.store, acct.companyId);
      problem(await t.inject({ method: 'POST', url: '/api/v1/logs', headers: { 'x-api-key': key, 'content-type': 'application/json' }, payload: '{"event_type":' }), 400, 'malformed_json');
      problem(await t.inject({ method: 'POST', url: '/api/v1/logs', headers: { 'x-api-key': key, 'content-type': 'text/plain' }, payload: 'hello' }), 415, 'unsupported_media_type');
      problem(await ingest(t, key, { event_type: 'x', data: { blob: 'x'.repeat(1_100_000) } }), 413, 'payload_too_large');
      expect(await countEntries(t.store, acct.companyId)).toBe(before);
    });
  });

  it('requires an API key to ingest: none → 401, a user token → 403', async () => {
    const before = await countEntries(t.store, acct.companyId);
    problem(await t.inject({ method: 'POST', url: '/api/v1/logs', payload: { event_type: 'x', data: {} } }), 401, 'missing_credential');
    problem(await t.inject({ method: 'POST', url: '/api/v1/logs', headers: { authorization: `Bearer ${acct.token}` }, payload: { event_type: 'x', data: {} } }), 403, 'forbidden');
    problem(await t.inject({ method: 'POST', url: '/api/v1/logs/batch', headers: { authorization: `Bearer ${acct.token}` }, payload: { logs: [{ event_type: 'x', data: {} }] } }), 403, 'forbidden');
    expect(await countEntries(t.store, acct.companyId)).toBe(before);
    // An API key sent as a bearer token ingests.
    expect((await t.inject({ method: 'POST', url: '/api/v1/logs', headers: { authorization: `Bearer ${key}` }, payload: { event_type: 'x', data: {} } })).statusCode).toBe(200);
  });

  describe('idempotency', () => {
    it('an Idempotency-Key repeat returns the original log_id and appends nothing', async () => {
      const first = await ingest(t, key, { event_type: 'payment.sent', data: { amount: 10 } }, { 'idempotency-key': 'pay-1' });
      const before = await countEntries(t.store, acct.companyId);
      const again = await ingest(t, key, { event_type: 'payment.sent', data: { amount: 10 } }, { 'idempotency-key': 'pay-1' });
      expect(again.statusCode).toBe(200);
      expect(again.json()).toEqual(first.json());
      expect(await countEntries(t.store, acct.companyId)).toBe(before);
      // The key is part of the entry, and covered by its hash.
      expect((await get(`/api/v1/logs/${first.json().log_id}`)).json().idempotency_key).toBe('pay-1');
    });

    it('an Idempotency-Key header reused for a different event → 422 and nothing appended', async () => {
      await ingest(t, key, { event_type: 'payment.sent', data: { amount: 10 } }, { 'idempotency-key': 'pay-2' });
      const before = await countEntries(t.store, acct.companyId);
      const body = problem(await ingest(t, key, { event_type: 'payment.sent', data: { amount: 99 } }, { 'idempotency-key': 'pay-2' }), 422, 'idempotency_key_reused');
      expect(body.errors).toEqual([{ field: '/body/idempotency_key', message: 'already used for a different event' }]);
      expect(await countEntries(t.store, acct.companyId)).toBe(before);
    });

    it('a body idempotency_key reused for a different event appends it anyway, marked with the original, counted; its repeat appends nothing', async () => {
      const original = (await ingestBatch(t, key, [{ event_type: 'tool.called', data: { n: 1 }, idempotency_key: 'sdk-1700000000000' }])).json();
      const before = await countEntries(t.store, acct.companyId);
      const metric = async () => Number(/^audit_ledger_idempotency_conflicts_total (\d+)/m.exec((await t.inject({ method: 'GET', url: '/api/v1/metrics' })).body)?.[1] ?? 0);
      const m0 = await metric();
      // Two different events in the same millisecond under one key (an SDK that derives keys from time only).
      const res = await ingestBatch(t, key, [
        { event_type: 'ok', data: {} },
        { event_type: 'tool.called', data: { n: 2 }, idempotency_key: 'sdk-1700000000000' },
        { event_type: 'tool.called', data: { n: 3 }, idempotency_key: 'sdk-1700000000000' },
      ]);
      expect(res.statusCode, res.body).toBe(200);
      const b = res.json();
      expect([b.ingested, b.appended]).toEqual([3, 3]);
      expect(b.idempotency_conflicts).toEqual([
        { index: 1, log_id: b.log_ids[1], idempotency_conflict_of: original.log_ids[0] },
        { index: 2, log_id: b.log_ids[2], idempotency_conflict_of: original.log_ids[0] },
      ]);
      expect(await countEntries(t.store, acct.companyId)).toBe(before + 3);
      expect(await metric()).toBe(m0 + 2);
      // The entry carries the key as sent (hashed) and the mark (not hashed: derivable from the keys).
      const entry = (await get(`/api/v1/logs/${b.log_ids[1]}`)).json();
      expect(entry).toMatchObject({ idempotency_key: 'sdk-1700000000000', idempotency_conflict: true, idempotency_conflict_of: original.log_ids[0], data: { n: 2 } });
      expect((await get(`/api/v1/logs/${original.log_ids[0]}`)).json()).toMatchObject({ idempotency_conflict: false, idempotency_conflict_of: null });
      expect((await get(`/api/v1/logs/${b.log_ids[1]}/verify`)).json()).toMatchObject({ chain_valid: true, signature_valid: true });
      // A retry of any of them (the original or a conflict) returns its log_id and appends nothing.
      const again = (await ingestBatch(t, key, [
        { event_type: 'tool.called', data: { n: 3 }, idempotency_key: 'sdk-1700000000000' },
        { event_type: 'tool.called', data: { n: 1 }, idempotency_key: 'sdk-1700000000000' },
      ])).json();
      expect([again.appended, again.log_ids]).toEqual([0, [b.log_ids[2], original.log_ids[0]]]);
      // The single-event route answers the same way for a body key.
      const single = await ingest(t, key, { event_type: 'tool.called', data: { n: 4 }, idempotency_key: 'sdk-1700000000000' });
      expect(single.json()).toMatchObject({ idempotency_conflict: true, idempotency_conflict_of: original.log_ids[0], ingested: 1 });
      expect(await countEntries(t.store, acct.companyId)).toBe(before + 4);
      expect(await assertChainIntact(t.store, acct.companyId)).toBe(before + 4);
    });

    it('batch items with used keys map to their original ids; repeats within a batch too', async () => {
      const first = (await ingestBatch(t, key, [{ event_type: 'a', data: {}, idempotency_key: 'b-1' }, { event_type: 'b', data: {}, idempotency_key: 'b-2' }])).json();
      const before = await countEntries(t.store, acct.companyId);
      const res = (await ingestBatch(t, key, [
        { event_type: 'b', data: {}, idempotency_key: 'b-2' },
        { event_type: 'c', data: {}, idempotency_key: 'b-3' },
        { event_type: 'c', data: {}, idempotency_key: 'b-3' },
        { event_type: 'a', data: {}, idempotency_key: 'b-1' },
      ])).json();
      expect(res.ingested).toBe(4);
      expect(res.appended).toBe(1);
      expect(res.log_ids[0]).toBe(first.log_ids[1]);
      expect(res.log_ids[3]).toBe(first.log_ids[0]);
      expect(res.log_ids[2]).toBe(res.log_ids[1]);
      expect(await countEntries(t.store, acct.companyId)).toBe(before + 1);
    });

    it('header and body keys must agree', async () => {
      problem(await ingest(t, key, { event_type: 'x', data: {}, idempotency_key: 'one' }, { 'idempotency-key': 'two' }), 400, 'validation_failed');
    });

    it('concurrent repeats of one key append it once', async () => {
      const before = await countEntries(t.store, acct.companyId);
      const results = await Promise.all(Array.from({ length: 10 }, () => ingest(t, key, { event_type: 'once', data: { n: 1 } }, { 'idempotency-key': 'race-1' })));
      expect(new Set(results.map((r) => r.json().log_id)).size).toBe(1);
      expect(await countEntries(t.store, acct.companyId)).toBe(before + 1);
    });
  });

  it('keeps one gap-free chain under 50 concurrent singles and concurrent batches', async () => {
    const other = await t.newAccount();
    const k = (await t.createKey(other.token, 1_000_000)).key;
    const singles = Array.from({ length: 50 }, (_, i) => ingest(t, k, { event_type: 'single', data: { i } }));
    const batches = Array.from({ length: 5 }, (_, b) => ingestBatch(t, k, Array.from({ length: 20 }, (_, i) => ({ event_type: 'batch', data: { b, i } }))));
    const results = await Promise.all([...singles, ...batches]);
    expect(results.every((r) => r.statusCode === 200)).toBe(true);
    expect(await assertChainIntact(t.store, other.companyId)).toBe(150);
    const seqs = results.slice(0, 50).map((r) => r.json().seq as number);
    expect(new Set(seqs).size).toBe(50);
    // Each batch got consecutive seqs.
    for (const r of results.slice(50)) {
      const ids = r.json().log_ids as string[];
      const entrySeqs = await Promise.all(ids.map(async (id) => (await t.inject({ method: 'GET', url: `/api/v1/logs/${id}`, headers: { 'x-api-key': k } })).json().seq));
      expect(entrySeqs).toEqual(entrySeqs.map((_, i) => entrySeqs[0] + i));
    }
  });

  it('lists with filters and cursor pagination, served by both credentials', async () => {
    const c = await t.newAccount();
    const k = (await t.createKey(c.token, 1_000_000)).key;
    const trace = '11111111-2222-4333-8444-555555555555';
    await ingestBatch(t, k, Array.from({ length: 25 }, (_, i) => ({ event_type: i % 2 ? 'odd' : 'even', data: { i }, trace_id: i < 20 ? trace : undefined, source: `src-${i % 3}`, agent_id: `agent-${i % 4}` })));
    const page = (url: string) => get(url, { authorization: `Bearer ${c.token}` });

    const all: number[] = [];
    let cursor: string | null = null;
    do {
      const res = await page(`/api/v1/logs?trace_id=${trace}&limit=7${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.statusCode).toBe(200);
      all.push(...res.json().items.map((e: { data: { i: number } }) => e.data.i));
      cursor = res.json().next_cursor;
    } while (cursor);
    expect(all).toEqual(Array.from({ length: 20 }, (_, i) => i));

    const odd = (await get(`/api/v1/logs?event_type=odd&source=src-1&order=desc`, { 'x-api-key': k })).json().items.map((e: { data: { i: number } }) => e.data.i);
    expect(odd).toEqual([19, 13, 7, 1]);
    const agent = (await get('/api/v1/logs?agent_id=agent-2&event_type=even', { 'x-api-key': k })).json().items.map((e: { data: { i: number } }) => e.data.i);
    expect(agent).toEqual([2, 6, 10, 14, 18, 22]);
    problem(await page('/api/v1/logs?agent_id='), 400, 'validation_failed');
    expect((await page('/api/v1/logs?from=2026-03-01T12:00:00Z&to=2026-03-01T12:00:00.001Z&limit=1000')).json().items).toHaveLength(25);
    expect((await page('/api/v1/logs?from=2026-03-01T13:00:00%2B01:00&limit=1000')).json().items).toHaveLength(25);
    expect((await page('/api/v1/logs?to=2026-03-01T12:00:00Z')).json().items).toHaveLength(0);

    problem(await page('/api/v1/logs?cursor=not-a-cursor'), 400, 'invalid_cursor');
    problem(await page('/api/v1/logs?limit=0'), 400, 'validation_failed');
    problem(await page('/api/v1/logs?limit=1001'), 400, 'validation_failed');
    problem(await page('/api/v1/logs?trace_id=abc'), 400, 'validation_failed');
    problem(await page('/api/v1/logs?from=yesterday'), 400, 'validation_failed');
    problem(await page('/api/v1/logs?order=sideways'), 400, 'validation_failed');
    problem(await page('/api/v1/logs?bogus=1'), 400, 'validation_failed');
  });

  it("never shows one company another's logs: read, verify and list answer 404 or nothing", async () => {
    const a = (await ingest(t, key, { event_type: 'secret', data: { s: 1 }, trace_id: TRACE })).json();
    const b = await t.newAccount();
    const bKey = (await t.createKey(b.token, 1000)).key;
    for (const headers of [{ 'x-api-key': bKey }, { authorization: `Bearer ${b.token}` }] as Array<Record<string, string>>) {
      problem(await get(`/api/v1/logs/${a.log_id}`, headers), 404, 'not_found');
      problem(await get(`/api/v1/logs/${a.log_id}/verify`, headers), 404, 'not_found');
      expect((await get(`/api/v1/logs?trace_id=${TRACE}`, headers)).json().items).toEqual([]);
    }
    problem(await get('/api/v1/logs/not-a-uuid'), 400, 'validation_failed');
    problem(await get('/api/v1/logs/00000000-0000-4000-8000-000000000000'), 404, 'not_found');
  });

  it('publishes the signing public keys without credentials', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/v1/integrity/keys' });
    expect(res.statusCode).toBe(200);
    const [k] = res.json().items;
    expect(k).toMatchObject({ algorithm: 'Ed25519', active: true, active_to: null, key_id: expect.stringMatching(/^[0-9a-f]{16}$/) });
    expect(Buffer.from(k.public_key, 'base64')).toHaveLength(32);
    expect(k.public_key_pem).toContain('BEGIN PUBLIC KEY');
  });
});
