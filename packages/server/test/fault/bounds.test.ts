// Every input is bounded in CPU and memory, during and after the answer (issue 26):
// - compressed bodies on every route that takes one: bombs of every codec, truncated and corrupted
//   streams, well-formed ones (fast-check picks route, codec and body);
// - OTLP requests with resources of every size up to the body limit, with up to 400 spans: the
//   resource and scope are stored once (an otel.resource entry), never copied into each span;
// - answers from the parties the service calls: witnesses (any status, bodies up to 128 MB) and
//   webhook receivers (a 200 with 128 MB).
// Invariants: never a 5xx; a bomb is a 413; nothing refused is stored and no stored entry holds more
// than MAX_ENTRY_BYTES; after the run the process is idle (CPU in the next half second) and its
// memory grew by a bounded amount; a hostile answer is cut off, not read.
// `npm run test:all`: a short run on SQLite with fixed seeds. `npm run chaos`: long runs on both stores.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { STORE_KINDS } from '../helpers/env.js';
import { ingestBatch, submitterTo } from '../helpers/ledger.js';
import { CHAOS, scale } from './harness.js';

const SEED = CHAOS ? {} : { seed: 20261125 };
const KINDS = CHAOS ? STORE_KINDS : (['sqlite'] as const);
const MiB = 1024 * 1024;

