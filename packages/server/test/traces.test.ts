// GET /api/v1/traces on both stores: one row per trace, most recently active first, with event
// count, agents, times and whether a replay found an anomaly; cursor pagination; never another
// company's traces; bad paging input refused.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { problem, startTestApp, type TestApp } from './helpers/app.js';
import { STORE_KINDS } from './helpers/env.js';
import { ingestBatch } from './helpers/ledger.js';

describe.each(STORE_KINDS)('trace summaries on %s', (kind) => {
  let t: TestApp;
  let key: string;
  const [clean, failed, other] = [randomUUID(), randomUUID(), randomUUID()];
  beforeAll(async () => {
    t = await startTestApp(kind);
    const acct = await t.newAccount();
    key = (await t.createKey(acct.token, 1_000_000)).key;
    const ev = (trace: string, event_type: string, agent: string | null, data: object = {}) => ({ event_type, trace_id: trace, ...(agent ? { agent_id: agent } : {}), data });
    expect((await ingestBatch(t, key, [ev(clean, 'agent.invoked', 'planner'), ev(clean, 'tool.called', 'executor', { tool: 'search' }), ev(clean, 'agent.completed', 'planner', { status: 'succeeded' })])).statusCode).toBe(200);
    t.clock.advance(1000);
    expect((await ingestBatch(t, key, [ev(failed, 'tool.failed', 'executor', { tool: 'crm', error: 'timeout' }), ev(failed, 'agent.failed', null, { error: 'gave up' })])).statusCode).toBe(200);
    t.clock.advance(1000);
    expect((await ingestBatch(t, key, [ev(other, 'tool.called', null, { tool: 'x' }), { event_type: 'no.trace', data: {} }])).statusCode).toBe(200);
    // Another company's trace never shows.
    const b = await t.newAccount();
    await ingestBatch(t, (await t.createKey(b.token)).key, [ev(randomUUID(), 'tool.called', 'theirs')]);
  });
  afterAll(() => t.close());

  const get = (url: string) => t.inject({ method: 'GET', url, headers: { 'x-api-key': key } });

  it('lists each trace once, most recently active first, with counts, agents and times', async () => {
    const res = await get('/api/v1/traces');
    expect(res.statusCode, res.body).toBe(200);
    const { items, next_cursor } = res.json();
    expect(next_cursor).toBeNull();
    expect(items).toEqual([
      { trace_id: other, first_at: '2026-03-01T12:00:02.000Z', last_at: '2026-03-01T12:00:02.000Z', event_count: 1, agents: [], anomaly_detected: null, anomaly_type: null },
      { trace_id: failed, first_at: '2026-03-01T12:00:01.000Z', last_at: '2026-03-01T12:00:01.000Z', event_count: 2, agents: ['executor'], anomaly_detected: null, anomaly_type: null },
      { trace_id: clean, first_at: '2026-03-01T12:00:00.000Z', last_at: '2026-03-01T12:00:00.000Z', event_count: 3, agents: ['executor', 'planner'], anomaly_detected: null, anomaly_type: null },
    ]);
  });

  it('says whether a replay found an anomaly', async () => {
    for (const trace of [clean, failed]) {
      const s = await t.inject({ method: 'POST', url: '/api/v1/forensics/replays', headers: { 'x-api-key': key }, payload: { trace_id: trace, metadata: {} } });
      expect((await get(`/api/v1/forensics/replays/${s.json().id}/root-cause`)).statusCode).toBe(200);
    }
    const byId = new Map(((await get('/api/v1/traces')).json().items as Array<{ trace_id: string; anomaly_detected: boolean | null; anomaly_type: string | null }>).map((i) => [i.trace_id, [i.anomaly_detected, i.anomaly_type]]));
    expect([byId.get(clean), byId.get(failed)?.[0], byId.get(other)]).toEqual([[false, null], true, [null, null]]);
    expect(byId.get(failed)?.[1]).toMatch(/^[A-Z_]+$/);
  });

  it('pages with a cursor, without repeating or skipping a trace, and refuses bad paging input', async () => {
    const first = (await get('/api/v1/traces?limit=2')).json();
    expect(first.items).toHaveLength(2);
    const second = (await get(`/api/v1/traces?limit=2&cursor=${encodeURIComponent(first.next_cursor)}`)).json();
    expect([...first.items, ...second.items].map((i: { trace_id: string }) => i.trace_id)).toEqual([other, failed, clean]);
    expect(second.next_cursor).toBeNull();
    problem(await get('/api/v1/traces?cursor=not-a-cursor'), 400, 'invalid_cursor');
    problem(await get('/api/v1/traces?limit=0'), 400, 'validation_failed');
    problem(await get('/api/v1/traces?limit=501'), 400, 'validation_failed');
    problem(await t.inject({ method: 'GET', url: '/api/v1/traces' }), 401, 'missing_credential');
  });
});
