// The OTLP mapping's cost (issue 31): spans of an agent run as the AI SDK 7's OpenTelemetry
// integration emits them (an agent span, two steps, two model calls with their messages, two
// tool calls), 512 to a request as the batch processor sends them, mapped to ledger events by
// map.ts (conventions read, ancestors' agent inherited, each event's idempotency key hashed).
// Pure CPU on one core: no decoding, no store. `BENCH_ONLY=otlp npm run bench`.
import { randomBytes } from 'node:crypto';
import type { KeyValue, ResourceGroup, Span } from '../src/otlp/model.js';
import { mapSpans } from '../src/otlp/map.js';

const kv = (o: Record<string, string | number>): KeyValue[] => Object.entries(o).map(([key, value]) => ({ key, value: typeof value === 'number' ? BigInt(value) : value }));
const hex = (n: number) => randomBytes(n).toString('hex');
const messages = JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: `Refund order A-1001, ${'please '.repeat(40)}` }] }]);
const output = JSON.stringify([{ role: 'assistant', parts: [{ type: 'tool_call', id: 'call-1', name: 'lookup_order', arguments: { order: 'A-1001' } }, { type: 'tool_call', id: 'call-2', name: 'refund', arguments: { order: 'A-1001', amount: 30 } }] }]);

/** One run: 7 spans, children before their parents (as they end). */
function run(t0: bigint): Span[] {
  const traceId = hex(16);
  const root = hex(8);
  const steps = [hex(8), hex(8)];
  const span = (name: string, parent: string, attrs: Record<string, string | number>, at: number, id = hex(8)): Span => ({
    traceId, spanId: id, traceState: '', parentSpanId: parent, flags: 1, name, kind: 1, startTimeUnixNano: t0 + BigInt(at) * 1_000_000n, endTimeUnixNano: t0 + BigInt(at + 5) * 1_000_000n,
    attributes: kv(attrs), droppedAttributesCount: 0, events: [], droppedEventsCount: 0, links: [], droppedLinksCount: 0, status: { code: 0, message: '' },
  });
  const chat = { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt-4.1-mini', 'gen_ai.response.model': 'gpt-4.1-mini', 'gen_ai.usage.input_tokens': 120, 'gen_ai.usage.output_tokens': 24, 'gen_ai.response.finish_reasons': 'tool-calls', 'gen_ai.input.messages': messages, 'gen_ai.output.messages': output };
  return [
    span('chat gpt-4.1-mini', steps[0] as string, chat, 1),
    span('execute_tool lookup_order', steps[0] as string, { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup_order', 'gen_ai.tool.call.id': 'call-1', 'gen_ai.tool.call.arguments': '{"order":"A-1001"}', 'gen_ai.tool.call.result': '{"status":"delivered","paid":30}' }, 7),
    span('execute_tool refund', steps[0] as string, { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'refund', 'gen_ai.tool.call.id': 'call-2', 'gen_ai.tool.call.arguments': '{"order":"A-1001","amount":30}', 'gen_ai.tool.call.result': '{"refunded":30}' }, 7),
    span('step 1', root, { 'gen_ai.operation.name': 'agent_step' }, 0, steps[0]),
    span('chat gpt-4.1-mini', steps[1] as string, { ...chat, 'gen_ai.response.finish_reasons': 'stop' }, 14),
    span('step 2', root, { 'gen_ai.operation.name': 'agent_step' }, 13, steps[1]),
    span('invoke_agent support-agent', '', { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'support-agent', 'gen_ai.request.model': 'gpt-4.1-mini' }, 0, root),
  ];
}

export interface OtlpBench {
  spansPerRequest: number;
  /** Microseconds of CPU per span mapped (median of the timed rounds). */
  usPerSpan: number;
  spansPerSecond: number;
}

export function otlpMappingCost(rounds = 40): OtlpBench {
  const t0 = BigInt(Date.now()) * 1_000_000n;
  const request = (): Array<ResourceGroup<Span>> => {
    const spans: Span[] = [];
    while (spans.length < 511) spans.push(...run(t0));
    return [{ resource: kv({ 'service.name': 'support-api' }), schemaUrl: '', scopes: [{ scope: { name: 'ai', version: '7', attributes: [] }, schemaUrl: '', items: spans }] }];
  };
  const times: number[] = [];
  let n = 0;
  for (let i = 0; i < rounds + 5; i++) {
    const groups = request();
    n = groups[0]?.scopes[0]?.items.length ?? 0;
    const start = process.cpuUsage();
    mapSpans(groups);
    const used = process.cpuUsage(start);
    if (i >= 5) times.push((used.user + used.system) / n);
  }
  times.sort((a, b) => a - b);
  const usPerSpan = times[Math.floor(times.length / 2)] as number;
  return { spansPerRequest: n, usPerSpan, spansPerSecond: 1e6 / usPerSpan };
}

export const otlpLine = (b: OtlpBench) => `OTLP mapping, ${b.spansPerRequest} GenAI spans a request: ${b.usPerSpan.toFixed(1)} µs of CPU per span (median of the rounds), ${Math.round(b.spansPerSecond).toLocaleString('en-US')} spans/s on one core`;
