// LlamaIndex.TS over OTLP (issue 31, the LlamaIndex recipe of docs/integrations.md), in its own
// file because the Traceloop SDK it uses takes over the process's global tracer provider and
// context manager: a LlamaIndex.TS agent (`agent()` from @llamaindex/workflow) on the
// OpenAI LLM of @llamaindex/openai against a fake OpenAI endpoint on loopback, a vector index
// of @llamaindex's own whose retriever the order lookup reads, traced by Traceloop's LlamaIndex
// instrumentation (the one that exists for LlamaIndex.TS: OpenInference's npm package
// @arizeai/openinference-instrumentation-llama-index 0.0.12 is empty), exported by our OTLP
// exporters (protobuf and JSON). The same support agent as the other frameworks' tests: two tool
// calls at once (one fails), a model that gives up, a failed run.
//
// What the instrumentation records, found here: model calls (GenAI `chat` spans, tokens when
// the LLM asks for `stream_options.include_usage`) and retrievers (`<class>.retrieve` task
// spans with the nodes found), not tools and not the agent, and not the tool calls a model asked
// for (it keeps only the streamed text). The recipe puts each tool in a Traceloop tool span and
// the run in agent and workflow spans; a tool call is linked to the model call before it.
import type { AddressInfo } from 'node:net';
import * as llamaIndexOpenAI from '@llamaindex/openai';
import { agent } from '@llamaindex/workflow';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import type { SpanExporter } from '@opentelemetry/sdk-trace';
import * as traceloop from '@traceloop/node-server-sdk';
import * as llamaindex from 'llamaindex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startTestApp, type TestApp } from './helpers/app.js';
import { failHere, Switch } from './helpers/traceloop.js';
import { fakeOpenAi } from './helpers/fake-openai.js';

type Entry = { log_id: string; seq: number; event_type: string; agent_id: string | null; parent_span_id: string | null; data: Record<string, unknown> };

const TWO_DAYS_AGO = new Date(Date.now() - 2 * 86_400_000).toISOString();

