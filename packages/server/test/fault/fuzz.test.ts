// Property-based fuzzing of both ingestion endpoints and the body parser (fast-check): arbitrary
// JSON values, strings with lone surrogates, NUL and non-BMP characters, numbers at the edges of
// a double, duplicate keys, deep nesting, wrong types in every field, invalid UTF-8 and random
// byte corruption of valid bodies, single and batched. Invariants, for every request:
// - never a 5xx, never a stack trace, every error is problem+json with a code;
// - a 4xx stores nothing;
// - a 200 stores exactly what was sent (event_type, data and the extra fields), and the chain
//   (hashes recomputed from what is stored, links, signatures) verifies after the run.
// `npm run test:all`: 600 requests per store. `npm run chaos`: 10,000.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson, ENVELOPE_FIELDS } from '@audit-ledger/core';
import { STORE_KINDS } from '../helpers/env.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { assertChainIntact, countEntries } from '../helpers/ledger.js';
import { CHAOS, scale } from './harness.js';
import { JsonBodyError, parseJsonBody } from '../../src/http/json-body.js';

const RUNS = scale(600, 10_000);
/** `npm run test:all` replays fixed seeds (a failure there is reproducible); chaos explores new ones (fast-check prints the seed of a failure). */
const SEED = CHAOS ? {} : { seed: 20261123 };
const NASTY = ['\ud800', '\udfff', '\u0000', '\ud83d\ude00', '\u2028', '"', '\\', 'é', '\u001f'];
const EDGE_NUMBERS = ['1e400', '-1e400', '1e-400', '9007199254740993', '9007199254740992', '-0', '0.1', '1.0', '1e2', '123456789012345678901234567890', '5e-324', '1.7976931348623157e308', '0.30000000000000004'];

const nastyString = fc
  .tuple(fc.string({ maxLength: 12 }), fc.option(fc.constantFrom(...NASTY), { nil: undefined }), fc.string({ maxLength: 6 }))
  .map(([a, n, b]) => a + (n ?? '') + b);
const wrongType = fc.oneof(fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 5 }), fc.string(), { maxKeys: 2 }));
const jsonish = fc.jsonValue({ maxDepth: 4 });

/** Mostly a good value; now and then a nasty or wrongly typed one. */
const mostly = <T>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<unknown> = wrongType) => fc.oneof({ weight: 30, arbitrary: good as fc.Arbitrary<unknown> }, { weight: 1, arbitrary: bad });

/** One event: mostly well formed, with any field sometimes of the wrong type or nasty. */
const event = fc
  .record(
    {
      event_type: mostly(fc.string({ minLength: 1, maxLength: 40 }).filter((s) => /\S/.test(s)), fc.oneof(nastyString, wrongType)),
      data: mostly(fc.dictionary(fc.oneof({ weight: 10, arbitrary: fc.string({ maxLength: 8 }) }, { weight: 1, arbitrary: nastyString }), fc.oneof({ weight: 10, arbitrary: jsonish }, { weight: 1, arbitrary: nastyString }), { maxKeys: 6 })),
      source: mostly(fc.string({ minLength: 1, maxLength: 20 }), nastyString),
      trace_id: mostly(fc.uuid(), fc.string()),
      timestamp: mostly(fc.date({ noInvalidDate: true, min: new Date(0), max: new Date(4e12) }).map((d) => d.toISOString()), fc.string()),
      agent_id: mostly(fc.string({ minLength: 1, maxLength: 20 }), nastyString),
      idempotency_key: mostly(fc.string({ minLength: 1, maxLength: 12 })),
      schema_version: mostly(fc.oneof(fc.string({ minLength: 1, maxLength: 8 }), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }))),
      meta: mostly(jsonish, nastyString),
    },
    { requiredKeys: ['event_type', 'data'] },
  )
  .map((e) => e as Record<string, unknown>);

/** Text edits no JSON.stringify would make: duplicate keys, edge numbers, deep nesting. */
const textEdit = fc.oneof(
  { weight: 12, arbitrary: fc.constant((t: string) => t) },
  fc.constant((t: string) => t.replace('{', '{"event_type":"dup",')),
  fc.constant((t: string) => t.replace(/\{"([^"]+)":/, '{"$1":1,"$1":')),
  fc.constantFrom(...EDGE_NUMBERS).map((n) => (t: string) => t.replace(/\{/, `{"n":${n},`)),
  fc.integer({ min: 30, max: 200 }).map((d) => (t: string) => t.replace('{', `{"deep":${'['.repeat(d)}${']'.repeat(d)},`)),
);

/** Byte edits: invalid UTF-8, flipped, inserted and deleted bytes. */
const byteEdit = fc.oneof(
  { weight: 24, arbitrary: fc.constant((b: Buffer) => b) },
  { weight: 1, arbitrary: fc.tuple(fc.nat(), fc.constantFrom([0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0x80])).map(([at, bytes]) => (b: Buffer) => Buffer.concat([b.subarray(0, at % (b.length + 1)), Buffer.from(bytes), b.subarray(at % (b.length + 1))])) },
  { weight: 1, arbitrary: fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })).map(([at, v]) => (b: Buffer) => (b.length ? Buffer.from(b.map((x, i) => (i === at % b.length ? v : x))) : b)) },
  { weight: 1, arbitrary: fc.nat().map((at) => (b: Buffer) => Buffer.concat([b.subarray(0, at % (b.length + 1)), b.subarray((at % (b.length + 1)) + 1)])) },
);

const request = fc.record({ batch: fc.boolean(), events: fc.array(event, { minLength: 1, maxLength: 4 }), text: textEdit, bytes: byteEdit });

