// OpenLLMetry (Traceloop) over OTLP (issue 31, part 1), in its own file because Traceloop's SDK
// takes over the process's global tracer provider and context manager when initialized: the
// Traceloop Node SDK from npm, its OpenAI instrumentation patching the real OpenAI client
// against a fake OpenAI endpoint on loopback, its workflow, agent, task and tool spans, and our
// OTLP exporters (protobuf and JSON) handed to it. The same support agent as
// otlp-frameworks.test.ts: an order lookup that reads the order store, two tool calls at once
// (one fails), a model that gives up, a failed run.
//
// Found with the real SDK (0.27): withTool/withAgent never end the span of a function whose
// promise rejects (the rejection skips span.end()), so a failure thrown out of one is never
// exported at all. The recipe in docs/integrations.md, which this test follows: catch inside,
// mark the active span ERROR with the OpenTelemetry API, and return.
import type { AddressInfo } from 'node:net';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import type { SpanExporter } from '@opentelemetry/sdk-trace';
import * as traceloop from '@traceloop/node-server-sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { failHere, Switch } from './helpers/traceloop.js';
import { fakeOpenAi, modelCalls } from './helpers/fake-openai.js';

type Entry = { log_id: string; seq: number; event_type: string; agent_id: string | null; data: Record<string, unknown> };

describe('OpenLLMetry (Traceloop) over OTLP', () => {
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
    const addr = t.app.server.address() as AddressInfo;
    base = `http://127.0.0.1:${addr.port}/api/v1/otlp/v1/traces`;
    model = await fakeOpenAi();
    traceloop.initialize({ appName: 'support-api', exporter: exporters as never, disableBatch: true, instrumentModules: { openAI: OpenAI as never }, silenceInitializationMessage: true, traceloopSyncEnabled: false });
  });
  afterAll(async () => {
    await model.close();
    await t.close();
  });


  async function runAgent(): Promise<{ failed: string }> {
    const client = new OpenAI({ apiKey: 'test', baseURL: model.url });
    const tools: Record<string, (args: Record<string, unknown>) => Promise<unknown>> = {
      lookup_order: async ({ order }) => {
        // The lookup reads the order store: a Traceloop task.
        const docs = await traceloop.withTask({ name: 'orders-db' }, async () => [{ id: `order:${String(order)}` }]);
        return { order, status: 'delivered', paid: 30, found: docs.length };
      },
      refund: async () => {
        throw new Error('payments service unavailable');
      },
    };
    return traceloop.withWorkflow({ name: 'refunds' }, async () => {
      const outcome: { failed: string } = await traceloop.withAgent({ name: 'support-agent' }, async () => {
        const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Refund order A-1001' }];
        const first = await client.chat.completions.create({ model: 'gpt-4.1-mini', messages });
        const asked = first.choices[0]?.message;
        messages.push(asked as OpenAI.Chat.ChatCompletionMessageParam);
        let failed = '';
        for (const call of asked?.tool_calls ?? []) {
          if (call.type !== 'function') continue;
          const result = await traceloop.withTool({ name: call.function.name }, async (args: Record<string, unknown>) => {
            try {
              return await (tools[call.function.name] as (a: Record<string, unknown>) => Promise<unknown>)(args);
            } catch (err) {
              failed = (err as Error).message;
              return failHere(err as Error);
            }
          }, JSON.parse(call.function.arguments) as Record<string, unknown>);
          messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(result) });
        }
        await client.chat.completions.create({ model: 'gpt-4.1-mini', messages });
        if (failed) failHere(new Error(`the refund was not made: ${failed}`));
        return { failed };
      });
      // The workflow is the run: it failed too.
      if (outcome.failed) failHere(new Error(`the refund was not made: ${outcome.failed}`));
      return outcome;
    });
  }

  it.each(['protobuf', 'json'] as const)('the Traceloop SDK with its OpenAI instrumentation (OTLP %s)', async (encoding) => {
    const headers = { 'x-api-key': key };
    exporters.to = (encoding === 'json' ? new JsonTraceExporter({ url: base, headers }) : new ProtoTraceExporter({ url: base, headers })) as unknown as SpanExporter;
    const seen = new Set(traces);
    const outcome = await runAgent();
    expect(outcome.failed).toBe('payments service unavailable');
    await traceloop.forceFlush();
    await exporters.forceFlush();
    // The run's trace: the one with a run entry (the workflow, a root chain span) not seen before.
    const res = await t.inject({ method: 'GET', url: '/api/v1/logs?event_type=run.*&limit=100', headers });
    const fresh = [...new Set((res.json().items as Array<{ trace_id: string }>).map((e) => e.trace_id).filter((id) => !seen.has(id)))];
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
    // Every event below the workflow carries the agent (the model calls name it; the tools inherit it).
    expect(entries.filter((e) => e.data.otel && (e.data.otel as { name: string }).name !== 'refunds.workflow' && e.agent_id !== 'support-agent').map((e) => e.event_type)).toEqual([]);
    const called = one('tool.called');
    expect(called.data).toMatchObject({ convention: 'openllmetry', tool: 'lookup_order', arguments: { order: 'A-1001' }, result: { order: 'A-1001', status: 'delivered', paid: 30, found: 1 } });
    const failed = one('tool.failed');
    expect(failed.data).toMatchObject({ tool: 'refund', arguments: { order: 'A-1001', amount: 30 }, error: 'payments service unavailable' });
    const calls = modelCalls(entries);
    expect(calls).toHaveLength(2);
    expect(calls[0]?.data).toMatchObject({ model: 'gpt-4.1-mini', prompt_tokens: 120, completion_tokens: 24, tool_calls: [{ id: 'call-lookup', name: 'lookup_order' }, { id: 'call-refund', name: 'refund' }] });
    one('agent.failed');
    one('run.failed');
    // Forensics: each tool call caused by the model call that asked for it (by tool name: Traceloop's
    // tool spans carry no call id), and the failed run's root cause the refund tool.
    const session = await t.inject({ method: 'POST', url: '/api/v1/forensics/replays', headers, payload: { trace_id: traceId, metadata: {} } });
    const replay = `/api/v1/forensics/replays/${session.json().id}`;
    const graph = (await t.inject({ method: 'GET', url: `${replay}/causal-graph`, headers })).json();
    const byId = new Map(entries.map((e) => [e.log_id, e]));
    const edges = (graph.edges as Array<{ source: string; target: string; type: string; label: string }>).filter((e) => e.label !== 'child span').map((e) => [byId.get(e.source)?.event_type, byId.get(e.target)?.log_id, e.type, e.label]);
    for (const tool of [called, failed]) expect(edges.filter((e) => e[0] === tool.event_type && e[2] === 'caused_by')).toEqual([[tool.event_type, calls[0]?.log_id, 'caused_by', 'requested by the model call (by tool name)']]);
    expect(graph.cycles).toEqual([]);
    const rc = (await t.inject({ method: 'GET', url: `${replay}/root-cause`, headers })).json();
    expect(rc, JSON.stringify(rc)).toMatchObject({ root_cause_type: 'TOOL_ERROR', detected: true });
    expect(rc.evidence).toContain(failed.log_id);
  });
});
