import path from 'node:path';
// Test harness: the real app over a real store, driven through fastify.inject().
import { randomBytes, randomUUID } from 'node:crypto';
import type { FastifyBaseLogger, FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import pino from 'pino';
import { createUser } from '../../src/users/accounts.js';
import { API_KEY_PREFIX, hashSecret, KEY_PREFIX_LENGTH, newSecret } from '../../src/auth/secrets.js';
import { buildApp } from '../../src/app.js';
import { type Config, loadConfig } from '../../src/kernel/config.js';
import { type CounterStore, MemoryCounterStore } from '../../src/ratelimit/counter.js';
import type { Store } from '../../src/store/store.js';
import type { Resolver } from '../../src/egress/address-policy.js';
import type { StoreKind } from './env.js';
import { createTestStore, type TestDatabase } from './stores.js';

export class FakeClock {
  constructor(public ms = Date.parse('2026-03-01T12:00:00.000Z')) {}
  now = (): number => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
}

export interface Account {
  companyId: string;
  companyName: string;
  email: string;
  password: string;
  token: string;
}

export interface TestApp {
  app: FastifyInstance;
  store: Store;
  db: TestDatabase;
  clock: FakeClock;
  config: Config;
  inject(opts: InjectOptions): Promise<LightMyRequestResponse>;
  /** A new company with an admin user, logged in over HTTP. */
  newAccount(opts?: { role?: 'admin' | 'reviewer' | 'auditor'; company?: string }): Promise<Account>;
  /**
   * Creates an API key the way POST /auth/api_keys does, but without its api_key.created ledger
   * entry, so a test's own events start the chain at seq 0 (the route and its entry are tested in
   * api-keys.test.ts and admin-trail.test.ts). Returns its id and secret.
   */
  createKey(token: string, rate?: number): Promise<{ id: string; key: string }>;
  close(): Promise<void>;
}

export function testConfig(db: Pick<TestDatabase, 'dataDir' | 'databaseUrl'>, env: Record<string, string> = {}): Config {
  const config = loadConfig({ LOG_LEVEL: 'silent', ...env });
  return { ...config, dataDir: db.dataDir, databaseUrl: db.databaseUrl, streamDirectory: env.STREAM_DIRECTORY ?? path.join(db.dataDir, 'streams') };
}

export async function startTestApp(
  kind: StoreKind,
  opts: { env?: Record<string, string>; counters?: CounterStore; clock?: FakeClock; resolveHost?: Resolver; /** Collects the error-level log lines (JSON) here instead of stderr. */ logLines?: string[]; /** A store another app used before (its owner disposes it; close() leaves it open). */ store?: Awaited<ReturnType<typeof createTestStore>> } = {},
): Promise<TestApp> {
  const { store, db, dispose } = opts.store ? { ...opts.store, dispose: async () => {} } : await createTestStore(kind);
  const clock = opts.clock ?? new FakeClock();
  const config = testConfig(db, opts.env);
  const counters = opts.counters ?? new MemoryCounterStore(clock.now);
  // Errors only, to stderr: an unexpected 500 leaves its stack in the test output (CI included).
  const lines = opts.logLines;
  const log = pino({ level: 'error' }, lines ? { write: (line: string) => void lines.push(line) } : pino.destination(2)) as FastifyBaseLogger;
  const app = await buildApp({ config, store, counters, clock: clock.now, log, ...(opts.resolveHost ? { resolveHost: opts.resolveHost } : {}) });
  await app.ready();
  const inject = (o: InjectOptions) => app.inject(o);
  const t: TestApp = {
    app,
    store,
    db,
    clock,
    config,
    inject,
    async newAccount(o = {}) {
      const suffix = randomBytes(4).toString('hex');
      const email = `user-${suffix}@example.com`;
      const password = `pw-${randomBytes(8).toString('hex')}`;
      const companyName = o.company ?? `company-${suffix}`;
      // Without its user.created trail entry (recorded for `users create` and bootstrap users), so
      // a test's own events start the chain at seq 0, as with createKey.
      const { company } = await createUser(store, { company: companyName, email, password, role: o.role ?? 'admin' }, Date.now, null);
      const res = await inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password } });
      if (res.statusCode !== 200) throw new Error(`login failed: ${res.body}`);
      return { companyId: company.company_id, companyName, email, password, token: res.json().access_token };
    },
    async createKey(token, rate = 1000) {
      const me = await inject({ method: 'GET', url: '/api/v1/auth/me', headers: { authorization: `Bearer ${token}` } });
      if (me.statusCode !== 200) throw new Error(`key create failed: ${me.body}`);
      const key = newSecret(API_KEY_PREFIX);
      const row = await store.accounts.insertApiKey({
        company_id: me.json().company.id,
        key_id: randomUUID(),
        name: 'integration',
        key_prefix: key.slice(0, KEY_PREFIX_LENGTH),
        key_hash: hashSecret(key),
        rate_limit_per_minute: rate,
        created_at: new Date(clock.now()).toISOString(),
        created_by: me.json().user.id,
      });
      return { id: row.key_id, key };
    },
    async close() {
      await app.close();
      await counters.close();
      await dispose();
    },
  };
  return t;
}

/** Asserts the RFC 9457 shape and returns the body. */
export function problem(res: LightMyRequestResponse, status: number, code: string): Record<string, unknown> {
  const body = res.json();
  if (res.statusCode !== status || body.code !== code || !String(res.headers['content-type']).startsWith('application/problem+json')) {
    throw new Error(`expected ${status} ${code}, got ${res.statusCode} ${res.headers['content-type']} ${res.body}`);
  }
  for (const f of ['type', 'title', 'status', 'detail', 'code']) if (!(f in body)) throw new Error(`problem lacks ${f}: ${res.body}`);
  if (/\bat .+:\d+:\d+/.test(res.body)) throw new Error(`problem leaks a stack trace: ${res.body}`);
  return body;
}