describe('the body parser, by itself', () => {
  it('reads back every well-formed JSON value exactly (well-formed Unicode, no NUL, exact numbers)', () => {
    const ok = (v: unknown): boolean => {
      const text = JSON.stringify(v);
      // Refused on purpose: NUL, lone surrogates, and prototype keys (json-body.ts).
      return !/\\u0000|\\ud[89a-f]|"__proto__":|"prototype":/i.test(text);
    };
    fc.assert(
      fc.property(fc.jsonValue().filter(ok), (v) => {
        expect(parseJsonBody(Buffer.from(JSON.stringify(v), 'utf8'))).toEqual(JSON.parse(JSON.stringify(v)));
      }),
      { numRuns: scale(2000, 50_000), ...SEED },
    );
  });

  it('on any bytes, either parses or throws a JsonBodyError naming a place, never anything else', () => {
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 64 }), fc.jsonValue().map((v) => new TextEncoder().encode(JSON.stringify(v)))), fc.nat(), fc.integer({ min: 0, max: 255 }), (bytes, at, v) => {
        const b = Buffer.from(bytes);
        if (b.length > 0) b[at % b.length] = v;
        try {
          parseJsonBody(b);
        } catch (err) {
          expect(err).toBeInstanceOf(JsonBodyError);
          expect((err as JsonBodyError).pointer === '' || (err as JsonBodyError).pointer.startsWith('/')).toBe(true);
        }
      }),
      { numRuns: scale(2000, 50_000), ...SEED },
    );
  });
});

describe.each(STORE_KINDS)(`fuzzing ingestion with ${RUNS} generated requests (%s)`, (kind) => {
  let t: TestApp;
  let key: string;
  let companyId: string;
  beforeAll(async () => {
    t = await startTestApp(kind, { env: { CHECKPOINT_INTERVAL_MS: '1000' } });
    const acct = await t.newAccount();
    companyId = acct.companyId;
    key = (await t.createKey(acct.token, 1_000_000)).key;
  });
  afterAll(() => t.close());

  it('never answers 5xx, stores nothing on a 4xx, and stores exactly what was sent on a 200', async () => {
    const seen = new Map<string, { event_type: unknown; data: string; extra: string[] }>();
    const tally = new Map<number, number>();
    let stored = await countEntries(t.store, companyId);
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const bodyValue = r.batch ? { logs: r.events } : r.events[0];
        const text = r.text(JSON.stringify(bodyValue));
        const bytes = r.bytes(Buffer.from(text, 'utf8'));
        const res = await t.inject({
          method: 'POST',
          url: r.batch ? '/api/v1/logs/batch' : '/api/v1/logs',
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          payload: bytes,
        });
        tally.set(res.statusCode, (tally.get(res.statusCode) ?? 0) + 1);
        expect(res.statusCode, res.body).toBeLessThan(500);
        expect(res.body).not.toMatch(/\bat .+:\d+:\d+/);
        const now = await countEntries(t.store, companyId);
        if (res.statusCode !== 200) {
          expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
          expect(typeof res.json().code).toBe('string');
          expect(now, `a ${res.statusCode} stored something`).toBe(stored);
          return;
        }
        // What the service parsed is what JSON.parse reads from the same bytes (it refuses the rest).
        const sent = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
        const items = (r.batch ? (sent.logs as Array<Record<string, unknown>>) : [sent]) ?? [];
        const ids: string[] = r.batch ? res.json().log_ids : [res.json().log_id];
        expect(ids).toHaveLength(items.length);
        let fresh = 0;
        for (const [i, id] of ids.entries()) {
          const item = items[i] as Record<string, unknown>;
          const mine = { event_type: item.event_type, data: canonicalJson(item.data ?? item.payload), extra: Object.keys(item).filter((k) => !['event_type', 'data', 'payload', 'event_id', ...ENVELOPE_FIELDS].includes(k)).sort() };
          const before = seen.get(id);
          if (before) {
            // An idempotent repeat: the same event as the first time.
            expect(mine.event_type).toBe(before.event_type);
            expect(mine.data).toBe(before.data);
            continue;
          }
          fresh++;
          seen.set(id, mine);
          const entry = (await t.inject({ method: 'GET', url: `/api/v1/logs/${id}`, headers: { 'x-api-key': key } })).json();
          expect(entry.event_type).toBe(mine.event_type);
          expect(canonicalJson(entry.data)).toBe(mine.data);
          expect(Object.keys(entry.extra ?? {}).sort()).toEqual(mine.extra);
          for (const f of ENVELOPE_FIELDS) if (item[f] !== undefined && item[f] !== null) expect(entry[f]).toBe(String(item[f]));
        }
        expect(now).toBe(stored + fresh);
        stored = now;
      }),
      { numRuns: RUNS, ...SEED, endOnFailure: true },
    );
    expect(await assertChainIntact(t.store, companyId)).toBe(stored);
    // Query strings reach SQL filters: arbitrary text, encoded or raw, never gets a 5xx.
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('event_type', 'source', 'trace_id', 'from', 'to', 'limit', 'cursor', 'order'), fc.oneof(nastyString, fc.string()), fc.boolean(), async (name, value, encode) => {
        const v = encode ? encodeURIComponent(value.replace(/[\ud800-\udfff]/g, '')) : value.replace(/[^\x21-\x7e]/g, '%25');
        const res = await t.inject({ method: 'GET', url: `/api/v1/logs?${name}=${v}`, headers: { 'x-api-key': key } });
        expect(res.statusCode, res.body).toBeLessThan(500);
      }),
      { numRuns: Math.ceil(RUNS / 4), ...SEED },
    );
    console.log(`fuzz suite (${kind}): ${RUNS} requests, answers ${JSON.stringify(Object.fromEntries([...tally].sort()))}, 0 5xx; ${stored} entries stored, chain intact`);
  }, 900_000);
});
