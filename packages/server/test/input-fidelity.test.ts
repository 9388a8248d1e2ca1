// The ledger stores exactly what it hashed and hashes exactly what it was sent, or refuses it
// with a 400 and stores nothing. Each case here was once accepted and changed silently (a lone
// surrogate stored as U+FFFD under a hash of the original, invalid UTF-8 replaced, duplicate keys
// last-wins, 1e400 stored as "Infinity", 2^53+1 rounded) or answered 500 (NUL on PostgreSQL).
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { numberIsExact } from '../src/http/json-body.js';
import { STORE_KINDS } from './helpers/env.js';
import { problem, startTestApp, type TestApp } from './helpers/app.js';
import { assertChainIntact, countEntries } from './helpers/ledger.js';

describe('numberIsExact', () => {
  it('accepts every literal whose canonical form is the same value, refuses the rest', () => {
    for (const ok of ['0', '-0', '1', '1.0', '1e2', '1E+2', '0.1', '-12.5e-3', '9007199254740992', '9007199254740991', '123456789012345', '1e300', '5e-324', '1.7976931348623157e308', '0.30000000000000004', '100000000000000000000'])
      expect(numberIsExact(ok), ok).toBe(true);
    for (const bad of ['1e400', '-1e400', '1e-400', '9007199254740993', '-9007199254740993', '12345678901234567891', '0.1000000000000000055511', '1.00000000000000001'])
      expect(numberIsExact(bad), bad).toBe(false);
  });
});

/** Compression bombs, built once: 1 GiB of zeros as brotli, 256 MiB as deflate. */
let built: { br: Buffer; deflate: Buffer } | undefined;
const bombs = () =>
  (built ??= {
    br: zlib.brotliCompressSync(Buffer.alloc(1024 * 1024 * 1024), { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } }),
    deflate: zlib.deflateSync(Buffer.alloc(256 * 1024 * 1024), { level: 9 }),
  });