describe('LlamaIndex.TS over OTLP (Traceloop\'s LlamaIndex instrumentation)', () => {
  let t: TestApp;
  let key: string;
  let base: string;
  let model: Awaited<ReturnType<typeof fakeOpenAi>>;
  const traces = new Set<string>();
  const exporters = new Switch();
  beforeAll(async () => {
    t = await startTestApp('sqlite');
    const acct = await t.newAccount();
    key = (await t.createKey(acct.token, 1_000_000)).key;
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/api/v1/otlp/v1/traces`;
    // Given the tool results, the model answers that it could not refund. (Not with an error: a
    // model error inside agent().run() is an unhandled rejection and the run never settles, in
    // @llamaindex/workflow 1.1.24, instrumented or not; docs/integrations.md says so.)
    model = await fakeOpenAi();
    // The recipe: Traceloop instruments the two LlamaIndex modules it is handed (ESM has no import hooks here).
    traceloop.initialize({ appName: 'support-api', exporter: exporters as never, disableBatch: true, instrumentModules: { llamaIndex: llamaindex as never, llamaIndexOpenAI }, silenceInitializationMessage: true, traceloopSyncEnabled: false });
  });
  afterAll(async () => {
    await model.close();
    await t.close();
  });

  /** A LlamaIndex tool's function in a Traceloop tool span of its name (the instrumentation traces no tools). */
  const traced = <A extends object, R>(name: string, fn: (args: A) => Promise<R>) => (args: A) =>
    traceloop.withTool({ name }, async (input: A) => {
      try {
        return await fn(input);
      } catch (err) {
        return failHere(err as Error);
      }
    }, args);

  async function runAgent(): Promise<{ answer: string; failed: string }> {
    const llm = new llamaIndexOpenAI.OpenAI({ model: 'gpt-4.1-mini', apiKey: 'test', baseURL: model.url, additionalChatOptions: { stream_options: { include_usage: true } } });
    llamaindex.Settings.embedModel = new llamaIndexOpenAI.OpenAIEmbedding({ apiKey: 'test', baseURL: model.url });
    // The order store: a vector index of LlamaIndex's own, its document last updated two days ago.
    const orders = await llamaindex.VectorStoreIndex.fromDocuments([new llamaindex.Document({ id_: 'order:A-1001', text: 'Order A-1001: delivered, paid 30.', metadata: { updated_at: TWO_DAYS_AGO } })]);
    const retriever = orders.asRetriever({ similarityTopK: 1 });
    const lookup = llamaindex.tool({
      name: 'lookup_order',
      description: 'Look an order up',
      parameters: z.object({ order: z.string() }),
      execute: traced('lookup_order', async ({ order }: { order: string }) => {
        const found = await retriever.retrieve({ query: order });
        return { order, status: 'delivered', paid: 30, found: found.length };
      }),
    });
    const refund = llamaindex.tool({
      name: 'refund',
      description: 'Refund an order',
      parameters: z.object({ order: z.string(), amount: z.number() }),
      execute: traced('refund', async (_args: { order: string; amount: number }): Promise<{ refunded: number }> => {
        failed = 'payments service unavailable';
        throw new Error(failed);
      }),
    });
    const support = agent({ name: 'support-agent', llm, tools: [lookup, refund] });
    // The app knows the refund was not made (its tool failed): the agent's run failed, and the workflow.
    let failed = '';
    return traceloop.withWorkflow({ name: 'refunds' }, async () => {
      const answer = await traceloop.withAgent({ name: 'support-agent' }, async () => {
        const said = String((await support.run('Refund order A-1001')).data.result);
        if (failed) failHere(new Error(`the refund was not made: ${failed}`));
        return said;
      });
      if (failed) failHere(new Error(`the refund was not made: ${failed}`));
      return { answer, failed };
    });
  }

  it.each(['protobuf', 'json'] as const)('a LlamaIndex.TS agent with two tools and a vector index retriever (OTLP %s)', async (encoding) => {
    const headers = { 'x-api-key': key };
    exporters.to = (encoding === 'json' ? new JsonTraceExporter({ url: base, headers }) : new ProtoTraceExporter({ url: base, headers })) as unknown as SpanExporter;
    const seen = new Set(traces);
    expect(await runAgent()).toEqual({ answer: 'I could not refund the order: the payments service is down.', failed: 'payments service unavailable' });
    await traceloop.forceFlush();
    await exporters.forceFlush();
    const runs = await t.inject({ method: 'GET', url: '/api/v1/logs?event_type=run.*&limit=100', headers });
    const fresh = [...new Set((runs.json().items as Array<{ trace_id: string }>).map((e) => e.trace_id).filter((id) => !seen.has(id)))];
    expect(fresh).toHaveLength(1);
    const traceId = fresh[0] as string;
    traces.add(traceId);
    const entries = (await t.inject({ method: 'GET', url: `/api/v1/logs?trace_id=${traceId}&limit=1000&order=asc`, headers })).json().items as Entry[];
    const types = entries.map((e) => e.event_type);
    const one = (type: string) => {
      const found = entries.filter((e) => e.event_type === type);
      expect(found, `${type} in ${types.join(', ')}`).toHaveLength(1);
      return found[0] as Entry;
    };
    // Every event below the workflow carries the agent (inherited from the agent span).
    const run = one('run.failed');
    expect(entries.filter((e) => e !== run && e.agent_id !== 'support-agent').map((e) => e.event_type)).toEqual([]);
    const called = one('tool.called');
    expect(called.data).toMatchObject({ convention: 'openllmetry', tool: 'lookup_order', arguments: { order: 'A-1001' }, result: { order: 'A-1001', status: 'delivered', paid: 30, found: 1 } });
    const failed = one('tool.failed');
    expect(failed.data).toMatchObject({ tool: 'refund', arguments: { order: 'A-1001', amount: 30 }, error: 'payments service unavailable' });
    // The model calls, the one that asked for the tools first (it started first), with model and tokens.
    const calls = entries.filter((e) => e.event_type === 'llm.call');
    expect(calls).toHaveLength(2);
    const started = (e: Entry) => BigInt((e.data.otel as { start_time_unix_nano: string }).start_time_unix_nano);
    const [asking, answering] = [...calls].sort((x, y) => (started(x) < started(y) ? -1 : 1)) as [Entry, Entry];
    for (const call of [asking, answering]) expect(call.data).toMatchObject({ model: 'gpt-4.1-mini', provider: 'openai', prompt_tokens: 120, completion_tokens: 24 });
    // The lookup read the vector index: a retrieval of the order's chunk, as old as its document.
    const retrieved = one('context.retrieved');
    expect(retrieved.data).toMatchObject({ source_id: 'vector_index_retriever', query: 'A-1001', as_of: TWO_DAYS_AGO });
    expect(retrieved.data.documents).toEqual([expect.objectContaining({ document_id: 'order:A-1001', as_of: TWO_DAYS_AGO, score: expect.any(Number) })]);
    expect(retrieved.parent_span_id).toBe((called as Entry & { span_id: string }).span_id);
    const agentRun = one('agent.failed');
    // Forensics: each tool call caused by the model call before it (the spans name no tool calls),
    // the run's result by its children, and the failed run's root cause the refund tool.
    const session = await t.inject({ method: 'POST', url: '/api/v1/forensics/replays', headers, payload: { trace_id: traceId, metadata: {} } });
    const replay = `/api/v1/forensics/replays/${session.json().id}`;
    const graph = (await t.inject({ method: 'GET', url: `${replay}/causal-graph`, headers })).json();
    const byId = new Map(entries.map((e) => [e.log_id, e]));
    const edges = (graph.edges as Array<{ source: string; target: string; type: string; label: string }>).map((e) => ({ from: byId.get(e.source), to: byId.get(e.target), type: e.type, label: e.label }));
    for (const toolCall of [called, failed]) expect(edges).toContainEqual({ from: toolCall, to: asking, type: 'caused_by', label: 'requested by the model call before it' });
    expect(edges.filter((e) => e.from === agentRun && e.type === 'caused_by').length).toBeGreaterThan(0);
    expect(graph.cycles).toEqual([]);
    const rc = (await t.inject({ method: 'GET', url: `${replay}/root-cause`, headers })).json();
    expect(rc, JSON.stringify(rc)).toMatchObject({ root_cause_type: 'TOOL_ERROR', detected: true });
    expect(rc.evidence).toContain(failed.log_id);
  });
});
