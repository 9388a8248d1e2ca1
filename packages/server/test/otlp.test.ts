// OpenTelemetry ingestion, with the real OpenTelemetry JS SDK and its OTLP/HTTP exporters (JSON
// and protobuf) pointed at the service over real HTTP, on both stores: a fixture agent run with a
// stale read, a tool error and its retry, a decision, an action and a policy log record arrives
// as ledger entries in our vocabulary, and the forensics answer on it. Then everything a client
// can send wrong: refused with a problem and nothing stored, or (one bad item) an OTLP partial
// success that stores the rest.
import { createHash, randomUUID } from 'node:crypto';
import { canonicalJson, type JsonObject } from '@audit-ledger/core';
import { context, ROOT_CONTEXT, SpanStatusCode, trace, type Span as ApiSpan } from '@opentelemetry/api';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { problem, startTestApp, type TestApp } from './helpers/app.js';
import { STORE_KINDS } from './helpers/env.js';
import { countEntries } from './helpers/ledger.js';
import { lenField, readPartialSuccess } from './helpers/otlp-wire.js';

const uuidOf = (hex: string) => `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;

describe.each(STORE_KINDS)('OTLP ingestion on %s', (kind) => {
  let t: TestApp;
  let key: string;
  let token: string;
  let base: string;
  beforeAll(async () => {
    t = await startTestApp(kind);
    const acct = await t.newAccount();
    token = acct.token;
    key = (await t.createKey(acct.token, 1_000_000)).key;
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const addr = t.app.server.address();
    if (addr === null || typeof addr === 'string') throw new Error('no port');
    base = `http://127.0.0.1:${addr.port}/api/v1/otlp`;
  });
  afterAll(() => t.close());

  it('caps an entry\'s size on every path: one 300 KB resource attribute over 600 spans is refused span by span, naming MAX_ENTRY_BYTES, and stores nothing', async () => {
    const acct = await t.newAccount();
    const k = (await t.createKey(acct.token, 1_000_000)).key;
    const post = (url: string, body: unknown, type = 'application/json') => t.inject({ method: 'POST', url, headers: { 'x-api-key': k, 'content-type': type }, payload: JSON.stringify(body) });
    const big = 'x'.repeat(300 * 1024);
    const traceId = randomUUID().replace(/-/g, '');
    const spans = Array.from({ length: 600 }, (_, i) => ({ traceId, spanId: (i + 1).toString(16).padStart(16, '0'), name: `s${i}`, startTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(i)), endTimeUnixNano: String(1_700_000_000_000_000_001n + BigInt(i)) }));
    const body = { resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'agent' } }, { key: 'huge', value: { stringValue: big } }] }, scopeSpans: [{ spans }] }] };
    const res = await post('/api/v1/otlp/v1/traces', body);
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    expect(res.json().partialSuccess.rejectedSpans).toBe('600');
    expect(res.json().partialSuccess.errorMessage).toContain('its resource and scope are');
    expect(res.json().partialSuccess.errorMessage).toContain('MAX_ENTRY_BYTES allows 262144');
    expect(await countEntries(t.store, acct.companyId)).toBe(0);
    // The same cap on /logs and /logs/batch: the item named, nothing stored.
    const one = problem(await post('/api/v1/logs', { event_type: 'big', data: { big } }), 400, 'validation_failed');
    expect(JSON.stringify(one.errors)).toContain('MAX_ENTRY_BYTES allows 262144');
    const batch = problem(await post('/api/v1/logs/batch', { logs: [{ event_type: 'ok', data: {} }, { event_type: 'big', data: {}, note: big }] }), 400, 'validation_failed');
    expect(batch.errors).toEqual([{ field: '/body/logs/1', message: expect.stringContaining('MAX_ENTRY_BYTES allows 262144') }]);
    expect(await countEntries(t.store, acct.companyId)).toBe(0);
  });

  it('stores a resource and scope once, referenced by hash: 600 spans under a 100 KB resource add one copy of it, and a repeat adds none', async () => {
    const acct = await t.newAccount();
    const k = (await t.createKey(acct.token, 1_000_000)).key;
    const post = (body: unknown) => t.inject({ method: 'POST', url: '/api/v1/otlp/v1/traces', headers: { 'x-api-key': k, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
    const big = 'r'.repeat(100 * 1024);
    const request = (from: number, n: number) => {
      const traceId = randomUUID().replace(/-/g, '');
      const spans = Array.from({ length: n }, (_, i) => ({ traceId, spanId: (from + i + 1).toString(16).padStart(16, '0'), name: `s${from + i}`, startTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(i)), endTimeUnixNano: String(1_700_000_000_000_000_001n + BigInt(i)) }));
      return { resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'agent' } }, { key: 'big', value: { stringValue: big } }] }, scopeSpans: [{ scope: { name: 'lib', version: '1' }, spans }] }] };
    };
    const first = request(0, 600);
    const res = await post(first);
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    expect(res.json()).toEqual({});
    const stored = async () => t.store.db.selectFrom('log_entries').select(['event_type', 'data', 'idempotency_key']).where('company_id', '=', acct.companyId).execute();
    let rows = await stored();
    expect(rows).toHaveLength(601);
    const resources = rows.filter((r) => r.event_type === 'otel.resource');
    expect(resources).toHaveLength(1);
    const ref = createHash('sha256').update(resources[0]?.data as string).digest('hex');
    expect(resources[0]?.idempotency_key).toBe(`otlp:resource:${ref}`);
    expect(JSON.parse(resources[0]?.data as string)).toEqual({ resource: { 'service.name': 'agent', big }, scope: { name: 'lib', version: '1', attributes: {} } });
    // Every span names it, and none carries a copy: the content stored is one resource plus 600 small spans.
    for (const r of rows.filter((x) => x.event_type !== 'otel.resource')) {
      expect((JSON.parse(r.data as string) as { otel: { resource_ref: string } }).otel.resource_ref).toBe(ref);
      expect((r.data as string).length).toBeLessThan(1024);
    }
    expect(rows.reduce((n, r) => n + (r.data as string).length, 0)).toBeLessThan(big.length + 600 * 1024);
    // The exporter's retry appends nothing; new spans under the same resource add no copy of it.
    expect((await post(first)).statusCode).toBe(200);
    expect((await post(request(600, 10))).statusCode).toBe(200);
    rows = await stored();
    expect(rows).toHaveLength(611);
    expect(rows.filter((r) => r.event_type === 'otel.resource')).toHaveLength(1);
  });

  const get = (url: string) => t.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
  const entriesOf = async (traceId: string) => {
    const res = await get(`/api/v1/logs?trace_id=${traceId}&limit=1000`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().items as Array<Record<string, unknown> & { data: Record<string, unknown>; event_type: string; log_id: string }>;
  };

  /**
   * The fixture run, with explicit times: an equities agent reads a market feed that is ten
   * minutes old (max age 30 s), calls a model, calls crm_search (times out), retries it (works),
   * decides to buy on the stale feed, places the order, logs a policy check, and completes.
   */
  async function exportFixtureRun(encoding: 'json' | 'protobuf', auth: 'x-api-key' | 'bearer') {
    const headers: Record<string, string> = auth === 'x-api-key' ? { 'x-api-key': key } : { authorization: `Bearer ${key}` };
    const spanExporter = encoding === 'json' ? new JsonTraceExporter({ url: `${base}/v1/traces`, headers }) : new ProtoTraceExporter({ url: `${base}/v1/traces`, headers });
    const logExporter = encoding === 'json' ? new JsonLogExporter({ url: `${base}/v1/logs`, headers }) : new ProtoLogExporter({ url: `${base}/v1/logs`, headers });
    const resource = resourceFromAttributes({ 'service.name': 'equities-trader', 'deployment.environment.name': 'test' });
    const provider = new TracerProvider({ resource, spanProcessors: [new BatchSpanProcessor({ exporter: spanExporter })] });
    const loggers = new LoggerProvider({ resource, processors: [new BatchLogRecordProcessor({ exporter: logExporter })] });
    const tracer = provider.getTracer('agent-runtime', '1.4.0');
    const logger = loggers.getLogger('agent-runtime');

    const t0 = Date.now() - 60_000;
    const at = (s: number) => t0 + s * 1000;
    const decisionId = randomUUID();
    const root = tracer.startSpan('invoke_agent equities-trader', { startTime: at(0), attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'equities-trader' } });
    const inRoot = trace.setSpan(ROOT_CONTEXT, root);
    const child = (name: string, attributes: Record<string, string | number | string[]>, from: number, to: number, fail?: string): ApiSpan => {
      const s = tracer.startSpan(name, { startTime: at(from), attributes }, inRoot);
      if (fail) {
        s.recordException({ name: 'TimeoutError', message: fail }, at(to));
        s.setStatus({ code: SpanStatusCode.ERROR, message: fail });
      }
      s.end(at(to));
      return s;
    };
    const read = child(
      'retrieval feed:NASDAQ:ACME',
      {
        'gen_ai.operation.name': 'retrieval',
        'gen_ai.data_source.id': 'feed:NASDAQ:ACME',
        'audit_ledger.data.source_type': 'market_feed',
        'audit_ledger.data.as_of': new Date(at(1) - 10 * 60_000).toISOString(),
        'audit_ledger.data.max_age_seconds': 30,
      },
      1,
      1.2,
    );
    child('chat gpt-4.1', { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4.1', 'gen_ai.usage.input_tokens': 1840, 'gen_ai.usage.output_tokens': 212 }, 2, 3);
    const failed = child('execute_tool crm_search', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'crm_search' }, 3, 4, 'timeout after 10000 ms');
    child('execute_tool crm_search', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'crm_search', 'audit_ledger.causality_type': 'retry' }, 4, 5);
    const decision = child('decide order', { 'audit_ledger.event_type': 'decision.made', 'audit_ledger.data.decision_id': decisionId, 'audit_ledger.data.decision': 'buy', 'audit_ledger.data.inputs': [read.spanContext().spanId] }, 6, 6.1);
    logger.emit({
      eventName: 'policy.evaluated',
      timestamp: at(6.5),
      context: trace.setSpan(context.active(), decision),
      attributes: { 'audit_ledger.data.policy_id': 'order-limit', 'audit_ledger.data.result': 'allow', 'audit_ledger.data.reason': 'within limit' },
      body: 'order-limit allows 100 ACME',
    });
    child('execute_tool place_order', { 'audit_ledger.event_type': 'action.executed', 'gen_ai.tool.name': 'broker-api', 'audit_ledger.data.action': 'place_order' }, 7, 8);
    root.end(at(9));
    await provider.forceFlush();
    await loggers.forceFlush();
    await provider.shutdown();
    await loggers.shutdown();
    const traceHex = root.spanContext().traceId;
    return { traceId: uuidOf(traceHex), root, read, failed, decision, decisionId, at };
  }

  it.each([
    ['json', 'x-api-key'],
    ['protobuf', 'bearer'],
  ] as const)('the real OTel exporters (http/%s, %s) deliver an agent run; it maps to the vocabulary and the forensics answer on it', async (encoding, auth) => {
    const run = await exportFixtureRun(encoding, auth);
    const entries = await entriesOf(run.traceId);
    const types = entries.map((e) => e.event_type);
    expect(types.sort()).toEqual(['action.executed', 'agent.completed', 'context.retrieved', 'decision.made', 'llm.call', 'policy.evaluated', 'tool.called', 'tool.failed'].sort());
    const byType = (type: string) => entries.find((e) => e.event_type === type) as (typeof entries)[number];

    // The envelope: OTel ids as they are, the service as the source, the agent.
    for (const e of entries) {
      expect(e.trace_id).toBe(run.traceId);
      expect(e.source).toBe('equities-trader');
    }
    const root = byType('agent.completed');
    expect(root).toMatchObject({ span_id: run.root.spanContext().spanId, parent_span_id: null, agent_id: 'equities-trader', timestamp: new Date(run.at(9)).toISOString() });
    expect(root.data).toMatchObject({ status: 'succeeded', agent: 'equities-trader', otel: { signal: 'span', name: 'invoke_agent equities-trader', kind: 'INTERNAL', status: { code: 'UNSET' }, resource_ref: expect.stringMatching(/^[0-9a-f]{64}$/) } });
    // The resource and scope, stored once and named by their hash.
    const ref = (root.data.otel as { resource_ref: string }).resource_ref;
    const stored = (await get(`/api/v1/logs?event_type=otel.resource&limit=100`)).json().items as Array<{ data: Record<string, unknown>; idempotency_key: string }>;
    const resource = stored.find((r) => r.idempotency_key === `otlp:resource:${ref}`);
    expect(resource?.data).toMatchObject({ resource: { 'service.name': 'equities-trader' }, scope: { name: 'agent-runtime', version: '1.4.0' } });
    expect(createHash('sha256').update(canonicalJson(resource?.data as JsonObject)).digest('hex')).toBe(ref);
    const failed = byType('tool.failed');
    expect(failed).toMatchObject({ span_id: run.failed.spanContext().spanId, parent_span_id: run.root.spanContext().spanId, event_id: run.failed.spanContext().spanId });
    expect(failed.data).toMatchObject({ tool: 'crm_search', error: 'timeout after 10000 ms', operation: 'execute_tool', otel: { status: { code: 'ERROR', message: 'timeout after 10000 ms' } } });
    expect((failed.data.otel as { events: Array<{ name: string }> }).events.map((e) => e.name)).toEqual(['exception']);
    expect(byType('llm.call').data).toMatchObject({ model: 'gpt-4.1', prompt_tokens: 1840, completion_tokens: 212 });
    expect(byType('context.retrieved').data).toMatchObject({ source_id: 'feed:NASDAQ:ACME', source_type: 'market_feed', max_age_seconds: 30 });
    expect(byType('decision.made').data).toMatchObject({ decision_id: run.decisionId, decision: 'buy' });
    const policy = byType('policy.evaluated');
    expect(policy).toMatchObject({ span_id: null, parent_span_id: run.decision.spanContext().spanId, timestamp: new Date(run.at(6.5)).toISOString() });
    expect(policy.data).toMatchObject({ policy_id: 'order-limit', result: 'allow', otel: { signal: 'log', event_name: 'policy.evaluated', body: 'order-limit allows 100 ACME' } });
    // The batch processor sends the run in one request; its spans are appended in order of end time: the root last.
    const bySeq = [...entries].filter((e) => e.event_type !== 'policy.evaluated').sort((a, b) => (a.seq as number) - (b.seq as number));
    expect(bySeq.at(-1)?.event_type).toBe('agent.completed');
    // Every entry verifies like any other.
    for (const e of entries) expect((await get(`/api/v1/logs/${e.log_id}/verify`)).json()).toMatchObject({ chain_valid: true, signature_valid: true, problems: [] });

    // The forensics on the OTel-sourced trace.
    const session = await t.inject({ method: 'POST', url: '/api/v1/forensics/replays', headers: { 'x-api-key': key }, payload: { trace_id: run.traceId, metadata: {} } });
    expect(session.statusCode, session.body).toBe(200);
    const replay = `/api/v1/forensics/replays/${session.json().id}`;
    const name = (id: string) => entries.find((e) => e.log_id === id)?.event_type ?? id;
    const timeline = (await get(`${replay}/timeline`)).json();
    expect(timeline.items.map((i: { log_id: string }) => name(i.log_id))).toEqual(['context.retrieved', 'llm.call', 'tool.failed', 'tool.called', 'decision.made', 'policy.evaluated', 'action.executed', 'agent.completed']);
    const graph = (await get(`${replay}/causal-graph`)).json();
    const edges = (graph.edges as Array<{ source: string; target: string; type: string }>).map((e) => [name(e.source), name(e.target), e.type]);
    expect(edges).toContainEqual(['decision.made', 'context.retrieved', 'decided_on']); // inputs named the read by its span id
    // OTel's direction: the parent span's result is caused by its children, never a child by its parent.
    expect(edges).toContainEqual(['agent.completed', 'tool.failed', 'caused_by']);
    expect(edges).not.toContainEqual(['tool.failed', 'agent.completed', 'caused_by']);
    // A span is caused by the sibling that ended before it started: the retry by the failed call.
    expect(edges.filter((e) => e[0] === 'tool.called' && e[2] === 'caused_by')).toEqual([['tool.called', 'tool.failed', 'caused_by']]);
    expect([graph.cycles, graph.dangling]).toEqual([[], []]); // the root span is the run's root
    expect(edges).toContainEqual(['policy.evaluated', 'decision.made', 'caused_by']);
    const staleness = (await get(`${replay}/staleness`)).json();
    expect(staleness.findings.map((f: { source_id: string; used_by_log_id: string }) => [f.source_id, name(f.used_by_log_id)])).toContainEqual(['feed:NASDAQ:ACME', 'decision.made']);
    const rc = (await get(`${replay}/root-cause`)).json();
    expect(rc).toMatchObject({ root_cause_type: 'STALE_CONTEXT', detected: true, outcome: { kind: 'acted_on_stale_context', bad: true } });
    expect((rc.evidence as string[]).map(name)).toContain('context.retrieved');
    // The tool error recovered on retry: a finding, not the cause.
    expect(JSON.stringify(rc.findings)).toContain('crm_search');

    // An exporter's retry of the same spans appends nothing (counted without the otel.resource
    // entry, appended the first time its resource and scope are seen, by the first of the two runs).
    const companyId = (await t.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { 'x-api-key': key } })).json().company_id as string;
    const spansStored = async () => (await t.store.db.selectFrom('log_entries').select('seq').where('company_id', '=', companyId).where('event_type', '!=', 'otel.resource').execute()).length;
    const before = await spansStored();
    const again = await t.inject({ method: 'POST', url: '/api/v1/otlp/v1/traces', headers: { 'x-api-key': key }, payload: spanRequest(run.traceId.replaceAll('-', ''), run.root.spanContext().spanId, 'x') });
    expect(again.statusCode, again.body).toBe(200);
    const repeat = await t.inject({ method: 'POST', url: '/api/v1/otlp/v1/traces', headers: { 'x-api-key': key }, payload: spanRequest(run.traceId.replaceAll('-', ''), run.root.spanContext().spanId, 'x') });
    expect(repeat.json()).toEqual({});
    expect(await spansStored()).toBe(before + 1);
  });

  /** A minimal OTLP/JSON trace request with one span. */
  function spanRequest(traceHex: string, spanHex: string, name: string, extra: Record<string, unknown> = {}) {
    return {
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'curl-agent' } }] },
          scopeSpans: [
            {
              scope: { name: 'manual' },
              spans: [
                {
                  traceId: traceHex,
                  spanId: spanHex.replace(/^./, 'f'),
                  parentSpanId: spanHex,
                  name,
                  kind: 1,
                  startTimeUnixNano: '1772366400000000000',
                  endTimeUnixNano: '1772366400123456789',
                  attributes: [
                    { key: 'gen_ai.operation.name', value: { stringValue: 'execute_tool' } },
                    { key: 'gen_ai.tool.name', value: { stringValue: 'calculator' } },
                    { key: 'big', value: { intValue: '9223372036854775807' } },
                    { key: 'ratio', value: { doubleValue: 0.25 } },
                    { key: 'tags', value: { arrayValue: { values: [{ stringValue: 'a' }, { intValue: 2 }] } } },
                    { key: 'blob', value: { bytesValue: 'AAEC' } },
                  ],
                  status: {},
                  ...extra,
                },
              ],
            },
          ],
        },
      ],
    };
  }

  it('OTLP/JSON by hand: 64-bit values are kept exactly, every AnyValue kind maps to JSON', async () => {
    const traceHex = randomUUID().replaceAll('-', '');
    const res = await t.inject({ method: 'POST', url: '/api/v1/otlp/v1/traces', headers: { 'x-api-key': key }, payload: spanRequest(traceHex, '0102030405060708', 'calc') });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({});
    const [e] = await entriesOf(uuidOf(traceHex));
    expect(e).toMatchObject({ event_type: 'tool.called', source: 'curl-agent', span_id: 'f102030405060708', parent_span_id: '0102030405060708', timestamp: '2026-03-01T12:00:00.123Z' });
    expect(e?.data).toMatchObject({
      tool: 'calculator',
      otel: {
        start_time_unix_nano: '1772366400000000000',
        end_time_unix_nano: '1772366400123456789',
        attributes: { big: '9223372036854775807', ratio: 0.25, tags: ['a', 2], blob: 'AAEC' },
      },
    });
  });

  it('one bad span is refused alone: a partial success (JSON and protobuf) naming it, the rest committed', async () => {
    const traceHex = randomUUID().replaceAll('-', '');
    const body = spanRequest(traceHex, '1111111111111111', 'good');
    const spans = body.resourceSpans[0]?.scopeSpans[0]?.spans as Array<Record<string, unknown>>;
    spans.push({ ...spans[0], traceId: 'abcd', name: 'short trace id' });
    spans.push({ ...spans[0], spanId: '2222222222222222', attributes: [{ key: 'k', value: { stringValue: 'a' } }, { key: 'k', value: { stringValue: 'b' } }] });
    const res = await t.inject({ method: 'POST', url: '/api/v1/otlp/v1/traces', headers: { 'x-api-key': key }, payload: body });
    expect(res.statusCode, res.body).toBe(200);
    const ps = res.json().partialSuccess;
    expect(ps.rejectedSpans).toBe('2');
    expect(ps.errorMessage).toContain('span 1: traceId must be 16 bytes');
    expect(ps.errorMessage).toContain('span 2: the attribute "k" appears twice');
    expect((await entriesOf(uuidOf(traceHex))).map((e) => e.data.otel && (e.data.otel as { name: string }).name)).toEqual(['good']);
  });

  it('protobuf partial success: a log record with a reserved source is refused, with the answer in protobuf', async () => {
    const traceHex = randomUUID().replaceAll('-', '');
    const exporter = new ProtoLogExporter({ url: `${base}/v1/logs`, headers: { 'x-api-key': key } });
    const loggers = new LoggerProvider({ resource: resourceFromAttributes({ 'service.name': 'audit-ledger/forged' }), processors: [new SimpleLogRecordProcessor({ exporter })] });
    loggers.getLogger('x').emit({ body: 'forged', attributes: { trace: traceHex } });
    await loggers.forceFlush();
    await loggers.shutdown();
    // The exporter treats a partial success as delivered; send the same by hand to read the answer.
    const raw = Buffer.from([
      // resource_logs { resource { attributes { key "service.name" value { string "audit-ledger/x" } } } scope_logs { log_records { body { string "b" } } } }
      ...lenField(1, Buffer.concat([lenField(1, lenField(1, Buffer.concat([lenField(1, Buffer.from('service.name')), lenField(2, lenField(1, Buffer.from('audit-ledger/x')))]))), lenField(2, lenField(2, lenField(5, lenField(1, Buffer.from('b')))))])),
    ]);
    const res = await t.inject({ method: 'POST', url: '/api/v1/otlp/v1/logs', headers: { 'x-api-key': key, 'content-type': 'application/x-protobuf' }, payload: raw });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-protobuf');
    const ps = readPartialSuccess(res.rawPayload);
    expect(ps?.rejected).toBe(1);
    expect(ps?.message).toContain('reserved');
    const listed = await t.inject({ method: 'GET', url: '/api/v1/logs?source=audit-ledger%2Fforged&limit=10', headers: { 'x-api-key': key } });
    expect(listed.json().items).toEqual([]);
  });

  it('refuses what is not an OTLP request with a problem, and stores nothing', async () => {
    const companyId = (await t.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { 'x-api-key': key } })).json().company_id;
    const before = await countEntries(t.store, companyId);
    const post = (url: string, payload: string | Buffer | object, headers: Record<string, string> = {}) =>
      t.inject({ method: 'POST', url: `/api/v1/otlp/v1/${url}`, headers: { 'x-api-key': key, ...headers }, payload });
    // Not protobuf: a truncated length, a field past the end, wire type 7.
    problem(await post('traces', Buffer.from([0x0a, 0x05, 0x01]), { 'content-type': 'application/x-protobuf' }), 400, 'malformed_otlp');
    problem(await post('traces', Buffer.from([0x0f]), { 'content-type': 'application/x-protobuf' }), 400, 'malformed_otlp');
    problem(await post('logs', Buffer.from([0x0a, 0x02, 0x12, 0x05]), { 'content-type': 'application/x-protobuf' }), 400, 'malformed_otlp');
    // Resource spans sent with the wrong wire type.
    problem(await post('traces', Buffer.from([0x08, 0x01]), { 'content-type': 'application/x-protobuf' }), 400, 'malformed_otlp');
    // Not OTLP/JSON: wrong shapes, named by pointer.
    const p1 = problem(await post('traces', { resourceSpans: {} }), 400, 'malformed_otlp');
    expect(p1.errors).toEqual([{ field: '/body/resourceSpans', message: expect.stringContaining('must be an array') }]);
    const p2 = problem(await post('traces', { resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: 'zz' }] }] }] }), 400, 'malformed_otlp');
    expect(p2.errors).toEqual([{ field: '/body/resourceSpans/0/scopeSpans/0/spans/0/traceId', message: expect.stringContaining('must be hex') }]);
    problem(await post('traces', { resourceSpans: [{ scopeSpans: [{ spans: [{ startTimeUnixNano: '-5' }] }] }] }), 400, 'malformed_otlp');
    problem(await post('logs', { resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { stringValue: 'a', intValue: 1 } }] }] }] }), 400, 'malformed_otlp');
    problem(await post('traces', '{"resourceSpans": [', { 'content-type': 'application/json' }), 400, 'malformed_otlp');
    problem(await post('traces', Buffer.from([0xff, 0xfe]), { 'content-type': 'application/json' }), 400, 'invalid_text');
    problem(await post('traces', '', { 'content-type': 'application/json' }), 400, 'malformed_otlp');
    // Another media type.
    const p415 = problem(await post('traces', 'resourceSpans', { 'content-type': 'text/plain' }), 415, 'unsupported_media_type');
    expect(p415.detail).toContain('application/x-protobuf');
    // Credentials: none, a wrong key, a user token (ingestion takes the company's API key).
    problem(await t.inject({ method: 'POST', url: '/api/v1/otlp/v1/traces', payload: { resourceSpans: [] } }), 401, 'missing_credential');
    problem(await t.inject({ method: 'POST', url: '/api/v1/otlp/v1/traces', headers: { 'x-api-key': 'alk_wrong' }, payload: { resourceSpans: [] } }), 401, 'invalid_credential');
    problem(await t.inject({ method: 'POST', url: '/api/v1/otlp/v1/logs', headers: { authorization: `Bearer ${token}` }, payload: { resourceLogs: [] } }), 403, 'forbidden');
    expect(await countEntries(t.store, companyId)).toBe(before);
    // An empty export is a success that stores nothing.
    expect((await post('traces', { resourceSpans: [] })).json()).toEqual({});
    // An empty protobuf body is an empty ExportLogsServiceRequest: valid, nothing to store.
    const empty = await post('logs', Buffer.alloc(0), { 'content-type': 'application/x-protobuf' });
    expect([empty.statusCode, empty.rawPayload.length]).toEqual([200, 0]);
    expect(await countEntries(t.store, companyId)).toBe(before);
  });
});
