// A fake OpenAI chat completions endpoint on loopback, for the agent frameworks' telemetry tests
// (otlp-frameworks.test.ts, otlp-traceloop.test.ts): the real OpenAI client (and the frameworks
// built on it) talk to it over HTTP. Asked without tool results, the model asks for both of the
// support agent's tools at once; given them, it answers that it could not refund, or (with
// `refuseResults`) gives up with a 400 the client does not retry.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** The tool calls the fake model asks for. */
export const TOOL_CALLS = [
  { id: 'call-lookup', name: 'lookup_order', arguments: JSON.stringify({ order: 'A-1001' }) },
  { id: 'call-refund', name: 'refund', arguments: JSON.stringify({ order: 'A-1001', amount: 30 }) },
];

export async function fakeOpenAi(opts: { refuseResults?: boolean } = {}): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const asked = JSON.parse(body) as { model: string; messages: Array<{ role: string }> };
      const given = asked.messages.some((m) => m.role === 'tool');
      if (given && opts.refuseResults) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'the model gave up: the refund failed', type: 'invalid_request_error' } }));
        return;
      }
      const message = given
        ? { role: 'assistant', content: 'I could not refund the order: the payments service is down.' }
        : { role: 'assistant', content: null, tool_calls: TOOL_CALLS.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: `chatcmpl-${Date.now()}`, object: 'chat.completion', created: Math.floor(Date.now() / 1000), model: asked.model, choices: [{ index: 0, message, finish_reason: given ? 'stop' : 'tool_calls' }], usage: { prompt_tokens: 120, completion_tokens: 24, total_tokens: 144 } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, close: () => new Promise((r) => server.close(() => r())) };
}

/**
 * The model calls, the one that asked for tools first: spans are appended in the order they
 * ended, and an instrumentation may end a model call's span after the next one's.
 */
export function modelCalls<E extends { event_type: string; data: Record<string, unknown> }>(entries: E[]): E[] {
  const calls = entries.filter((e) => e.event_type === 'llm.call');
  const asks = (e: E) => (Array.isArray(e.data.tool_calls) && e.data.tool_calls.length > 0 ? 0 : 1);
  return [...calls].sort((a, b) => asks(a) - asks(b));
}
