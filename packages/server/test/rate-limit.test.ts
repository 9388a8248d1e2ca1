// Per-key rate limits: headers, 429 past the budget, the window reset, and one budget
// shared through Redis by two app instances.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { RedisCounterStore } from '../src/ratelimit/counter.js';
import type { Store } from '../src/store/store.js';
import { SKIP_SERVERS, STORE_KINDS, TEST_REDIS_URL } from './helpers/env.js';
import { problem, startTestApp, type TestApp } from './helpers/app.js';

const me = (t: Pick<TestApp, 'inject'>, key: string) => t.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { 'x-api-key': key } });

describe('rate limit in memory', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite');
  });
  afterAll(() => t.close());

  it('sends RateLimit headers, answers 429 with Retry-After past the limit, and resets after the window', async () => {
    const acct = await t.newAccount();
    const { key } = await t.createKey(acct.token, 3);
    for (let i = 1; i <= 3; i++) {
      const res = await me(t, key);
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-limit']).toBe('3');
      expect(res.headers['ratelimit-remaining']).toBe(String(3 - i));
      expect(res.headers['ratelimit-reset']).toBe('60');
    }
    t.clock.advance(15_000);
    const limited = await me(t, key);
    const body = problem(limited, 429, 'rate_limited');
    expect(body.detail).toContain('3 requests per minute');
    expect(limited.headers['retry-after']).toBe('45');
    expect(limited.headers['ratelimit-limit']).toBe('3');
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    expect(limited.headers['ratelimit-reset']).toBe('45');

    // Another company's key has its own budget.
    const other = await t.newAccount();
    expect((await me(t, (await t.createKey(other.token, 3)).key)).statusCode).toBe(200);

    t.clock.advance(45_000);
    const again = await me(t, key);
    expect(again.statusCode).toBe(200);
    expect(again.headers['ratelimit-remaining']).toBe('2');
  });

  it('applies to API keys only, never to user bearer tokens', async () => {
    const acct = await t.newAccount();
    const { key } = await t.createKey(acct.token, 1);
    expect((await me(t, key)).statusCode).toBe(200);
    problem(await me(t, key), 429, 'rate_limited');
    for (let i = 0; i < 5; i++) {
      const res = await t.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { authorization: `Bearer ${acct.token}` } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-limit']).toBeUndefined();
    }
  });
});

describe.skipIf(SKIP_SERVERS).each(STORE_KINDS)('rate limit shared through Redis (%s)', (kind) => {
  let first: TestApp;
  let second: Awaited<ReturnType<typeof buildApp>>;
  let secondStore: Store;
  const prefix = `audit-ledger-test:${randomBytes(6).toString('hex')}:`;
  const redisA = new Redis(TEST_REDIS_URL);
  const redisB = new Redis(TEST_REDIS_URL);

  beforeAll(async () => {
    first = await startTestApp(kind, { counters: new RedisCounterStore({ redis: redisA, prefix }) });
    // A second instance: its own store connection and Redis client, the same database and Redis.
    secondStore = first.db.open();
    second = await buildApp({ config: first.config, store: secondStore, counters: new RedisCounterStore({ redis: redisB, prefix }), logger: false });
  });
  afterAll(async () => {
    await second.close();
    await secondStore.close();
    await first.close(); // quits redisA
    const keys = await redisB.keys(`${prefix}*`);
    if (keys.length) await redisB.del(...keys);
    redisB.disconnect();
  });

  it('gives two instances one budget', async () => {
    const acct = await first.newAccount();
    const { key } = await first.createKey(acct.token, 5);
    const instances = [first, { inject: second.inject.bind(second) }];
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await me(instances[i % 2]!, key)).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    const last = await me(instances[1]!, key);
    problem(last, 429, 'rate_limited');
    const retry = Number(last.headers['retry-after']);
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(60);
  });

  it('counts exactly under concurrent requests from both instances', async () => {
    const acct = await first.newAccount();
    const { key } = await first.createKey(acct.token, 20);
    const instances = [first, { inject: second.inject.bind(second) }];
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => me(instances[i % 2]!, key)));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(20);
    expect(results.filter((r) => r.statusCode === 429)).toHaveLength(20);
  });
});
