// Several service processes on one PostgreSQL database append to one company's chain
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers of a black-box HTTP test */
// at once: the chain must stay one, gap-free and valid. Also: key rotation across restarts.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogWatcher, runCli, spawnCli } from './helpers/process.js';
import { SKIP_SERVERS } from './helpers/env.js';
import { createTestDatabase, type TestDatabase } from './helpers/stores.js';
import { assertChainIntact } from './helpers/ledger.js';

function call(url: string, method: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: Record<string, any> }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let data = '';
      res.on('data', (d) => (data += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: data ? JSON.parse(data) : undefined }));
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

async function serve(env: Record<string, string>) {
  const child = spawnCli(['serve'], env);
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const url = String((await new LogWatcher(child).waitFor((l) => l.msg === 'audit-ledger listening')).url);
  return { url, stop: async () => (child.kill('SIGTERM'), exited) };
}

describe.skipIf(SKIP_SERVERS)('several processes on one PostgreSQL', () => {
  let db: TestDatabase;
  let env: Record<string, string>;
  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    env = { DATABASE_URL: db.databaseUrl as string, LEDGER_DATA_DIR: db.dataDir, PORT: '0', LOG_LEVEL: 'info' };
    expect((await runCli(['users', 'create', '--company', 'acme', '--email', 'ops@acme.test', '--password-stdin'], env, 'a long enough password')).code).toBe(0);
  });
  afterAll(() => db.drop());

  it('two processes ingesting into one company at once produce one valid chain', async () => {
    const [a, b] = await Promise.all([serve(env), serve(env)]);
    try {
      const token = (await call(`${a.url}/api/v1/auth/login`, 'POST', { email: 'ops@acme.test', password: 'a long enough password' })).json.access_token;
      const key = (await call(`${a.url}/api/v1/auth/api_keys`, 'POST', { name: 'k', rate_limit_per_minute: 1_000_000 }, { authorization: `Bearer ${token}` })).json.key;
      const requests: Array<Promise<{ status: number }>> = [];
      for (let i = 0; i < 40; i++) {
        const base = i % 2 ? b.url : a.url;
        requests.push(call(`${base}/api/v1/logs`, 'POST', { event_type: 'single', data: { i } }, { 'x-api-key': key }));
        if (i % 4 === 0) requests.push(call(`${base}/api/v1/logs/batch`, 'POST', { logs: Array.from({ length: 25 }, (_, j) => ({ event_type: 'batch', data: { i, j } })) }, { 'x-api-key': key }));
      }
      const results = await Promise.all(requests);
      expect(results.map((r) => r.status).every((s) => s === 200)).toBe(true);
      const { openPostgresStore } = await import('../src/store/postgres.js');
      const store = openPostgresStore(db.databaseUrl as string);
      try {
        const me = (await call(`${a.url}/api/v1/auth/me`, 'GET', undefined, { 'x-api-key': key })).json;
        expect(await assertChainIntact(store, me.company.id)).toBe(2 + 40 + 10 * 25); // the bootstrap admin's user.created and the API key's api_key.created entries first
      } finally {
        await store.close();
      }
    } finally {
      expect(await a.stop()).toBe(0);
      expect(await b.stop()).toBe(0);
    }
  }, 120_000); // three service processes start here: under the full suite on two cores that takes far more than the default 30 s

  it('keys rotate, online: both running processes switch; a restarted one keeps the new key; earlier entries keep verifying', async () => {
    const opEnv = { ...env, LEDGER_OPERATOR_TOKEN: 'operator-token-for-the-multiprocess-test' };
    const a = await serve(opEnv);
    let b = await serve(opEnv);
    try {
      const token = (await call(`${a.url}/api/v1/auth/login`, 'POST', { email: 'ops@acme.test', password: 'a long enough password' })).json.access_token;
      const keys = (await call(`${a.url}/api/v1/auth/api_keys`, 'GET', undefined, { authorization: `Bearer ${token}` })).json.items;
      await call(`${a.url}/api/v1/auth/api_keys/${keys[0].id}`, 'DELETE', undefined, { authorization: `Bearer ${token}` });
      const key = (await call(`${a.url}/api/v1/auth/api_keys`, 'POST', { name: 'k2', rate_limit_per_minute: 1000 }, { authorization: `Bearer ${token}` })).json.key;
      const before = (await call(`${b.url}/api/v1/logs`, 'POST', { event_type: 'before', data: {} }, { 'x-api-key': key })).json;

      // Without the token the command refuses; with it, the running service rotates.
      expect((await runCli(['keys', 'rotate', '--url', a.url], env)).code).toBe(2);
      const rotated = await runCli(['keys', 'rotate', '--url', a.url], opEnv);
      expect(rotated.code, rotated.stderr).toBe(0);
      const newKeyId = /now ([0-9a-f]{16})/.exec(rotated.stdout)?.[1];
      expect(newKeyId).toBeDefined();

      // b did not rotate, and signs with the new key at once.
      const after = (await call(`${b.url}/api/v1/logs`, 'POST', { event_type: 'after', data: {} }, { 'x-api-key': key })).json;
      expect(await b.stop()).toBe(0);
      b = await serve(opEnv);
      const restarted = (await call(`${b.url}/api/v1/logs`, 'POST', { event_type: 'restarted', data: {} }, { 'x-api-key': key })).json;
      const published = (await call(`${b.url}/api/v1/integrity/keys`, 'GET', undefined)).json;
      expect(published.items).toHaveLength(2);
      expect(published.items.find((k: { active: boolean }) => k.active).key_id).toBe(newKeyId);
      expect(published.transitions).toHaveLength(1);
      const verify = async (id: string) => (await call(`${b.url}/api/v1/logs/${id}/verify`, 'GET', undefined, { 'x-api-key': key })).json;
      const [vBefore, vAfter, vRestarted] = [await verify(before.log_id), await verify(after.log_id), await verify(restarted.log_id)];
      expect(vBefore.key_id).not.toBe(newKeyId);
      expect(vAfter.key_id).toBe(newKeyId);
      expect(vRestarted.key_id).toBe(newKeyId);
      for (const v of [vBefore, vAfter, vRestarted]) expect(v).toMatchObject({ chain_valid: true, signature_valid: true, problems: [] });
    } finally {
      expect(await a.stop()).toBe(0);
      expect(await b.stop()).toBe(0);
    }
    // With no service running, the command says how to do it and changes nothing.
    const offline = await runCli(['keys', 'rotate', '--url', 'http://127.0.0.1:9'], opEnv);
    expect(offline.code).toBe(1);
    expect(offline.stderr).toContain('no service answered');
  }, 120_000); // three service starts and four CLI runs
});