describe.each(STORE_KINDS)('input fidelity on %s', (kind) => {
  let t: TestApp;
  let key: string;
  let companyId: string;
  beforeAll(async () => {
    t = await startTestApp(kind);
    const acct = await t.newAccount();
    companyId = acct.companyId;
    key = (await t.createKey(acct.token, 1_000_000)).key;
  });
  afterAll(() => t.close());

  const raw = (url: string, body: string | Buffer, headers: Record<string, string> = {}) =>
    t.inject({ method: 'POST', url, headers: { 'x-api-key': key, 'content-type': 'application/json', ...headers }, payload: body });

  /** Sends the body to both ingestion endpoints (as one event and inside a batch); each must refuse it and store nothing. */
  async function refusedEverywhere(eventJson: string, status: number, code: string, field?: RegExp) {
    const before = await countEntries(t.store, companyId);
    const single = problem(await raw('/api/v1/logs', eventJson), status, code);
    const batch = problem(await raw('/api/v1/logs/batch', `{"logs":[{"event_type":"ok","data":{}},${eventJson}]}`), status, code);
    if (field) {
      expect(JSON.stringify(single.errors)).toMatch(field);
      expect(JSON.stringify(batch.errors)).toMatch(/\/body\/logs\/1/);
    }
    expect(await countEntries(t.store, companyId)).toBe(before);
    return single;
  }

  it('a lone surrogate anywhere (envelope, data, key) → 400 invalid_text naming the field; the chain stays intact', async () => {
    for (const field of ['event_type', 'source', 'agent_id', 'idempotency_key']) {
      const ev = field === 'event_type' ? '{"event_type":"t\\ud800","data":{}}' : `{"event_type":"t","data":{},"${field}":"x\\udc00y"}`;
      const p = await refusedEverywhere(ev, 400, 'invalid_text', new RegExp(`/body/${field}`));
      expect(String(p.detail)).toContain('lone surrogate');
    }
    await refusedEverywhere('{"event_type":"t","data":{"a":["ok","\\ud83d"]}}', 400, 'invalid_text', /\/body\/data\/a\/1/);
    await refusedEverywhere('{"event_type":"t","data":{"k\\ud800":1}}', 400, 'invalid_text', /\/body\/data/);
    // A proper pair is text, and is stored and hashed as sent.
    const ok = await raw('/api/v1/logs', '{"event_type":"t\\ud83d\\ude00","data":{"s":"\\ud83d\\ude00"}}');
    expect(ok.statusCode).toBe(200);
    const stored = await t.inject({ method: 'GET', url: `/api/v1/logs/${ok.json().log_id}`, headers: { 'x-api-key': key } });
    expect(stored.json()).toMatchObject({ event_type: 't😀', data: { s: '😀' } });
    const verify = await t.inject({ method: 'GET', url: `/api/v1/logs/${ok.json().log_id}/verify`, headers: { 'x-api-key': key } });
    expect(verify.json()).toMatchObject({ chain_valid: true, signature_valid: true });
    await assertChainIntact(t.store, companyId);
  });

  it('U+0000 in any string → 400 invalid_text, and it never fails the valid events committed beside it', async () => {
    await refusedEverywhere('{"event_type":"t\\u0000","data":{}}', 400, 'invalid_text', /\/body\/event_type/);
    await refusedEverywhere('{"event_type":"t","data":{},"source":"\\u0000"}', 400, 'invalid_text', /\/body\/source/);
    await refusedEverywhere('{"event_type":"t","data":{"x":"a\\u0000b"}}', 400, 'invalid_text', /\/body\/data\/x/);
    // 14 clients sending valid events beside 2 sending NUL: every valid one commits.
    const before = await countEntries(t.store, companyId);
    const sends = Array.from({ length: 160 }, (_, i) =>
      i % 8 === 0 ? raw('/api/v1/logs', `{"event_type":"bad\\u0000","data":{"i":${i}}}`) : raw('/api/v1/logs', `{"event_type":"good","data":{"i":${i}}}`),
    );
    const results = await Promise.all(sends);
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(140);
    expect(results.filter((r) => r.statusCode === 400)).toHaveLength(20);
    expect(await countEntries(t.store, companyId)).toBe(before + 140);
    await assertChainIntact(t.store, companyId);
  });

  it('invalid UTF-8 bytes → 400 invalid_text; never replaced by U+FFFD', async () => {
    for (const bytes of [[0xff, 0xfe], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82]]) {
      const body = Buffer.concat([Buffer.from('{"event_type":"t","data":{"s":"'), Buffer.from(bytes), Buffer.from('"}}')]);
      const before = await countEntries(t.store, companyId);
      const p = problem(await raw('/api/v1/logs', body), 400, 'invalid_text');
      expect(String(p.detail)).toContain('not valid UTF-8');
      expect(await countEntries(t.store, companyId)).toBe(before);
    }
  });

  it('duplicate keys → 400 duplicate_key naming the key, at any depth and at the top', async () => {
    const p = await refusedEverywhere('{"event_type":"t","data":{"a":1,"a":2}}', 400, 'duplicate_key', /\/body\/data\/a/);
    expect(String(p.detail)).toContain('"a"');
    await refusedEverywhere('{"event_type":"a","event_type":"b","data":{}}', 400, 'duplicate_key', /\/body\/event_type/);
    await refusedEverywhere('{"event_type":"t","data":{"n":[{"x":1,"y":2,"x":3}]}}', 400, 'duplicate_key', /\/body\/data\/n\/0\/x/);
    // The same key spelled with an escape is the same key.
    await refusedEverywhere('{"event_type":"t","data":{"ab":1,"a\\u0062":2}}', 400, 'duplicate_key', /\/body\/data\/ab/);
    // Equal keys in different objects are fine.
    expect((await raw('/api/v1/logs', '{"event_type":"t","data":{"a":{"a":1},"b":{"a":2}}}')).statusCode).toBe(200);
  });

  it('numbers that cannot be kept exactly → 400 unrepresentable_number; exact ones are stored in canonical form', async () => {
    const p = await refusedEverywhere('{"event_type":"t","data":{},"schema_version":1e400}', 400, 'unrepresentable_number', /\/body\/schema_version/);
    expect(String(p.detail)).toContain('Infinity');
    await refusedEverywhere('{"event_type":"t","data":{"id":9007199254740993}}', 400, 'unrepresentable_number', /\/body\/data\/id/);
    await refusedEverywhere('{"event_type":"t","data":{"x":[1,1e-400]}}', 400, 'unrepresentable_number', /\/body\/data\/x\/1/);
    const ok = await raw('/api/v1/logs', '{"event_type":"t","data":{"a":1.0,"b":1e2,"c":9007199254740992,"d":-0.5e-3},"schema_version":2}');
    expect(ok.statusCode).toBe(200);
    const stored = await t.inject({ method: 'GET', url: `/api/v1/logs/${ok.json().log_id}`, headers: { 'x-api-key': key } });
    expect(stored.json()).toMatchObject({ data: { a: 1, b: 100, c: 9007199254740992, d: -0.0005 }, schema_version: '2' });
  });

  it('a charset other than UTF-8 → 415; utf-8 in any spelling is fine', async () => {
    problem(await raw('/api/v1/logs', '{"event_type":"t","data":{}}', { 'content-type': 'application/json; charset=latin1' }), 415, 'unsupported_media_type');
    problem(await raw('/api/v1/logs', '{"event_type":"t","data":{}}', { 'content-type': 'application/json; charset=utf-16' }), 415, 'unsupported_media_type');
    expect((await raw('/api/v1/logs', '{"event_type":"t","data":{}}', { 'content-type': 'application/json; charset="UTF-8"' })).statusCode).toBe(200);
  });

  it('Content-Encoding gzip, deflate and br are decoded; the limit counts decoded bytes; others → 415', async () => {
    const json = '{"event_type":"zipped","data":{"k":"v"}}';
    for (const [enc, bytes] of [['gzip', zlib.gzipSync(json)], ['deflate', zlib.deflateSync(json)], ['br', zlib.brotliCompressSync(json)]] as const) {
      const res = await raw('/api/v1/logs', bytes, { 'content-encoding': enc });
      expect(res.statusCode, res.body).toBe(200);
    }
    for (const enc of ['zstd', 'constructor', '__proto__', 'toString']) problem(await raw('/api/v1/logs', json, { 'content-encoding': enc }), 415, 'unsupported_media_type');
    problem(await raw('/api/v1/logs', json, { 'content-encoding': 'gzip, gzip' }), 415, 'unsupported_media_type');
    problem(await raw('/api/v1/logs', json, { 'content-encoding': 'gzip' }), 400, 'malformed_json');
    // A small bomb: 2 MiB of spaces compress to a few KiB, but decode past MAX_BODY_BYTES.
    const bomb = zlib.gzipSync(Buffer.concat([Buffer.from('{"event_type":"t","data":{}'), Buffer.alloc(2 * 1024 * 1024, 0x20), Buffer.from('}')]));
    expect(bomb.length).toBeLessThan(t.config.maxBodyBytes);
    problem(await raw('/api/v1/logs', bomb, { 'content-encoding': 'gzip' }), 413, 'payload_too_large');
  });

  it('a decompression bomb is refused at the limit and stops there: no CPU is spent on it after the 413, on any route', async () => {
    // 1 GiB of zeros is about 1.6 KB as brotli (and 1 MiB as gzip): the decoder must be destroyed
    // when the decoded size passes the limit, not left running (68 CPU-seconds each, once).
    const { br, deflate } = bombs();
    expect(br.length).toBeLessThan(10_000);
    const routes = ['/api/v1/auth/login', '/api/v1/logs', '/api/v1/logs/batch', '/api/v1/otlp/v1/traces'];
    for (const url of routes) {
      problem(await raw(url, br, { 'content-encoding': 'br' }), 413, 'payload_too_large');
      problem(await raw(url, deflate, { 'content-encoding': 'deflate' }), 413, 'payload_too_large');
      const otlp = await raw(url, br, { 'content-encoding': 'br', 'content-type': 'application/x-protobuf' });
      expect([413, 415]).toContain(otlp.statusCode);
    }
    // Over the next second the process is idle: a leftover decoder would keep a core busy.
    const before = process.cpuUsage();
    await new Promise((r) => setTimeout(r, 1000));
    const used = process.cpuUsage(before);
    expect((used.user + used.system) / 1000, 'CPU ms spent in the second after the 413s').toBeLessThan(400);
    // And the service still answers.
    expect((await raw('/api/v1/logs', zlib.brotliCompressSync('{"event_type":"after.bomb","data":{}}'), { 'content-encoding': 'br' })).statusCode).toBe(200);
  });

  it('refused, never taken: an upper-case log id (400, not a lookup that finds nothing), the reserved source in any letter case, a non-UTF-8 charset on OTLP', async () => {
    const id = (await raw('/api/v1/logs', '{"event_type":"t","data":{}}')).json().log_id as string;
    expect((await t.inject({ method: 'GET', url: `/api/v1/logs/${id}`, headers: { 'x-api-key': key } })).statusCode).toBe(200);
    for (const path of ['', '/verify', '/proof']) problem(await t.inject({ method: 'GET', url: `/api/v1/logs/${id.toUpperCase()}${path}`, headers: { 'x-api-key': key } }), 400, 'validation_failed');
    for (const source of ['AUDIT-LEDGER/admin', 'Audit-Ledger/hitl']) await refusedEverywhere(JSON.stringify({ event_type: 't', data: {}, source }), 400, 'validation_failed', /\/source"/);
    const otlp = { resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'AUDIT-LEDGER/admin' } }] }, scopeSpans: [{ spans: [{ traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174', name: 'x', startTimeUnixNano: '1', endTimeUnixNano: '2' }] }] }] };
    const before = await countEntries(t.store, companyId);
    const res = await raw('/api/v1/otlp/v1/traces', JSON.stringify(otlp));
    expect(res.json().partialSuccess?.rejectedSpans, res.body).toBe('1');
    problem(await raw('/api/v1/otlp/v1/traces', JSON.stringify(otlp), { 'content-type': 'application/json; charset=latin1' }), 415, 'unsupported_media_type');
    expect(await countEntries(t.store, companyId)).toBe(before);
  });

  it('the URL gets the same rule: %00 and percent-encoding that is not UTF-8 → 400 invalid_text, never a 500', async () => {
    for (const url of ['/api/v1/logs?event_type=%00', '/api/v1/logs?source=a%00b', '/api/v1/logs?event_type=%ED%A0%80', '/api/v1/logs?event_type=%FF', '/api/v1/exports/logs?event_type=%00', '/api/v1/logs/%00', '/api/v1/forensics/replays?trace_id=%C0%AF']) {
      problem(await t.inject({ method: 'GET', url, headers: { 'x-api-key': key } }), 400, 'invalid_text');
    }
    // Well-formed percent-encoding, non-ASCII included, is fine.
    expect((await t.inject({ method: 'GET', url: '/api/v1/logs?event_type=caf%C3%A9%20%F0%9F%98%80', headers: { 'x-api-key': key } })).statusCode).toBe(200);
  });

  it('prototype keys are still refused, with the place named', async () => {
    await refusedEverywhere('{"event_type":"t","data":{"__proto__":{"x":1}}}', 400, 'malformed_json', /\/body\/data\/__proto__/);
    await refusedEverywhere('{"event_type":"t","data":{"constructor":{"prototype":{}}}}', 400, 'malformed_json');
  });
});
