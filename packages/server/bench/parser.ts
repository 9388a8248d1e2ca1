// Bench part for the strict body parser (src/http/json-body.ts): what its checks (UTF-8, lone
// surrogates, NUL, duplicate keys, exact numbers) cost over a bare JSON.parse of the same bytes,
// on the bench's single-event body and on a batch of 1000 of them. Same process, interleaved.
import { randomUUID } from 'node:crypto';
import { parseJsonBody } from '../src/http/json-body.js';

function microseconds(n: number, f: () => void): number {
  for (let i = 0; i < Math.ceil(n / 10); i++) f();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) f();
  return Number(process.hrtime.bigint() - t0) / 1000 / n;
}

export function parserCost(): { single: { strict: number; bare: number; bytes: number }; batch: { strict: number; bare: number; bytes: number } } {
  const event = (i: number) => ({ event_type: 'tool.called', source: 'bench-agent', trace_id: randomUUID(), data: { tool: 'search', query: 'q'.repeat(330), k: 5, user: `u-${i}`, ok: true, score: i / 7 } });
  const single = Buffer.from(JSON.stringify(event(0)));
  const batch = Buffer.from(JSON.stringify({ logs: Array.from({ length: 1000 }, (_, i) => event(i)) }));
  const best = (f: () => number) => Math.min(f(), f(), f());
  return {
    single: { strict: best(() => microseconds(100_000, () => parseJsonBody(single))), bare: best(() => microseconds(100_000, () => JSON.parse(single.toString('utf8')))), bytes: single.length },
    batch: { strict: best(() => microseconds(200, () => parseJsonBody(batch))), bare: best(() => microseconds(200, () => JSON.parse(batch.toString('utf8')))), bytes: batch.length },
  };
}

export function parserLine(c: ReturnType<typeof parserCost>): string {
  return (
    `single event (${c.single.bytes} B) ${c.single.strict.toFixed(2)} µs vs JSON.parse ${c.single.bare.toFixed(2)} µs; ` +
    `batch of 1000 (${(c.batch.bytes / 1024).toFixed(0)} KiB) ${(c.batch.strict / 1000).toFixed(2)} ms vs ${(c.batch.bare / 1000).toFixed(2)} ms`
  );
}
