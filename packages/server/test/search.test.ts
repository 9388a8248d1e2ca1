// Search inside events (GET /api/v1/logs/search), black-box on both stores: words in the content
// (any case, prefixes, all of them), conditions on JSON paths with their types, the list's
// filters and cursors, one company only, and erased content gone from the index before the
// erasure answers. Words are indexed after the commit: searches for words wait for what was
// appended (wait_for_seq past the head waits for the head).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS } from './helpers/env.js';
import { problem, startTestApp, type TestApp } from './helpers/app.js';
import { entriesIndexedFor, EVERYTHING } from './helpers/search.js';

describe.each(STORE_KINDS)('search inside events on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind, { env: { CHECKPOINT_INTERVAL_MS: '0' } });
  });
  afterAll(() => t.close());

  async function company() {
    const admin = await t.newAccount();
    const { key } = await t.createKey(admin.token, 100_000);
    const agent = { 'x-api-key': key };
    const trace = randomUUID();
    const logs = [
      { event_type: 'tool.called', trace_id: trace, data: { tool: 'crm', customer_id: 'c-42', amount: 250, note: 'Refund requested by Margaret', vip: true, address: { city: 'Lisbon' } } },
      { event_type: 'tool.called', data: { tool: 'crm', customer_id: 'c-7', amount: 90, note: 'Refund approved', vip: false, address: { city: 'Porto' } } },
      { event_type: 'decision.made', data: { decision_id: randomUUID(), customer_id: 'c-42', amount: '250', note: 'escalated to Margaret', vip: null } },
      { event_type: 'hitl.rejected', data: { reviewer: 'r@example.com', rejection_reason: 'duplicate refund for c-42' } },
    ];
    const r = await t.inject({ method: 'POST', url: '/api/v1/logs/batch', headers: agent, payload: { logs } });
    expect(r.statusCode, r.body).toBe(200);
    const ids = r.json().log_ids as string[];
    const search = async (query: Record<string, string | string[]>) => {
      const qs = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) for (const x of Array.isArray(v) ? v : [v]) qs.append(k, x);
      if (query.q !== undefined && query.wait_for_seq === undefined) qs.append('wait_for_seq', EVERYTHING);
      return t.inject({ method: 'GET', url: `/api/v1/logs/search?${qs}`, headers: agent });
    };
    const found = async (query: Record<string, string | string[]>) => {
      const res = await search(query);
      expect(res.statusCode, res.body).toBe(200);
      return (res.json().items as Array<{ log_id: string }>).map((e) => ids.indexOf(e.log_id));
    };
    return { admin, agent, ids, trace, search, found };
  }

  it('finds words in the content, in any case, all of them, and prefixes; newest first', async () => {
    const c = await company();
    expect(await c.found({ q: 'margaret' })).toEqual([2, 0]);
    expect(await c.found({ q: 'MARGARET refund' })).toEqual([0]);
    expect(await c.found({ q: 'refund*' })).toEqual([3, 1, 0]);
    expect(await c.found({ q: 'c-42' })).toEqual([3, 2, 0]);
    expect(await c.found({ q: 'lisbon' })).toEqual([0]);
    expect(await c.found({ q: 'nothing-like-this' })).toEqual([]);
    // With the list's filters.
    expect(await c.found({ q: 'c-42', event_type: 'tool.*' })).toEqual([0]);
    expect(await c.found({ q: 'refund', trace_id: c.trace })).toEqual([0]);
  });

  it('filters on JSON paths with their types: a number is not a string, nested keys, booleans and null', async () => {
    const c = await company();
    expect(await c.found({ where: 'data.customer_id = "c-42"' })).toEqual([2, 0]);
    expect(await c.found({ where: 'data.amount > 100' })).toEqual([0]);
    expect(await c.found({ where: 'data.amount >= 90' })).toEqual([1, 0]);
    expect(await c.found({ where: 'data.amount = "250"' })).toEqual([2]);
    expect(await c.found({ where: 'data.amount = 250' })).toEqual([0]);
    expect(await c.found({ where: 'data.address.city = "Porto"' })).toEqual([1]);
    expect(await c.found({ where: 'data.vip = true' })).toEqual([0]);
    expect(await c.found({ where: 'data.vip = null' })).toEqual([2]);
    expect(await c.found({ where: ['data.customer_id = "c-42"', 'data.amount < 1000'] })).toEqual([0]);
    expect(await c.found({ q: 'margaret', where: 'data.tool = "crm"' })).toEqual([0]);
    expect(await c.found({ where: 'data.customer_id != "c-42"' })).toEqual([1]);
  });

  it('finds a string value that JSON must escape (quotes, backslashes, control characters, non-ASCII), sent escaped or not', async () => {
    const c = await company();
    const odd = ['say "hi"', 'C:\\tmp\\x', 'tab\there', 'Zoë 🚀', '\u00e9t\u00e9', '</script>'];
    // Sent as raw JSON text with \u escapes where JSON allows them: stored canonical, found by the value.
    const raw = `{"logs":[${odd.map((v, i) => `{"event_type":"odd.value","data":{"v":${JSON.stringify(v).replace('é', '\\u00e9').replace('ë', '\\u00eb').replace('</', '<\\/')},"i":${i}}}`).join(',')}]}`;
    const r = await t.inject({ method: 'POST', url: '/api/v1/logs/batch', headers: { ...c.agent, 'content-type': 'application/json' }, payload: raw });
    expect(r.statusCode, r.body).toBe(200);
    for (const [i, v] of odd.entries()) {
      const res = await c.search({ where: `data.v = ${JSON.stringify(v)}` });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().items.map((e: { data: { i: number } }) => e.data.i), v).toEqual([i]);
    }
  });

  it('pages with cursors, and finds only its own company', async () => {
    const c = await company();
    const first = await c.search({ q: 'refund*', limit: '2' });
    expect(first.json().items).toHaveLength(2);
    const second = await c.search({ q: 'refund*', limit: '2', cursor: first.json().next_cursor });
    expect((second.json().items as Array<{ log_id: string }>).map((e) => c.ids.indexOf(e.log_id))).toEqual([0]);
    expect(second.json().next_cursor).toBeNull();
    const other = await company();
    // The other company has the same words; each finds its own only.
    const mine = (await c.search({ q: 'margaret' })).json().items.map((e: { company_id: string }) => e.company_id);
    expect(new Set(mine)).toEqual(new Set([c.admin.companyId]));
    expect((await other.search({ q: 'margaret' })).json().items.every((e: { company_id: string }) => e.company_id === other.admin.companyId)).toBe(true);
  });

  it('erased content is no longer found: it left the index in the erasure itself', async () => {
    const c = await company();
    const secret = `secretword${randomUUID().slice(0, 8)}`;
    const r = await t.inject({ method: 'POST', url: '/api/v1/logs', headers: c.agent, payload: { event_type: 'note', data: { subject_id: 'person-1', text: `call ${secret} tomorrow` } } });
    expect(await c.found({ q: secret })).toHaveLength(1);
    const erased = await t.inject({ method: 'POST', url: '/api/v1/compliance/erasures', headers: { authorization: `Bearer ${c.admin.token}` }, payload: { log_ids: [r.json().log_id], legal_basis: 'GDPR Art. 17' } });
    expect(erased.statusCode, erased.body).toBe(201);
    expect((await c.search({ q: secret })).json().items).toEqual([]);
    // Not in the index at all (SQLite: secure-delete removed the tokens), whatever the query.
    expect(await entriesIndexedFor(t.store, secret)).toBe(0);
  });

  it('refuses what it cannot search with a 400 naming the field', async () => {
    const c = await company();
    const bad: Array<[Record<string, string | string[]>, string]> = [
      [{}, '/querystring/q'],
      [{ where: 'amount > 100' }, '/querystring/where/0'],
      [{ where: 'data.amount > {}' }, '/querystring/where/0'],
      [{ where: 'data.amount > true' }, '/querystring/where/0'],
      [{ where: 'data.a-b = 1' }, '/querystring/where/0'],
      [{ where: 'data.amount ~ 1' }, '/querystring/where/0'],
      [{ q: 'a b c d e f g h i j k' }, '/querystring/q'],
      [{ q: 'x', where: ['data.a = 1', 'data.a = 1', 'data.a = 1', 'data.a = 1', 'data.a = 1', 'data.a = 1'] }, '/querystring/where'],
      [{ q: 'x', cursor: 'nope' }, ''],
      // What no stored text holds (PostgreSQL answered 500 for these): U+0000, a lone surrogate, a number out of range.
      [{ where: 'data.a = "\\u0000"' }, '/querystring/where/0'],
      [{ where: 'data.a = "\\ud800"' }, '/querystring/where/0'],
      [{ where: 'data.a > 1e400' }, '/querystring/where/0'],
    ];
    for (const [query, field] of bad) {
      const res = await c.search(query);
      const body = problem(res, 400, field === '' ? 'invalid_cursor' : 'validation_failed');
      if (field) expect(JSON.stringify(body.errors), JSON.stringify(query)).toContain(field);
    }
    // Syntax of the engines is only ever data: quotes, operators and parentheses find nothing and break nothing.
    for (const q of ['"', "'", 'NEAR(a b)', 'a OR b', '(x', ':*', '\\']) expect((await c.search({ q: `${q} margaret` })).statusCode).toBe(200);
  });
});
