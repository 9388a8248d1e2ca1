// Forensics over HTTP on both stores: every trace in test/fixtures/traces/ is ingested
// through the API (rejections through /hitl/reject, tampering in the database), and the
// timeline, causal graph, staleness and root cause are checked against its expectations.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS } from './helpers/env.js';
import { problem, startTestApp, type TestApp } from './helpers/app.js';
import { countEntries, ingestBatch } from './helpers/ledger.js';

interface Fixture {
  description: string;
  events: Array<Record<string, unknown> & { event_id: string }>;
  hitl_reject?: { reviewer: string; rejection_reason: string; decision_id: string };
  tamper?: { event: string; data: Record<string, unknown> };
  expect: {
    timeline?: string[];
    timeline_length?: number;
    invalid?: string[];
    edges?: Array<[string, string, string]>;
    edge_labels?: Array<[string, string, string]>;
    cycles?: string[][];
    dangling?: Array<[string, string, string]>;
    staleness: { overall: string; findings?: Array<[string, string, string]> };
    root_cause: { type: string; detected?: boolean; confidence: number; evidence: string[]; mentions?: string[]; candidates: string[] };
  };
}

const DIR = path.join(import.meta.dirname, 'fixtures', 'traces');
const FIXTURES = fs.readdirSync(DIR).filter((f) => f.endsWith('.json')).sort();