/** CPU (ms, every thread) the process spends over the next `ms` while the test does nothing. */
async function idleCpuMs(ms = 500): Promise<number> {
  const before = process.cpuUsage();
  await new Promise((r) => setTimeout(r, ms));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

const rssMiB = () => process.memoryUsage().rss / MiB;

/** A loopback server that answers every request with `status` and `bytes` of body, streamed; it records how much it got to write. */
async function hostile(answer: () => { status: number; bytes: number; type: string }) {
  const log: Array<{ bytes: number; wrote: number }> = [];
  const server = http.createServer((req, res) => {
    req.resume();
    const a = answer();
    const entry = { bytes: a.bytes, wrote: 0 };
    log.push(entry);
    res.writeHead(a.status, { 'content-type': a.type });
    const chunk = Buffer.alloc(Math.min(MiB, Math.max(1, a.bytes)), 0x41);
    const pump = () => {
      while (entry.wrote < a.bytes) {
        const n = Math.min(chunk.length, a.bytes - entry.wrote);
        entry.wrote += n;
        if (!res.write(chunk.subarray(0, n))) return void res.once('drain', pump);
      }
      res.end();
    };
    res.on('error', () => {});
    pump();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    log,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

describe.each(KINDS)('bounded inputs on %s', (kind) => {
  let t: TestApp;
  let key: string;
  let companyId: string;
  beforeAll(async () => {
    t = await startTestApp(kind, { env: { CHECKPOINT_INTERVAL_MS: '0', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_MS: '2000' } });
    const acct = await t.newAccount();
    companyId = acct.companyId;
    key = (await t.createKey(acct.token, 10_000_000)).key;
  });
  afterAll(() => t.close());

  it('compressed bodies on every route: bombs answer 413, broken streams 400, good ones are read; afterwards the process is idle', async () => {
    const CODECS = {
      gzip: (b: Buffer) => zlib.gzipSync(b, { level: 9 }),
      deflate: (b: Buffer) => zlib.deflateSync(b, { level: 9 }),
      br: (b: Buffer) => zlib.brotliCompressSync(b, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } }),
    } as const;
    const bombs = new Map<string, Buffer>();
    const bomb = (codec: keyof typeof CODECS, mib: number) => {
      const id = `${codec}:${mib}`;
      if (!bombs.has(id)) bombs.set(id, CODECS[codec](Buffer.alloc(mib * MiB, 0x20)));
      return bombs.get(id) as Buffer;
    };
    const routes = ['/api/v1/auth/login', '/api/v1/logs', '/api/v1/logs/batch', '/api/v1/otlp/v1/traces'];
    const rssBefore = rssMiB();
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.constantFrom(...(Object.keys(CODECS) as Array<keyof typeof CODECS>)),
        fc.oneof(
          fc.record({ kind: fc.constant('bomb' as const), mib: fc.constantFrom(2, 16, 64) }),
          fc.record({ kind: fc.constant('corrupt' as const), at: fc.nat(), cut: fc.boolean() }),
          fc.record({ kind: fc.constant('good' as const), n: fc.integer({ min: 1, max: 40 }) }),
        ),
        async (route, codec, body) => {
          const event = { event_type: 'bounded.check', data: { note: 'x'.repeat(200) } };
          const plain = Buffer.from(JSON.stringify(route.endsWith('/batch') ? { logs: Array.from({ length: body.kind === 'good' ? body.n : 3 }, () => event) } : event));
          let bytes: Buffer;
          if (body.kind === 'bomb') bytes = bomb(codec, body.mib);
          else if (body.kind === 'good') bytes = CODECS[codec](plain);
          else {
            const good = CODECS[codec](plain);
            bytes = Buffer.from(good);
            const i = body.at % bytes.length;
            if (body.cut) bytes = bytes.subarray(0, i);
            else bytes[i] = (bytes[i] as number) ^ 0x5a;
          }
          const res = await t.inject({ method: 'POST', url: route, headers: { 'x-api-key': key, 'content-type': 'application/json', 'content-encoding': codec }, payload: bytes });
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          expect(res.statusCode, res.body.slice(0, 300)).toBeLessThan(500);
          if (body.kind === 'bomb') expect(res.statusCode).toBe(413);
        },
      ),
      { numRuns: scale(40, 400), ...SEED },
    );
    expect(await idleCpuMs(), 'CPU ms in the half second after the run').toBeLessThan(250);
    expect(rssMiB() - rssBefore, `RSS growth (statuses ${JSON.stringify([...statuses])})`).toBeLessThan(256);
  }, 600_000);

  it('OTLP resources of every size up to the body limit: stored once, refused whole when resource and scope pass MAX_ENTRY_BYTES, and no entry stored holds more', async () => {
    const rssBefore = rssMiB();
    const cap = t.config.maxEntryBytes;
    const content = async (resources: boolean) => {
      const r = await t.store.db
        .selectFrom('log_entries')
        .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.sum<number>(eb.fn('length', ['data'])).as('bytes')])
        .where('company_id', '=', companyId)
        .where('event_type', resources ? '=' : '!=', 'otel.resource')
        .executeTakeFirstOrThrow();
      return { n: Number(r.n), bytes: Number(r.bytes ?? 0) };
    };
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 900 }), fc.integer({ min: 1, max: 400 }), async (resourceKiB, spans) => {
        const [spansBefore, resourcesBefore] = [await content(false), await content(true)];
        const traceId = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('hex');
        const body = {
          resourceSpans: [
            {
              resource: { attributes: [{ key: 'service.name', value: { stringValue: 'agent' } }, { key: 'blob', value: { stringValue: 'r'.repeat(resourceKiB * 1024) } }] },
              scopeSpans: [{ spans: Array.from({ length: spans }, (_, i) => ({ traceId, spanId: (i + 1).toString(16).padStart(16, '0'), name: `s${i}`, startTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(i)), endTimeUnixNano: String(1_700_000_000_000_000_001n + BigInt(i)) })) }],
            },
          ],
        };
        const res = await t.inject({ method: 'POST', url: '/api/v1/otlp/v1/traces', headers: { 'x-api-key': key, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
        expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
        const rejected = Number(res.json().partialSuccess?.rejectedSpans ?? 0);
        const [spansAfter, resourcesAfter] = [await content(false), await content(true)];
        const stored = spansAfter.n - spansBefore.n;
        expect(stored + rejected).toBe(spans);
        if (resourceKiB * 1024 > cap) expect(stored).toBe(0);
        // At most one copy of the resource (none when this size was seen before), and no span carries it.
        expect(resourcesAfter.n - resourcesBefore.n).toBeLessThanOrEqual(1);
        expect(spansAfter.bytes - spansBefore.bytes).toBeLessThanOrEqual(stored * 2048);
      }),
      { numRuns: scale(6, 60), ...SEED },
    );
    // No entry of the company holds more content than the cap.
    const biggest = await t.store.db
      .selectFrom('log_entries')
      .select((eb) => eb.fn.max(eb.fn('length', ['data'])).as('n'))
      .where('company_id', '=', companyId)
      .executeTakeFirst();
    expect(Number(biggest?.n ?? 0)).toBeLessThanOrEqual(cap);
    expect(await idleCpuMs()).toBeLessThan(250);
    expect(rssMiB() - rssBefore).toBeLessThan(512);
  }, 600_000);

  it('witnesses answering anything (any status, up to 128 MB): the service reads at most 64 KiB of each and goes on', async () => {
    const sizes = [0, 1024, 64 * 1024 + 1, 16 * MiB, 128 * MiB];
    const statuses = [200, 403, 409, 422, 500];
    let n = 0;
    const w = await hostile(() => ({ status: statuses[n % statuses.length] as number, bytes: sizes[Math.floor(n++ / statuses.length) % sizes.length] as number, type: n % 2 ? 'text/plain' : 'text/x.tlog.size' }));
    const rssBefore = rssMiB();
    try {
      const submitter = submitterTo(t, w.url, 'hostile.example/w');
      for (let round = 0; round < scale(10, 50); round++) {
        await ingestBatch(t, key, [{ event_type: 'round', data: { round } }]);
        await submitter.pass();
      }
      for (const a of w.log.filter((x) => x.bytes > 64 * 1024)) expect(a.wrote, `an answer of ${a.bytes} bytes`).toBeLessThan(32 * MiB);
      expect(w.log.length).toBeGreaterThan(0);
    } finally {
      await w.close();
    }
    expect(rssMiB() - rssBefore).toBeLessThan(128);
  }, 600_000);

  it('a webhook receiver answering 200 with 128 MB: the delivery reads none of it', async () => {
    const rx = await hostile(() => ({ status: 200, bytes: 128 * MiB, type: 'application/json' }));
    const rssBefore = rssMiB();
    try {
      const acct = await t.newAccount();
      const admin = { authorization: `Bearer ${acct.token}` };
      const created = await t.inject({ method: 'POST', url: '/api/v1/webhooks/endpoints', headers: admin, payload: { url: rx.url, event_types: ['hitl.rejected'] } });
      expect(created.statusCode, created.body).toBe(201);
      for (let i = 0; i < scale(3, 20); i++) {
        expect((await t.inject({ method: 'POST', url: '/api/v1/hitl/reject', headers: admin, payload: { reviewer: 'r@example.com', rejection_reason: `no ${i}` } })).statusCode).toBe(201);
      }
      await vi.waitFor(() => expect(rx.log.length).toBeGreaterThanOrEqual(scale(3, 20)), { timeout: 60_000, interval: 50 });
      for (const a of rx.log) expect(a.wrote).toBeLessThan(32 * MiB);
    } finally {
      await rx.close();
    }
    expect(rssMiB() - rssBefore).toBeLessThan(128);
  }, 600_000);
});
