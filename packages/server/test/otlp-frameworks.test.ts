// Agent frameworks' own telemetry, end to end (issue 31, part 1): a small support agent run by
// the framework itself, from npm, with its real OpenTelemetry instrumentation, exported by the
// real OTLP exporters (protobuf and JSON) to the service over HTTP. The agent looks an order up
// (the lookup reads the order store: a retrieval), then calls two tools at once: one works, one
// fails (the payments service is down), and the model gives up: the run fails. Asserted from the
// stored entries and the forensics: event types, tool names, arguments and results, model and
// tokens, agent_id on every event, each tool call linked to the model call that asked for it,
// and the root cause (TOOL_ERROR, the refund tool).
//
// Models are the frameworks' own mock models (the Vercel AI SDK's `ai/test`), or the real OpenAI
// client against a fake OpenAI endpoint on loopback (OpenInference's instrumentation patches the
// client). Nothing here writes a span by hand except the AI SDK's retrieval, which the AI SDK does
// not instrument: it is the GenAI span docs/integrations.md tells an AI SDK user to add.
import { LegacyOpenTelemetry, OpenTelemetry } from '@ai-sdk/otel';
import { getRetrieverAttributes, traceAgent, traceGuardrail, traceRetriever, traceTool } from '@arizeai/openinference-core';
import { OpenAIInstrumentation } from '@arizeai/openinference-instrumentation-openai';
import { LangChainInstrumentation } from '@arizeai/openinference-instrumentation-langchain';
import { OpenAIAgentsInstrumentation } from '@arizeai/openinference-instrumentation-openai-agents';
import * as agents from '@openai/agents';
import * as CallbackManagerModule from '@langchain/core/callbacks/manager';
import { Document } from '@langchain/core/documents';
import { HumanMessage, type BaseMessage, ToolMessage } from '@langchain/core/messages';
import { RunnableLambda } from '@langchain/core/runnables';
import { AsyncLocalStorageProviderSingleton } from '@langchain/core/singletons';
import { tool as lcTool } from '@langchain/core/tools';
import { FakeRetriever } from '@langchain/core/utils/testing';
import { ChatOpenAI } from '@langchain/openai';
import { AsyncLocalStorage } from 'node:async_hooks';
import OpenAI from 'openai';
import { context, type Context, trace as otelTrace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, type Span, type SpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import * as ai6 from 'ai-v6';
import { MockLanguageModelV3 } from 'ai-v6/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startTestApp, type TestApp } from './helpers/app.js';
import { fakeOpenAi, modelCalls, TOOL_CALLS } from './helpers/fake-openai.js';

type Encoding = 'json' | 'protobuf';
type Entry = { log_id: string; seq: number; event_type: string; agent_id: string | null; span_id: string | null; data: Record<string, unknown> };

/** The one entry of a type (the test fails, listing the types there are, if there is not exactly one). */
function onlyOne(entries: Entry[], type: string): Entry {
  const found = entries.filter((e) => e.event_type === type);
  expect(found, `${type} in ${entries.map((e) => e.event_type).join(', ')}`).toHaveLength(1);
  return found[0] as Entry;
}

/** Records the trace ids the framework started, so the test can read its trace back. */
class TraceIds implements SpanProcessor {
  readonly ids = new Set<string>();
  onStart(span: Span, _ctx: Context): void {
    this.ids.add(span.spanContext().traceId);
  }
  onEnd(): void {}
  forceFlush = async () => undefined;
  shutdown = async () => undefined;
}

describe('agent frameworks\' telemetry over OTLP', () => {
  let t: TestApp;
  let key: string;
  let base: string;
  beforeAll(async () => {
    // As an instrumented app does (the Node SDK registers it): spans started inside a span's work are its children.
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    // As importing `langchain` does in Node: LangChain passes a run's config to nested runs this way.
    AsyncLocalStorageProviderSingleton.initializeGlobalInstance(new AsyncLocalStorage());
    t = await startTestApp('sqlite');
    const acct = await t.newAccount();
    key = (await t.createKey(acct.token, 1_000_000)).key;
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const addr = t.app.server.address();
    if (addr === null || typeof addr === 'string') throw new Error('no port');
    base = `http://127.0.0.1:${addr.port}/api/v1/otlp/v1/traces`;
  });
  afterAll(async () => {
    context.disable();
    await t.close();
  });

  const openAiEndpoint = fakeOpenAi;

  /** A tracer provider exporting to the service (batch processor, as in production), and the trace ids it starts. */
  function pipeline(encoding: Encoding, service: string) {
    const headers = { 'x-api-key': key };
    const exporter = encoding === 'json' ? new JsonTraceExporter({ url: base, headers }) : new ProtoTraceExporter({ url: base, headers });
    const ids = new TraceIds();
    // The run is sent in one request when the test flushes (not on the processor's 5 s timer,
    // which a slow machine could hit mid-run): agent inheritance is within a request (map.ts).
    const provider = new TracerProvider({ resource: resourceFromAttributes({ 'service.name': service }), spanProcessors: [ids, new BatchSpanProcessor({ exporter, scheduledDelayMillis: 60_000 })] });
    return { provider, tracer: provider.getTracer('support-agent'), ids };
  }

  async function entriesOf(ids: Set<string>): Promise<Entry[]> {
    expect(ids.size).toBe(1);
    const hex = [...ids][0] as string;
    const traceId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    const res = await t.inject({ method: 'GET', url: `/api/v1/logs?trace_id=${traceId}&limit=1000&order=asc`, headers: { 'x-api-key': key } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().items as Entry[];
  }

  /** Replays the trace and answers its causal graph's edges (by event type) and its root cause. */
  async function forensics(entries: Entry[]) {
    const traceId = (await t.inject({ method: 'GET', url: `/api/v1/logs/${entries[0]?.log_id}`, headers: { 'x-api-key': key } })).json().trace_id as string;
    const session = await t.inject({ method: 'POST', url: '/api/v1/forensics/replays', headers: { 'x-api-key': key }, payload: { trace_id: traceId, metadata: {} } });
    expect(session.statusCode, session.body).toBe(200);
    const replay = `/api/v1/forensics/replays/${session.json().id}`;
    const get = async (p: string) => (await t.inject({ method: 'GET', url: `${replay}/${p}`, headers: { 'x-api-key': key } })).json();
    const byId = new Map(entries.map((e) => [e.log_id, e]));
    const graph = await get('causal-graph');
    const edges = (graph.edges as Array<{ source: string; target: string; type: string; label: string }>).map((e) => ({ from: byId.get(e.source), to: byId.get(e.target), type: e.type, label: e.label }));
    return { edges, cycles: graph.cycles as unknown[], rootCause: await get('root-cause') };
  }

  // The agent's steps, shared by every framework: the model asks for both tools at once, then
  // gives up when one of them failed.
  let generated = 0;
  // The same tool calls the fake OpenAI endpoint asks for, in the AI SDK's shape.
  const toolCalls = TOOL_CALLS.map((c) => ({ toolCallId: c.id, toolName: c.name, input: c.arguments }));
  const usage = { inputTokens: { total: 120, noCache: 120, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 24, text: 24, reasoning: 0 } };
  const doGenerate = async () => {
    generated++;
    if (generated % 2 === 0) throw new Error('the model gave up: the refund failed');
    return { content: toolCalls.map((c) => ({ type: 'tool-call' as const, ...c })), finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' }, usage, warnings: [] };
  };
  /** The order lookup reads the order store: a GenAI retrieval span (the AI SDK has none of its own). */
  const lookup = (tracer: ReturnType<TracerProvider['getTracer']>) => async ({ order }: { order: string }) => {
    const span = tracer.startSpan('retrieval orders-db', { attributes: { 'gen_ai.operation.name': 'retrieval', 'gen_ai.data_source.id': 'orders-db', 'audit_ledger.data.as_of': new Date().toISOString() } }, context.active());
    span.end();
    return { order, status: 'delivered', paid: 30 };
  };
  const refund = async (_args: { order: string; amount: number }): Promise<{ refunded: number }> => {
    throw new Error('payments service unavailable');
  };

  function expectTheRun(entries: Entry[], opts: { agent: string; model: string; finish?: string }) {
    const one = (type: string) => onlyOne(entries, type);
    // Every event carries the agent, inherited from the run's span where the span itself names none.
    expect(entries.map((e) => [e.event_type, e.agent_id]).filter(([, a]) => a !== opts.agent)).toEqual([]);
    const called = one('tool.called');
    expect(called.data).toMatchObject({ tool: 'lookup_order', tool_call_id: 'call-lookup', arguments: { order: 'A-1001' }, result: { order: 'A-1001', status: 'delivered', paid: 30 } });
    const failed = one('tool.failed');
    expect(failed.data).toMatchObject({ tool: 'refund', tool_call_id: 'call-refund', arguments: { order: 'A-1001', amount: 30 }, error: 'payments service unavailable' });
    const calls = modelCalls(entries);
    expect(calls.length).toBe(2);
    expect(calls[0]?.data).toMatchObject({ model: opts.model, prompt_tokens: 120, completion_tokens: 24, finish_reasons: [opts.finish ?? 'tool-calls'], tool_calls: [{ id: 'call-lookup', name: 'lookup_order' }, { id: 'call-refund', name: 'refund' }] });
    expect(one('context.retrieved').data).toMatchObject({ source_id: 'orders-db' });
    one('agent.failed');
    return { called, failed, asking: calls[0] as Entry };
  }

  async function expectTheForensics(entries: Entry[], run: ReturnType<typeof expectTheRun>) {
    const { edges, cycles, rootCause } = await forensics(entries);
    expect(cycles).toEqual([]);
    // Each tool call is caused by the model call that asked for it.
    for (const toolCall of [run.called, run.failed]) expect(edges).toContainEqual({ from: toolCall, to: run.asking, type: 'caused_by', label: 'requested by the model call' });
    // The run's result is caused by its child spans (OTel's direction), never the other way.
    const agent = entries.find((e) => e.event_type === 'agent.failed') as Entry;
    expect(edges.filter((e) => e.from === agent && e.type === 'caused_by').length).toBeGreaterThan(0);
    // (An app's own span around the run, left out of `entries`, is caused by it: that is not the run's.)
    expect(edges.filter((e) => e.to === agent && e.type === 'caused_by' && e.from !== undefined)).toEqual([]);
    const shown = edges.map((e) => `${e.from?.seq}:${e.from?.event_type} -> ${e.to?.seq}:${e.to?.event_type} ${e.type} ${e.label}`).join('\n');
    const ev = entries.map((e) => `${e.seq} ${e.event_type} ${e.span_id} ${JSON.stringify({ r: e.data.tool_results, c: e.data.tool_calls, id: e.data.tool_call_id, p: (e as Record<string, unknown>).parent_span_id })}`).join('\n');
    expect(rootCause, `${ev}\n${shown}\n${JSON.stringify(rootCause.root_cause_type)}`).toMatchObject({ root_cause_type: 'TOOL_ERROR', detected: true });
    expect(JSON.stringify(rootCause.evidence)).toContain(run.failed.log_id);
    expect(rootCause.description).toContain('refund');
  }

  describe.each<Encoding>(['protobuf', 'json'])('the Vercel AI SDK (OTLP %s)', (encoding) => {
    it.each([
      ['its OpenTelemetry integration (GenAI conventions)', 'genai', (tracer: ReturnType<TracerProvider['getTracer']>) => new OpenTelemetry({ tracer, agentSpanName: 'functionId' })],
      ['its legacy OpenTelemetry integration (the classic ai.* spans)', 'vercel-ai', (tracer: ReturnType<TracerProvider['getTracer']>) => new LegacyOpenTelemetry({ tracer })],
    ] as const)('ai 7 with %s', async (_what, convention, integration) => {
      const { provider, tracer, ids } = pipeline(encoding, 'support-api');
      await expect(
        generateText({
          model: new MockLanguageModelV4({ modelId: 'gpt-4.1-mini', doGenerate: doGenerate as never }),
          tools: { lookup_order: tool({ inputSchema: z.object({ order: z.string() }), execute: lookup(tracer) }), refund: tool({ inputSchema: z.object({ order: z.string(), amount: z.number() }), execute: refund }) },
          stopWhen: stepCountIs(4),
          prompt: 'Refund order A-1001',
          telemetry: { functionId: 'support-agent', integrations: [integration(tracer)] },
        }),
      ).rejects.toThrow('gave up');
      await provider.forceFlush();
      const entries = await entriesOf(ids.ids);
      const run = expectTheRun(entries, { agent: 'support-agent', model: 'gpt-4.1-mini' });
      expect(run.called.data).toMatchObject({ convention });
      await expectTheForensics(entries, run);
      await provider.shutdown();
    });

    it('ai 6 with experimental_telemetry (the classic ai.* spans)', async () => {
      const { provider, tracer, ids } = pipeline(encoding, 'support-api');
      // ai 6 makes its spans children of the active span: the run is wrapped in one so the tools'
      // spans and the retrieval share its trace (as an app's request span does).
      const root = tracer.startSpan('POST /refunds');
      await expect(
        context.with(otelTrace.setSpan(context.active(), root), () =>
          ai6.generateText({
            model: new MockLanguageModelV3({ modelId: 'gpt-4.1-mini', doGenerate: doGenerate as never }),
            tools: { lookup_order: ai6.tool({ inputSchema: z.object({ order: z.string() }), execute: lookup(tracer) }), refund: ai6.tool({ inputSchema: z.object({ order: z.string(), amount: z.number() }), execute: refund }) },
            stopWhen: ai6.stepCountIs(4),
            prompt: 'Refund order A-1001',
            experimental_telemetry: { isEnabled: true, tracer, functionId: 'support-agent' },
          }),
        ),
      ).rejects.toThrow('gave up');
      root.end();
      await provider.forceFlush();
      const entries = (await entriesOf(ids.ids)).filter((e) => e.event_type !== 'otel.span');
      const run = expectTheRun(entries, { agent: 'support-agent', model: 'gpt-4.1-mini' });
      expect(run.called.data).toMatchObject({ convention: 'vercel-ai' });
      await expectTheForensics(entries, run);
      await provider.shutdown();
    });
  });

  /**
   * The support agent with the OpenAI client instrumented by OpenInference, its tools and its
   * retriever traced by openinference-core. `asOf` is when the order store's document was current.
   */
  async function openInferenceRun(encoding: Encoding, opts: { refundFails: boolean; asOf: Date }) {
    const { provider, tracer, ids } = pipeline(encoding, 'support-api');
    const instrumentation = new OpenAIInstrumentation({ tracerProvider: provider });
    instrumentation.manuallyInstrument({ OpenAI } as never);
    const endpoint = await openAiEndpoint();
    const client = new OpenAI({ apiKey: 'test', baseURL: endpoint.url });
    const orders = traceRetriever(async (order: string) => [{ id: `order:${order}`, content: 'delivered, paid 30 EUR', metadata: { as_of: opts.asOf.toISOString(), source: 'orders-db' }, score: 1 }], {
      name: 'orders-db',
      tracer,
      // The retriever says how fresh its content must be (read into max_age_seconds).
      attributes: { metadata: JSON.stringify({ source_type: 'orders_db', max_age_seconds: 3600 }) },
      processOutput: (documents) => getRetrieverAttributes({ documents }),
    });
    const tools: Record<string, (args: Record<string, unknown>) => Promise<unknown>> = {
      lookup_order: async ({ order }) => ({ order, status: 'delivered', paid: 30, documents: (await orders(String(order))).length }),
      refund: async ({ amount }) => {
        if (opts.refundFails) throw new Error('payments service unavailable');
        return { refunded: amount };
      },
    };
    const run = traceAgent(
      async (ask: string) => {
        const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: ask }];
        const first = await client.chat.completions.create({ model: 'gpt-4.1-mini', messages });
        const asked = first.choices[0]?.message;
        messages.push(asked as OpenAI.Chat.ChatCompletionMessageParam);
        let failed = '';
        for (const call of asked?.tool_calls ?? []) {
          if (call.type !== 'function') continue;
          // Each tool call traced as a TOOL span naming the call it answers.
          const traced = traceTool(tools[call.function.name] as (args: Record<string, unknown>) => Promise<unknown>, { name: call.function.name, tracer, attributes: { 'tool.name': call.function.name, 'tool_call.id': call.id, 'tool_call.function.arguments': call.function.arguments } });
          const result = await traced(JSON.parse(call.function.arguments) as Record<string, unknown>).catch((err: Error) => {
            failed = err.message;
            return { error: err.message };
          });
          messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(result) });
        }
        const answer = await client.chat.completions.create({ model: 'gpt-4.1-mini', messages });
        if (failed) throw new Error(`the refund was not made: ${failed}`);
        return answer.choices[0]?.message.content;
      },
      { name: 'support-agent', tracer },
    );
    const outcome = await run('Refund order A-1001').then(
      () => 'done',
      (err: Error) => err.message,
    );
    instrumentation.disable();
    await endpoint.close();
    await provider.forceFlush();
    await provider.shutdown();
    return { outcome, entries: await entriesOf(ids.ids) };
  }

  describe.each<Encoding>(['protobuf', 'json'])('OpenInference (OTLP %s)', (encoding) => {
    it('the OpenAI client instrumented by OpenInference, the agent, its tools and its retriever traced by openinference-core', async () => {
      const { outcome, entries } = await openInferenceRun(encoding, { refundFails: true, asOf: new Date() });
      expect(outcome).toContain('the refund was not made');
      const result = expectTheRun(entries, { agent: 'support-agent', model: 'gpt-4.1-mini', finish: 'tool_calls' });
      expect(result.called.data).toMatchObject({ convention: 'openinference' });
      expect(entries.find((e) => e.event_type === 'context.retrieved')?.data).toMatchObject({ documents: [{ id: 'order:A-1001', score: 1 }], source_id: 'orders-db', max_age_seconds: 3600 });
      await expectTheForensics(entries, result);
    });

    it('a stale read found through the retriever span: the model call given the lookup\'s result used a document two days old', async () => {
      const asOf = new Date(Date.now() - 2 * 86_400_000);
      const { outcome, entries } = await openInferenceRun(encoding, { refundFails: false, asOf });
      expect(outcome).toBe('done');
      const read = entries.find((e) => e.event_type === 'context.retrieved') as Entry;
      expect(read.data).toMatchObject({ source_id: 'orders-db', source_type: 'orders_db', as_of: asOf.toISOString(), max_age_seconds: 3600 });
      const session = await t.inject({ method: 'POST', url: '/api/v1/forensics/replays', headers: { 'x-api-key': key }, payload: { trace_id: (await t.inject({ method: 'GET', url: `/api/v1/logs/${read.log_id}`, headers: { 'x-api-key': key } })).json().trace_id, metadata: {} } });
      const replay = `/api/v1/forensics/replays/${session.json().id}`;
      const staleness = (await t.inject({ method: 'GET', url: `${replay}/staleness`, headers: { 'x-api-key': key } })).json();
      const byId = new Map(entries.map((e) => [e.log_id, e]));
      const findings = (staleness.findings as Array<{ source_id: string; staleness: string; used_by_log_id: string; context_log_id: string; via_log_ids: string[] }>).map((f) => ({ source: f.source_id, staleness: f.staleness, user: byId.get(f.used_by_log_id)?.event_type, read: f.context_log_id, via: f.via_log_ids.map((v) => byId.get(v)?.event_type) }));
      const shown = entries.map((e) => `${e.seq} ${e.event_type} span ${e.span_id} parent ${(e as Entry & { parent_span_id: string | null }).parent_span_id} ${JSON.stringify({ r: e.data.tool_results, id: e.data.tool_call_id })}`).join('\n');
      expect(findings, shown).toEqual([{ source: 'orders-db', staleness: 'critical', user: 'llm.call', read: read.log_id, via: ['tool.called'] }]);
      const rc = (await t.inject({ method: 'GET', url: `${replay}/root-cause`, headers: { 'x-api-key': key } })).json();
      expect(rc, JSON.stringify(rc)).toMatchObject({ root_cause_type: 'STALE_CONTEXT', detected: true });
      expect(rc.evidence).toContain(read.log_id);
    });
  });

  describe.each<Encoding>(['protobuf', 'json'])('LangChain.js (OTLP %s)', (encoding) => {
    it('ChatOpenAI with bound tools, a retriever and a runnable agent, instrumented by OpenInference', async () => {
      const { provider, ids } = pipeline(encoding, 'support-api');
      const instrumentation = new LangChainInstrumentation({ tracerProvider: provider });
      instrumentation.manuallyInstrument(CallbackManagerModule);
      const endpoint = await openAiEndpoint();
      const orders = new FakeRetriever({ output: [new Document({ id: 'order:A-1001', pageContent: 'delivered, paid 30 EUR', metadata: { as_of: new Date().toISOString(), source: 'orders-db' } })] });
      const tools = {
        lookup_order: lcTool(async ({ order }: { order: string }) => JSON.stringify({ order, status: 'delivered', paid: 30, documents: (await orders.invoke(order)).length }), { name: 'lookup_order', description: 'Looks an order up', schema: z.object({ order: z.string() }) }),
        refund: lcTool(async (_args: { order: string; amount: number }): Promise<string> => {
          throw new Error('payments service unavailable');
        }, { name: 'refund', description: 'Refunds an order', schema: z.object({ order: z.string(), amount: z.number() }) }),
      };
      const model = new ChatOpenAI({ model: 'gpt-4.1-mini', apiKey: 'test', configuration: { baseURL: endpoint.url } }).bindTools(Object.values(tools));
      const agent = RunnableLambda.from(async (ask: string) => {
        const messages: BaseMessage[] = [new HumanMessage(ask)];
        const asked = await model.invoke(messages);
        messages.push(asked);
        let failed = '';
        for (const call of asked.tool_calls ?? []) {
          const chosen = tools[call.name as keyof typeof tools] as { invoke: (c: typeof call) => Promise<BaseMessage> };
          messages.push(await chosen.invoke(call).catch((err: Error) => {
            failed = err.message;
            return new ToolMessage({ content: err.message, tool_call_id: call.id ?? '', status: 'error' });
          }));
        }
        await model.invoke(messages);
        if (failed) throw new Error(`the refund was not made: ${failed}`);
        return 'done';
      }).withConfig({ runName: 'support-agent', metadata: { agent_id: 'support-agent' } });
      await expect(agent.invoke('Refund order A-1001')).rejects.toThrow('the refund was not made');
      instrumentation.disable();
      await endpoint.close();
      await provider.forceFlush();
      const entries = await entriesOf(ids.ids);
      const one = (type: string) => onlyOne(entries, type);
      // The runnable is the run: its agent_id (from its metadata) on every event below it.
      expect(one('run.failed').agent_id).toBe('support-agent');
      expect(entries.filter((e) => e.agent_id !== 'support-agent').map((e) => e.event_type)).toEqual([]);
      const called = one('tool.called');
      expect(called.data).toMatchObject({ convention: 'openinference', tool: 'lookup_order', result: { order: 'A-1001', status: 'delivered', paid: 30, documents: 1 } });
      const failed = one('tool.failed');
      expect(failed.data).toMatchObject({ tool: 'refund', arguments: { order: 'A-1001', amount: 30 }, error: 'payments service unavailable' });
      const calls = modelCalls(entries);
      expect(calls).toHaveLength(2);
      // LangChain's OpenInference spans carry the tool calls' names, not their ids.
      expect(calls[0]?.data).toMatchObject({ model: 'gpt-4.1-mini', prompt_tokens: 120, completion_tokens: 24, finish_reasons: ['tool_calls'], tool_calls: [{ name: 'lookup_order' }, { name: 'refund' }] });
      expect(one('context.retrieved').data).toMatchObject({ documents: [{ as_of: expect.any(String) }] });
      const { edges, cycles, rootCause } = await forensics(entries);
      expect(cycles).toEqual([]);
      for (const toolCall of [called, failed]) expect(edges).toContainEqual({ from: toolCall, to: calls[0], type: 'caused_by', label: 'requested by the model call (by tool name)' });
      expect(rootCause, JSON.stringify(rootCause)).toMatchObject({ root_cause_type: 'TOOL_ERROR', detected: true });
      expect(rootCause.evidence).toContain(failed.log_id);
      await provider.shutdown();
    });
  });

  describe.each<Encoding>(['protobuf', 'json'])('OpenAI Agents (OTLP %s)', (encoding) => {
    it('an @openai/agents Agent with two tools on the chat completions API, traced by OpenInference\'s processor', async () => {
      const { provider, ids } = pipeline(encoding, 'support-api');
      const instrumentation = new OpenAIAgentsInstrumentation({ tracerProvider: provider });
      instrumentation.manuallyInstrument(agents);
      const endpoint = await openAiEndpoint({ refuseResults: true });
      // The agents SDK turns its tracing off when NODE_ENV is "test" (vitest sets it): on, as in production.
      agents.setTracingDisabled(false);
      const model = new agents.OpenAIChatCompletionsModel(new OpenAI({ apiKey: 'test', baseURL: endpoint.url, maxRetries: 0 }) as never, 'gpt-4.1-mini');
      const lookup = agents.tool({ name: 'lookup_order', description: 'Looks an order up', parameters: z.object({ order: z.string() }), execute: async ({ order }) => JSON.stringify({ order, status: 'delivered', paid: 30 }) });
      const refund = agents.tool({ name: 'refund', description: 'Refunds an order', parameters: z.object({ order: z.string(), amount: z.number() }), execute: async () => {
        throw new Error('payments service unavailable');
      } });
      const agent = new agents.Agent({ name: 'support-agent', instructions: 'Refund what the customer asks for.', model, tools: [lookup, refund] });
      await expect(agents.run(agent, 'Refund order A-1001')).rejects.toThrow('gave up');
      // The agents SDK hands its spans to the processor on its own schedule: flush it first.
      await agents.getGlobalTraceProvider().forceFlush();
      await provider.forceFlush();
      await endpoint.close();
      const entries = await entriesOf(ids.ids);
      const one = (type: string) => onlyOne(entries, type);
      const agentSpan = one('agent.failed');
      expect(agentSpan.agent_id).toBe('support-agent');
      // Every event under the agent's span carries it (the SDK's workflow span above the agent names none).
      expect(entries.filter((e) => ['tool.called', 'tool.failed', 'llm.call', 'chain.completed'].includes(e.event_type) && e.agent_id !== 'support-agent').map((e) => e.event_type)).toEqual([]);
      const called = one('tool.called');
      expect(called.data).toMatchObject({ convention: 'openinference', tool: 'lookup_order', arguments: { order: 'A-1001' }, result: { order: 'A-1001', status: 'delivered', paid: 30 } });
      const failed = one('tool.failed');
      expect(failed.data).toMatchObject({ tool: 'refund', arguments: { order: 'A-1001', amount: 30 } });
      expect(String(failed.data.error)).toContain('refund');
      const calls = modelCalls(entries);
      expect(calls).toHaveLength(2);
      expect(calls[0]?.data).toMatchObject({ model: 'gpt-4.1-mini', prompt_tokens: 120, completion_tokens: 24, tool_calls: [{ id: 'call-lookup', name: 'lookup_order' }, { id: 'call-refund', name: 'refund' }] });
      expect(calls[1]?.data).toMatchObject({ tool_results: [{ id: 'call-lookup' }, { id: 'call-refund' }], error: expect.stringContaining('gave up') });
      const { edges, cycles, rootCause } = await forensics(entries);
      expect(cycles).toEqual([]);
      for (const toolCall of [called, failed]) expect(edges).toContainEqual({ from: toolCall, to: calls[0], type: 'caused_by', label: 'requested by the model call (by tool name)' });
      expect(rootCause, JSON.stringify(rootCause)).toMatchObject({ root_cause_type: 'TOOL_ERROR', detected: true });
      expect(rootCause.evidence).toContain(failed.log_id);
      instrumentation.uninstrument();
      await provider.shutdown();
    });
  });

  it('guardrail spans become policy.evaluated with their verdict (OpenInference), and GenAI\'s evaluation event evaluation.recorded on the span it scores', async () => {
    const { provider, tracer, ids } = pipeline('json', 'support-api');
    const logs = new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter: new JsonLogExporter({ url: base.replace('/v1/traces', '/v1/logs'), headers: { 'x-api-key': key } }) })] });
    const pii = traceGuardrail(async (_text: string) => ({ passed: true }), { name: 'pii-filter', tracer });
    const limit = traceGuardrail(async (_amount: number) => ({ passed: false, reason: 'over the refund limit' }), { name: 'refund-limit', tracer });
    const run = traceAgent(
      async () => {
        await pii('Refund order A-1001');
        const verdict = await limit(900);
        // The run's answer is scored (GenAI's evaluation event, in the span it scores).
        logs.getLogger('evals').emit({ eventName: 'gen_ai.evaluation.result', context: context.active(), attributes: { 'gen_ai.evaluation.name': 'helpfulness', 'gen_ai.evaluation.score.value': 0.4, 'gen_ai.evaluation.score.label': 'poor' } });
        return verdict;
      },
      { name: 'support-agent', tracer },
    );
    await run();
    await provider.forceFlush();
    await logs.forceFlush();
    const entries = await entriesOf(ids.ids);
    const policies = entries.filter((e) => e.event_type === 'policy.evaluated').map((e) => [e.data.policy_id, e.data.verdict, e.agent_id]);
    expect(policies.sort()).toEqual([['pii-filter', 'allow', 'support-agent'], ['refund-limit', 'deny', 'support-agent']]);
    const evaluation = entries.find((e) => e.event_type === 'evaluation.recorded') as Entry & { parent_span_id: string };
    expect(evaluation?.data).toMatchObject({ evaluation: 'helpfulness', score: 0.4, label: 'poor' });
    expect(evaluation.parent_span_id).toBe(entries.find((e) => e.event_type === 'agent.completed')?.span_id);
    // The denial is what the forensics see as a policy decision against the run.
    const { rootCause } = await forensics(entries);
    expect(JSON.stringify(rootCause)).toContain('refund-limit');
    await provider.shutdown();
    await logs.shutdown();
  });
});