describe.each(STORE_KINDS)('forensics on %s', (kind) => {
  let t: TestApp;
  let key: string;
  let companyId: string;
  let companyName: string;
  beforeAll(async () => {
    t = await startTestApp(kind);
    const acct = await t.newAccount();
    companyId = acct.companyId;
    companyName = acct.companyName;
    key = (await t.createKey(acct.token, 1_000_000)).key;
  });
  afterAll(() => t.close());

  const get = (url: string, k = key) => t.inject({ method: 'GET', url, headers: { 'x-api-key': k } });
  const post = (url: string, payload: unknown, k = key) => t.inject({ method: 'POST', url, headers: { 'x-api-key': k }, payload: payload as object });

  /** Ingests a fixture under a fresh trace id; returns the trace id and event_id ⇄ log_id maps. */
  async function ingestFixture(f: Fixture) {
    const traceId = randomUUID();
    const res = await ingestBatch(t, key, f.events.map((e) => ({ ...e, trace_id: traceId })));
    expect(res.statusCode, res.body).toBe(200);
    const logIds: string[] = res.json().log_ids;
    const byName = new Map(f.events.map((e, i) => [e.event_id, logIds[i] as string]));
    if (f.hitl_reject) {
      const r = await post('/api/v1/hitl/reject', f.hitl_reject);
      expect(r.statusCode, r.body).toBe(201);
      expect(r.json().trace_id).toBe(traceId); // joined the decision's trace by decision_id
      byName.set('$rejection', r.json().log_id);
    }
    if (f.tamper) {
      await t.store.db
        .updateTable('log_entries')
        .set({ data: JSON.stringify(f.tamper.data) })
        .where('company_id', '=', companyId)
        .where('log_id', '=', byName.get(f.tamper.event) as string)
        .execute();
    }
    const byLogId = new Map([...byName].map(([n, id]) => [id, n]));
    const name = (id: string) => byLogId.get(id) ?? (id.startsWith('source:') ? id : `?${id}`);
    return { traceId, byName, name };
  }

  it('erased evidence is named, never read as a clean run: stale-market-feed with the stale read and the decision erased', async () => {
    const f = JSON.parse(fs.readFileSync(path.join(DIR, 'stale-market-feed.json'), 'utf8')) as Fixture;
    const { traceId, byName } = await ingestFixture(f);
    const rootCauseNow = async () => {
      const s = (await post('/api/v1/forensics/replays', { trace_id: traceId, metadata: {} })).json();
      return (await get(`/api/v1/forensics/replays/${s.id}/root-cause`)).json();
    };
    expect((await rootCauseNow()).root_cause_type).toBe('STALE_CONTEXT');
    const admin = await t.newAccount({ role: 'admin', company: companyName });
    const erasedIds = [byName.get('trade-2'), byName.get('trade-5')] as string[];
    const erasure = await t.inject({ method: 'POST', url: '/api/v1/compliance/erasures', headers: { authorization: `Bearer ${admin.token}` }, payload: { log_ids: erasedIds, legal_basis: 'GDPR Art. 17' } });
    expect(erasure.statusCode, erasure.body).toBe(201);
    const rc = await rootCauseNow();
    const finding = (rc.findings as Array<{ type: string; evidence: string[]; description: string }>).find((x) => x.type === 'ERASED');
    expect(finding?.evidence.sort()).toEqual([...erasedIds].sort());
    expect(rc.description).toMatch(/erased/);
    if (rc.root_cause_type === 'NONE') {
      expect(rc.description).toContain('a clean run cannot be claimed');
      expect(rc.confidence).toBeLessThanOrEqual(0.5);
    }
  });

  it("erasing a subject keeps the trace's causal skeleton: event ids, parents, inputs, derived_from, decision and source ids (format version 3)", async () => {
    const traceId = randomUUID();
    const events = [
      { event_type: 'context.retrieved', event_id: 'e1', data: { subject_id: 'ana@example.com', source_id: 'crm:customer', note: 'Ana, 34, gold tier' }, timestamp: '2026-11-25T10:00:00Z' },
      { event_type: 'memory.summarized', event_id: 'e2', parent_event_id: 'e1', data: { subject_id: 'ana@example.com', derived_from: [{ event_id: 'e1', excerpt: 'Ana' }] }, timestamp: '2026-11-25T10:00:01Z' },
      { event_type: 'decision.made', event_id: 'e3', parent_event_id: 'e2', data: { decision_id: 'd-1', inputs: ['e2', { source_id: 'crm:customer', why: 'Ana' }], decision: 'approve' }, timestamp: '2026-11-25T10:00:02Z' },
      { event_type: 'hitl.rejected', event_id: 'e4', data: { decision_id: 'd-1', reviewer: 'rev@example.com', rejection_reason: 'no' }, timestamp: '2026-11-25T10:00:03Z' },
    ];
    const res = await ingestBatch(t, key, events.map((e) => ({ ...e, trace_id: traceId })));
    expect(res.statusCode, res.body).toBe(200);
    const ids: string[] = res.json().log_ids;
    const name = (id: string) => `e${ids.indexOf(id) + 1}`;
    // The skeleton is in the entry itself: event_id and links, hashed (format version 3).
    const e2 = (await get(`/api/v1/logs/${ids[1]}`)).json();
    expect(e2).toMatchObject({ format_version: 3, event_id: 'e2', links: { derived_from: [{ event_id: 'e1' }] }, extra: null });
    expect((await get(`/api/v1/logs/${ids[2]}`)).json().links).toEqual({ decision_id: 'd-1', inputs: ['e2', { source_id: 'crm:customer' }] });
    expect((await get(`/api/v1/logs/${ids[0]}`)).json().links).toEqual({ source_id: 'crm:customer' });

    const replay = async () => {
      const s = (await post('/api/v1/forensics/replays', { trace_id: traceId, metadata: {} })).json();
      const g = (await get(`/api/v1/forensics/replays/${s.id}/causal-graph`)).json();
      const edges = (g.edges as Array<{ source: string; target: string; type: string }>).map((e) => `${e.source.startsWith('source:') ? e.source : name(e.source)} -${e.type}-> ${e.target.startsWith('source:') ? e.target : name(e.target)}`).sort();
      const timeline = (await get(`/api/v1/forensics/replays/${s.id}/timeline`)).json().items as Array<{ data: object; erased: boolean }>;
      return { edges, dangling: g.dangling as unknown[], timeline };
    };
    const before = await replay();
    expect(before.edges).toEqual([
      'e1 -reads-> source:crm:customer',
      'e2 -caused_by-> e1',
      'e3 -caused_by-> e2',
      'e3 -decided_on-> e2',
      'e3 -decided_on-> source:crm:customer',
      'e3 -reviewed_by-> e4',
      'e4 -caused_by-> e3',
    ]);
    expect(before.dangling).toEqual([]);

    const admin = await t.newAccount({ role: 'admin', company: companyName });
    const erasure = await t.inject({ method: 'POST', url: '/api/v1/compliance/erasures', headers: { authorization: `Bearer ${admin.token}` }, payload: { subject: 'ana@example.com', legal_basis: 'GDPR Art. 17' } });
    expect(erasure.statusCode, erasure.body).toBe(201);
    expect((erasure.json().log_ids as string[]).sort()).toEqual([ids[0], ids[1]].sort());
    const erased = (await get(`/api/v1/logs/${ids[1]}`)).json();
    expect(erased).toMatchObject({ erased: true, data: null, extra: null, event_id: 'e2', links: { derived_from: [{ event_id: 'e1' }] } });
    // Still valid: the skeleton is hashed, the content's commitment holds.
    const v = (await get(`/api/v1/logs/${ids[1]}/verify`)).json();
    expect(v).toMatchObject({ chain_valid: true, signature_valid: true, erased: true, problems: [] });

    const after = await replay();
    expect(after.edges).toEqual(before.edges);
    expect(after.dangling).toEqual([]);
    // What the content said is not shown: the timeline's data of an erased event is {}.
    expect(after.timeline.filter((i) => i.erased).map((i) => i.data)).toEqual([{}, {}]);
  });

  it.each(FIXTURES)('%s', async (file) => {
    const f = JSON.parse(fs.readFileSync(path.join(DIR, file), 'utf8')) as Fixture;
    const { traceId, name } = await ingestFixture(f);
    const sres = await post('/api/v1/forensics/replays', { trace_id: traceId, metadata: { fixture: file } });
    expect(sres.statusCode, sres.body).toBe(200);
    const session = sres.json();
    const n = f.events.length + (f.hitl_reject ? 1 : 0);
    expect(session).toMatchObject({ trace_id: traceId, company_id: companyId, event_count: n, token_id: null, metadata: { fixture: file } });
    const base = `/api/v1/forensics/replays/${session.id}`;

    // Timeline: event time, then seq; integrity per entry.
    const tl = (await get(`${base}/timeline`)).json();
    expect(tl.session_id).toBe(session.id);
    const order = (tl.items as Array<{ log_id: string; integrity: string; timestamp: string }>).map((i) => name(i.log_id));
    if (f.expect.timeline) expect(order).toEqual(f.expect.timeline);
    if (f.expect.timeline_length) expect(order).toHaveLength(f.expect.timeline_length);
    const times = (tl.items as Array<{ timestamp: string }>).map((i) => Date.parse(i.timestamp));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    const invalid = (tl.items as Array<{ log_id: string; integrity: string }>).filter((i) => i.integrity === 'invalid').map((i) => name(i.log_id));
    expect(invalid).toEqual(f.expect.invalid ?? []);

    // Causal graph.
    const g = (await get(`${base}/causal-graph`)).json();
    const sources = new Set(f.events.filter((e) => e.event_type === 'context.retrieved').map((e) => (e.data as { source_id: string }).source_id));
    expect(g.nodes).toHaveLength(n + sources.size);
    const edges = (g.edges as Array<{ source: string; target: string; type: string; label: string }>).map((e) => [name(e.source), name(e.target), e.type, e.label]);
    for (const [s, tg, type] of f.expect.edges ?? []) expect(edges.map((e) => e.slice(0, 3)), `${s} -${type}-> ${tg}`).toContainEqual([s, tg, type]);
    for (const [s, tg, label] of f.expect.edge_labels ?? []) expect(edges.filter((e) => e[2] === 'caused_by').map((e) => [e[0], e[1], e[3]])).toContainEqual([s, tg, label]);
    expect((g.cycles as string[][]).map((c) => c.map(name).sort())).toEqual((f.expect.cycles ?? []).map((c) => [...c].sort()));
    if (f.expect.dangling) expect((g.dangling as Array<{ log_id: string; field: string; reference: string }>).map((d) => [name(d.log_id), d.field, d.reference])).toEqual(f.expect.dangling);
    const mermaid = await get(`${base}/causal-graph?format=mermaid`);
    expect(mermaid.headers['content-type']).toMatch(/^text\/plain/);
    expect(mermaid.body.startsWith('flowchart TD\n')).toBe(true);
    expect(mermaid.body.match(/ -->\|/g)?.length ?? 0).toBe(g.edges.length);

    // Staleness.
    const st = (await get(`${base}/staleness`)).json();
    expect(st.overall_staleness_rating).toBe(f.expect.staleness.overall);
    if (f.expect.staleness.findings) {
      const found = (st.findings as Array<{ source_id: string; used_by_log_id: string; staleness: string }>).map((x) => [x.source_id, name(x.used_by_log_id), x.staleness]);
      expect(found).toEqual(f.expect.staleness.findings);
    }

    // Root cause: outcome first, the path as evidence.
    const rc = (await get(`${base}/root-cause`)).json();
    expect(rc.evidence_path.map((p: { log_id: string }) => p.log_id)).toEqual(rc.evidence);
    expect(rc.outcome.bad).toBe(rc.detected);
    const want = f.expect.root_cause;
    expect(rc.root_cause_type).toBe(want.type);
    expect(rc.detected).toBe(want.detected ?? true);
    expect(rc.confidence).toBe(want.confidence);
    expect((rc.evidence as string[]).map(name)).toEqual(want.evidence);
    for (const m of want.mentions ?? []) expect(`${rc.description} ${rc.remediation}`).toContain(m);
    expect((rc.candidates as Array<{ root_cause_type: string }>).map((c) => c.root_cause_type)).toEqual(want.candidates);
    const conf = (rc.candidates as Array<{ confidence: number }>).map((c) => c.confidence);
    expect(conf).toEqual([...conf].sort((a, b) => b - a));
    if (rc.root_cause_type !== 'INTEGRITY_FAILURE') for (const c of conf) expect(c).toBeLessThanOrEqual(rc.confidence);
    expect(rc.remediation.length).toBeGreaterThan(10);
  });

  it('a session keeps its answers when the trace grows; a new session sees the new events', async () => {
    const f = JSON.parse(fs.readFileSync(path.join(DIR, 'payment-blocked-by-policy.json'), 'utf8')) as Fixture;
    const { traceId } = await ingestFixture(f);
    const s1 = (await post('/api/v1/forensics/replays', { trace_id: traceId, token_id: 'run-42', metadata: {} })).json();
    const answers = async (id: string) =>
      Promise.all(['timeline', 'causal-graph', 'staleness', 'root-cause'].map(async (p) => (await get(`/api/v1/forensics/replays/${id}/${p}`)).body));
    const before = await answers(s1.id);
    // More events for the same trace, one of which would change the root cause.
    await ingestBatch(t, key, [
      { event_type: 'tool.failed', trace_id: traceId, data: { tool: 'bank-gateway', error: 'connection reset' } },
      { event_type: 'agent.step', trace_id: traceId, data: { step: 'give up' } },
    ]);
    expect(await answers(s1.id)).toEqual(before);
    expect((await get(`/api/v1/forensics/replays/${s1.id}`)).json()).toEqual(s1);
    const s2 = (await post('/api/v1/forensics/replays', { trace_id: traceId, metadata: {} })).json();
    expect(s2.event_count).toBe(s1.event_count + 2);
    expect(s2.tree_size).toBeGreaterThan(s1.tree_size);
    const rc2 = (await get(`/api/v1/forensics/replays/${s2.id}/root-cause`)).json();
    // The run now ends on a tool failure it never recovered from: that is the outcome and, on its own
    // path, the cause; the earlier denial reaches it only by event order, so it is a weaker candidate.
    expect(rc2.root_cause_type).toBe('TOOL_ERROR');
    expect(rc2.outcome.kind).toBe('failed');
    expect(rc2.candidates.map((c: { root_cause_type: string }) => c.root_cause_type)).toEqual(['POLICY_DENIAL']);
    // Listing: newest first, by trace, with a cursor.
    const list = (await get(`/api/v1/forensics/replays?trace_id=${traceId}&limit=1`)).json();
    expect(list.items.map((s: { id: string }) => s.id)).toEqual([s2.id]);
    const page2 = (await get(`/api/v1/forensics/replays?trace_id=${traceId}&limit=1&cursor=${list.next_cursor}`)).json();
    expect(page2.items.map((s: { id: string }) => s.id)).toEqual([s1.id]);
    // The anomaly is reported once per session.
    const row = await t.store.db.selectFrom('replay_sessions').select('anomaly_reported_at').where('session_id', '=', s2.id).executeTakeFirstOrThrow();
    expect(row.anomaly_reported_at).not.toBeNull();
  });

  it("another company's sessions and rejections are not found", async () => {
    const f = JSON.parse(fs.readFileSync(path.join(DIR, 'tool-timeout-retry.json'), 'utf8')) as Fixture;
    const { traceId } = await ingestFixture(f);
    const s = (await post('/api/v1/forensics/replays', { trace_id: traceId, metadata: {} })).json();
    const other = await t.newAccount();
    const otherKey = (await t.createKey(other.token, 1000)).key;
    for (const p of ['', '/timeline', '/causal-graph', '/causal-graph?format=mermaid', '/staleness', '/root-cause']) {
      problem(await get(`/api/v1/forensics/replays/${s.id}${p}`, otherKey), 404, 'not_found');
    }
    // The other company cannot replay this trace, and does not see its sessions or rejections.
    problem(await post('/api/v1/forensics/replays', { trace_id: traceId, metadata: {} }, otherKey), 404, 'not_found');
    expect((await get(`/api/v1/forensics/replays?trace_id=${traceId}`, otherKey)).json().items).toEqual([]);
    await post('/api/v1/hitl/reject', { reviewer: 'r', rejection_reason: 'no', trace_id: traceId });
    expect((await get(`/api/v1/hitl/overrides?trace_id=${traceId}`, otherKey)).json().items).toEqual([]);
    expect((await get(`/api/v1/hitl/overrides?trace_id=${traceId}`)).json().items).toHaveLength(1);
    // A user's bearer token works the same as the key.
    const res = await t.inject({ method: 'GET', url: `/api/v1/forensics/replays/${s.id}`, headers: { authorization: `Bearer ${other.token}` } });
    problem(res, 404, 'not_found');
  });

  it('refuses every malformed replay request with a clear 400, and an unknown trace with 404', async () => {
    const bad: Array<[unknown, string]> = [
      [{}, '/body/trace_id'],
      [{ trace_id: 'nope', metadata: {} }, '/body/trace_id'],
      [{ trace_id: randomUUID() }, '/body/metadata'],
      [{ trace_id: randomUUID(), metadata: [] }, '/body/metadata'],
      [{ trace_id: randomUUID(), metadata: 'x' }, '/body/metadata'],
      [{ trace_id: randomUUID(), metadata: {}, token_id: '' }, '/body/token_id'],
      [{ trace_id: randomUUID(), metadata: {}, token_id: 7 }, '/body/token_id'],
      [{ trace_id: randomUUID(), metadata: {}, extra: 1 }, '/body/extra'],
    ];
    for (const [body, field] of bad) {
      const p = problem(await post('/api/v1/forensics/replays', body), 400, 'validation_failed');
      expect((p.errors as Array<{ field: string }>).map((e) => e.field), JSON.stringify(body)).toContain(field);
    }
    const sessionsBefore = await t.store.db.selectFrom('replay_sessions').select('session_id').execute();
    problem(await post('/api/v1/forensics/replays', { trace_id: randomUUID(), metadata: {} }), 404, 'not_found');
    expect(await t.store.db.selectFrom('replay_sessions').select('session_id').execute()).toHaveLength(sessionsBefore.length);
    problem(await get('/api/v1/forensics/replays/not-a-uuid/root-cause'), 400, 'validation_failed');
    problem(await get(`/api/v1/forensics/replays/${randomUUID()}/timeline`), 404, 'not_found');
    problem(await get(`/api/v1/forensics/replays/${randomUUID()}/causal-graph?format=svg`), 400, 'validation_failed');
    problem(await get('/api/v1/forensics/replays?cursor=garbage'), 400, 'invalid_cursor');
    problem(await get('/api/v1/forensics/replays?limit=0'), 400, 'validation_failed');
    problem(await t.inject({ method: 'POST', url: '/api/v1/forensics/replays', payload: { trace_id: randomUUID(), metadata: {} } }), 401, 'missing_credential');
  });

  it('records a rejection as a verifiable hitl.rejected entry and lists it', async () => {
    const decisionId = randomUUID();
    const traceId = randomUUID();
    const res = await post('/api/v1/hitl/reject', { reviewer: 'alex@example.com', rejection_reason: 'Wrong customer', decision_id: decisionId, trace_id: traceId });
    expect(res.statusCode).toBe(201);
    const r = res.json();
    expect(r).toMatchObject({ reviewer: 'alex@example.com', rejection_reason: 'Wrong customer', decision_id: decisionId, trace_id: traceId, submitted_by: { kind: 'api_key' } });
    expect(r.id).not.toBe(r.log_id);
    const entry = (await get(`/api/v1/logs/${r.log_id}`)).json();
    expect(entry).toMatchObject({ event_type: 'hitl.rejected', trace_id: traceId, source: 'audit-ledger/hitl', data: { rejection_id: r.id, reviewer: 'alex@example.com', decision_id: decisionId } });
    expect((await get(`/api/v1/logs/${r.log_id}/verify`)).json()).toMatchObject({ chain_valid: true, signature_valid: true });
    // Without a trace and with no matching decision: recorded with trace_id null.
    const lone = (await post('/api/v1/hitl/reject', { reviewer: 'b', rejection_reason: 'c' })).json();
    expect(lone).toMatchObject({ decision_id: null, trace_id: null });
    // A user can submit too.
    const acct = await t.newAccount();
    const userKey = (await t.createKey(acct.token, 1000)).key;
    const byUser = await t.inject({ method: 'POST', url: '/api/v1/hitl/reject', headers: { authorization: `Bearer ${acct.token}` }, payload: { reviewer: 'u', rejection_reason: 'v' } });
    expect(byUser.statusCode).toBe(201);
    expect(byUser.json().submitted_by.kind).toBe('user');

    expect((await get(`/api/v1/hitl/overrides?decision_id=${decisionId}`)).json().items.map((o: { id: string }) => o.id)).toEqual([r.id]);
    expect((await get(`/api/v1/hitl/overrides?trace_id=${traceId}`)).json().items.map((o: { id: string }) => o.id)).toEqual([r.id]);
    const p1 = (await get('/api/v1/hitl/overrides?limit=1')).json();
    const p2 = (await get(`/api/v1/hitl/overrides?limit=1&cursor=${p1.next_cursor}`)).json();
    expect(p1.items[0].id).toBe(lone.id); // newest first
    expect(p2.items[0].id).not.toBe(lone.id);
    expect((await get('/api/v1/hitl/overrides', userKey)).json().items.map((o: { id: string }) => o.id)).toEqual([byUser.json().id]);
  });

  it('an override cannot be forged through POST /logs: the audit-ledger/ source is reserved', async () => {
    const before = await countEntries(t.store, companyId);
    const forged = { event_type: 'hitl.rejected', source: 'audit-ledger/hitl', data: { rejection_id: randomUUID(), reviewer: 'x', rejection_reason: 'y' } };
    const one = problem(await post('/api/v1/logs', forged), 400, 'validation_failed');
    expect((one.errors as Array<{ field: string }>).map((e) => e.field)).toEqual(['/body/source']);
    const batch = problem(await post('/api/v1/logs/batch', { logs: [{ event_type: 'ok', data: {} }, forged] }), 400, 'validation_failed');
    expect((batch.errors as Array<{ field: string }>).map((e) => e.field)).toEqual(['/body/logs/1/source']);
    expect(await countEntries(t.store, companyId)).toBe(before);
    // Other sources, and hitl.rejected events an agent records itself, are fine; they are not overrides.
    expect((await post('/api/v1/logs', { ...forged, source: 'review-ui' })).statusCode).toBe(200);
    const overrides = (await get('/api/v1/hitl/overrides?limit=1000')).json().items as Array<{ reviewer: string }>;
    expect(overrides.some((o) => o.reviewer === 'x')).toBe(false);
  });

  it('refuses every malformed rejection with a clear 400 and appends nothing', async () => {
    const before = await countEntries(t.store, companyId);
    const bad: Array<[unknown, string]> = [
      [{ rejection_reason: 'x' }, '/body/reviewer'],
      [{ reviewer: 'a' }, '/body/rejection_reason'],
      [{ reviewer: '', rejection_reason: 'x' }, '/body/reviewer'],
      [{ reviewer: '   ', rejection_reason: 'x' }, '/body/reviewer'],
      [{ reviewer: 'a'.repeat(201), rejection_reason: 'x' }, '/body/reviewer'],
      [{ reviewer: 'a', rejection_reason: 'x'.repeat(4001) }, '/body/rejection_reason'],
      [{ reviewer: 'a', rejection_reason: '\n\t' }, '/body/rejection_reason'],
      [{ reviewer: 'a', rejection_reason: 'x', decision_id: 'D-1' }, '/body/decision_id'],
      [{ reviewer: 'a', rejection_reason: 'x', trace_id: 12 }, '/body/trace_id'],
      [{ reviewer: 'a', rejection_reason: 'x', approve: true }, '/body/approve'],
      [{ reviewer: 7, rejection_reason: 'x' }, '/body/reviewer'],
    ];
    for (const [body, field] of bad) {
      const p = problem(await post('/api/v1/hitl/reject', body), 400, 'validation_failed');
      expect((p.errors as Array<{ field: string }>).map((e) => e.field), JSON.stringify(body)).toContain(field);
    }
    problem(await t.inject({ method: 'POST', url: '/api/v1/hitl/reject', headers: { 'x-api-key': key, 'content-type': 'application/json' }, payload: '{"reviewer":' }), 400, 'malformed_json');
    problem(await get('/api/v1/hitl/overrides?decision_id=nope'), 400, 'validation_failed');
    problem(await get('/api/v1/hitl/overrides?cursor=nope'), 400, 'invalid_cursor');
    problem(await t.inject({ method: 'POST', url: '/api/v1/hitl/reject', payload: { reviewer: 'a', rejection_reason: 'b' } }), 401, 'missing_credential');
    expect(await countEntries(t.store, companyId)).toBe(before);
    // The longest accepted values go through.
    expect((await post('/api/v1/hitl/reject', { reviewer: 'a'.repeat(200), rejection_reason: 'x'.repeat(4000) })).statusCode).toBe(201);
  });
});
