// A fake OpenAI chat completions (and embeddings) endpoint on loopback, for the agent frameworks' telemetry tests
// (otlp-frameworks.test.ts, otlp-traceloop.test.ts): the real OpenAI client (and the frameworks
// built on it) talk to it over HTTP. Asked without tool results, the model asks for both of the
// support agent's tools at once; given them, it answers that it could not refund, or (with
// `refuseResults`) gives up with a 400 the client does not retry. Asked to stream (`stream: true`,
// as LlamaIndex.TS's agents always ask), it answers the same in server-sent chunks, as OpenAI does:
// the message's deltas (one tool call a chunk), then its finish reason, then the usage when `stream_options.include_usage`.
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
      if (req.url?.endsWith('/embeddings')) {
        // Embeddings (a LlamaIndex.TS vector index asks for them): the same small vector for every
        // text, as little-endian float32 in base64 when asked so (the OpenAI client asks so by default).
        const { input, encoding_format: format } = JSON.parse(body) as { input: string | string[]; encoding_format?: string };
        const vector = [0.6, 0.8, 0];
        const embedding = format === 'base64' ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector;
        const data = (Array.isArray(input) ? input : [input]).map((_, index) => ({ object: 'embedding', index, embedding }));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data, model: 'text-embedding-3-small', usage: { prompt_tokens: 8, total_tokens: 8 } }));
        return;
      }
      const asked = JSON.parse(body) as { model: string; messages: Array<{ role: string }>; stream?: boolean; stream_options?: { include_usage?: boolean } };
      const given = asked.messages.some((m) => m.role === 'tool');
      if (given && opts.refuseResults) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'the model gave up: the refund failed', type: 'invalid_request_error' } }));
        return;
      }
      const calls = TOOL_CALLS.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
      const message = given ? { role: 'assistant', content: 'I could not refund the order: the payments service is down.' } : { role: 'assistant', content: null, tool_calls: calls };
      const id = `chatcmpl-${Date.now()}`;
      const created = Math.floor(Date.now() / 1000);
      const finish = given ? 'stop' : 'tool_calls';
      const usage = { prompt_tokens: 120, completion_tokens: 24, total_tokens: 144 };
      if (asked.stream === true) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: asked.model, choices, ...extra })}\n\n`);
        // One tool call a chunk, as OpenAI streams them (and as LlamaIndex.TS reads them).
        if (!given) calls.forEach((c, index) => chunk([{ index: 0, delta: { ...(index === 0 ? { role: 'assistant', content: null } : {}), tool_calls: [{ index, ...c }] }, finish_reason: null }]));
        else chunk([{ index: 0, delta: message, finish_reason: null }]);
        chunk([{ index: 0, delta: {}, finish_reason: finish }]);
        if (asked.stream_options?.include_usage === true) chunk([], { usage });
        res.end('data: [DONE]\n\n');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id, object: 'chat.completion', created, model: asked.model, choices: [{ index: 0, message, finish_reason: finish }], usage }));
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
