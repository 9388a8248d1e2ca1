// The real process: CLI commands, bootstrap on first start, clean shutdown on SIGTERM
// with an in-flight request finishing, and a clear exit on bad configuration.
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogWatcher, runCli, spawnCli } from './helpers/process.js';
import { STORE_KINDS } from './helpers/env.js';
import { createTestDatabase, type TestDatabase } from './helpers/stores.js';

function request(url: string, method: string, body?: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let data = '';
      res.on('data', (d) => (data += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The company's user.created trail entries, once there are `n` (the service appends those of users created outside it within seconds). */
async function trailOf(base: string, token: string, n: number): Promise<Array<{ data: Record<string, unknown> }>> {
  for (;;) {
    const res = await request(`${base}/api/v1/logs?source=${encodeURIComponent('audit-ledger/admin')}&event_type=user.created&limit=100`, 'GET', undefined, { authorization: `Bearer ${token}` });
    const items = JSON.parse(res.body).items as Array<{ data: Record<string, unknown> }>;
    if (items.length >= n) return items;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('configuration errors', () => {
  it('exits 2 with a message naming the bad variable', async () => {
    const res = await runCli(['serve'], { PORT: 'nope', LEDGER_DATA_DIR: os.tmpdir() });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('PORT must be a whole number');
  });
  it('exits 2 on an unknown command', async () => {
    const res = await runCli(['frobnicate'], {});
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('unknown command');
  });

  it('answers --help and -h on every command with its usage, and does nothing else', async () => {
    const dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'al-help-')), 'data');
    const env = { LEDGER_DATA_DIR: dataDir, PORT: '0', LEDGER_OPERATOR_TOKEN: 'x'.repeat(40) };
    for (const args of [['--help'], ['-h'], ['serve', '--help'], ['serve', '-h'], ['migrate', '--help'], ['users', '--help'], ['users', 'create', '--help'], ['users', 'create', '-h'], ['keys', '--help'], ['keys', 'rotate', '--help'], ['keys', 'rotate', '-h'], ['verify-bundle', '--help']]) {
      const res = await runCli(args, env);
      expect(res.code, args.join(' ')).toBe(0);
      expect(res.stdout, args.join(' ')).toMatch(/^Usage: audit-ledger/m);
    }
    // Nothing ran: no data directory, no key, no database.
    expect(fs.existsSync(dataDir)).toBe(false);
    expect((await runCli(['keys', 'rotate', '--help'], env)).stdout).toContain('--url');
  });

  it('keys rotate names a placeholder token or a refused one, never "no service answered" while one runs', async () => {
    const service = http.createServer((req, res) => {
      res.writeHead(403, { 'content-type': 'application/problem+json' }).end(JSON.stringify({ status: 403, code: 'forbidden', detail: 'operator actions need LEDGER_OPERATOR_TOKEN' }));
    });
    await new Promise<void>((r) => service.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(service.address() as net.AddressInfo).port}`;
    try {
      const placeholder = await runCli(['keys', 'rotate', '--url', url], { LEDGER_OPERATOR_TOKEN: '…' });
      expect(placeholder.code).toBe(2);
      expect(placeholder.stderr).toContain('LEDGER_OPERATOR_TOKEN is not a token');
      const refused = await runCli(['keys', 'rotate', '--url', url], { LEDGER_OPERATOR_TOKEN: 'x'.repeat(40) });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('refused the operator token (403: operator actions need LEDGER_OPERATOR_TOKEN)');
      expect(placeholder.stderr + refused.stderr).not.toContain('no service answered');
    } finally {
      service.close();
    }
  });

  it('refuses unknown options with the usage and exit 2', async () => {
    for (const args of [['serve', '--bogus'], ['users', 'create', '--nope'], ['keys', 'rotate', '--force'], ['verify-bundle']]) {
      const res = await runCli(args, { LEDGER_DATA_DIR: os.tmpdir() });
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stderr, args.join(' ')).toMatch(/error: |Usage: /);
    }
  });

  it('a start that fails (port taken) stops its background work and exits non-zero', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as net.AddressInfo).port;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-port-'));
    try {
      const res = await runCli(['serve'], { LEDGER_DATA_DIR: dataDir, PORT: String(port) });
      expect(res.code).toBe(1);
      expect(res.stderr + res.stdout).toContain('EADDRINUSE');
      expect(res.stdout).not.toContain('webhook delivery pass failed');
    } finally {
      blocker.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe.each(STORE_KINDS)('the service process on %s', (kind) => {
  let db: TestDatabase;
  let env: Record<string, string>;
  beforeAll(async () => {
    db = await createTestDatabase(kind);
    env = { LEDGER_DATA_DIR: db.dataDir, PORT: '0', ...(db.databaseUrl ? { DATABASE_URL: db.databaseUrl } : {}) };
  });
  afterAll(() => db.drop());

  it('migrate applies the schema and is idempotent', async () => {
    const first = await runCli(['migrate'], env);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('applied: 0001_accounts_and_keys');
    const second = await runCli(['migrate'], env);
    expect(second.stdout).toContain('nothing to apply');
  });

  it('users create reads the password from stdin and refuses bad input', async () => {
    const ok = await runCli(['users', 'create', '--company', 'acme', '--email', 'cli@acme.test', '--password-stdin'], env, 'a long cli password\n');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('created user cli@acme.test (admin) in company "acme"');
    const dup = await runCli(['users', 'create', '--company', 'acme', '--email', 'CLI@acme.test', '--password-stdin'], env, 'another long password');
    expect(dup.code).toBe(1);
    expect(dup.stderr).toContain('already exists');
    const short = await runCli(['users', 'create', '--company', 'acme', '--email', 'x@acme.test', '--password-stdin'], env, 'short');
    expect(short.code).toBe(1);
    const missing = await runCli(['users', 'create', '--email', 'x@acme.test'], env);
    expect(missing.code).toBe(2);
    // A name that differs only by letter case is the same company, never a second one.
    const companyId = /in company "acme" \(([0-9a-f-]{36})\)/.exec(ok.stdout)?.[1];
    const upper = await runCli(['users', 'create', '--company', 'ACME', '--email', 'cli2@acme.test', '--password-stdin', '--role', 'auditor'], env, 'a long cli password 2');
    expect(upper.code, upper.stderr).toBe(0);
    expect(upper.stdout).toContain(`created user cli2@acme.test (auditor) in company "acme" (${companyId})`);
    expect(upper.stdout).toContain("the administrators' trail records it");
  });

  it('serves, bootstraps only an empty store, survives bad requests, and on SIGTERM finishes in-flight requests and exits 0', async () => {
    const child = spawnCli(['serve'], { ...env, LOG_LEVEL: 'debug', LEDGER_BOOTSTRAP_EMAIL: 'boot@x.test', LEDGER_BOOTSTRAP_PASSWORD: 'bootstrap password' });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const logs = new LogWatcher(child);
    const listening = await logs.waitFor((l) => l.msg === 'audit-ledger listening');
    const base = String(listening.url);

    // The store already had a user (from the CLI test), so no bootstrap user was made.
    const boot = await request(`${base}/api/v1/auth/login`, 'POST', JSON.stringify({ email: 'boot@x.test', password: 'bootstrap password' }));
    expect(boot.status).toBe(401);
    const login = await request(`${base}/api/v1/auth/login`, 'POST', JSON.stringify({ email: 'cli@acme.test', password: 'a long cli password' }));
    expect(login.status).toBe(200);
    // The users the CLI created are in the administrators' trail, appended by the service.
    const created = await trailOf(base, JSON.parse(login.body).access_token, 2);
    expect(created.map((e) => e.data).sort((a, b) => String(a.role).localeCompare(String(b.role)))).toEqual([
      { actor: { kind: 'operator' }, subject: { kind: 'user', user_id: expect.any(String), email: 'cli@acme.test' }, role: 'admin', one_time_password: false, via: 'cli' },
      { actor: { kind: 'operator' }, subject: { kind: 'user', user_id: expect.any(String), email: 'cli2@acme.test' }, role: 'auditor', one_time_password: false, via: 'cli' },
    ]);

    expect((await request(`${base}/api/v1/auth/login`, 'POST', '{oops')).status).toBe(400);
    expect((await request(`${base}/api/v1/auth/login`, 'POST', '"x"')).status).toBe(400);
    expect((await request(`${base}/api/v1/auth/login`, 'POST', 'a=b', { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await request(`${base}/api/v1/auth/login`, 'POST', 'x'.repeat(2_000_000))).status).toBe(413);
    expect((await request(`${base}/api/v1/nowhere`, 'GET')).status).toBe(404);
    expect((await request(`${base}/api/v1/openapi.json`, 'GET')).status).toBe(200);

    // Start a request and hold its body back, so it is in flight when SIGTERM arrives.
    const mark = logs.lines.length;
    const payload = JSON.stringify({ email: 'cli@acme.test', password: 'a long cli password' }).padEnd(200, ' ');
    let req!: http.ClientRequest;
    const inflight = new Promise<{ status: number; body: string }>((resolve, reject) => {
      req = http.request(`${base}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(payload.length) } }, (res) => {
        let data = '';
        res.on('data', (d) => (data += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
      });
      req.on('error', reject);
      req.write(payload.slice(0, 10));
    });
    await logs.waitFor((l) => l.msg === 'request received' && l.url === '/api/v1/auth/login', mark);
    child.kill('SIGTERM');
    await logs.waitFor((l) => l.msg === 'shutting down');
    // New connections are no longer accepted while it drains.
    await expect(request(`${base}/api/v1/openapi.json`, 'GET')).rejects.toThrow();
    req.end(payload.slice(10));
    const done = await inflight;
    expect(done.status).toBe(200);
    const token = JSON.parse(done.body).access_token as string;
    expect(await exited).toBe(0);

    // One log line per request, with its id, route, status, latency and company; no secrets.
    const completed = logs.lines.filter((l) => l.msg === 'request completed');
    expect(completed.length).toBeGreaterThanOrEqual(8);
    for (const l of completed) expect(Object.keys(l)).toEqual(expect.arrayContaining(['reqId', 'method', 'route', 'status', 'latency_ms', 'company_id']));
    const text = JSON.stringify(logs.lines);
    for (const secret of [token, 'a long cli password', 'bootstrap password']) expect(text).not.toContain(secret);
    expect(await exited).toBe(0);
  });

  it('on a first start with no user, says how to create the first admin; the data is private to its user', async () => {
    const fresh = await createTestDatabase(kind);
    try {
      const dataDir = path.join(fresh.dataDir, 'data');
      const child = spawnCli(['serve'], { LEDGER_DATA_DIR: dataDir, PORT: '0', ...(fresh.databaseUrl ? { DATABASE_URL: fresh.databaseUrl } : {}) });
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      const logs = new LogWatcher(child);
      const hint = await logs.waitFor((l) => String(l.msg).startsWith('no user exists yet'));
      expect(hint.create_admin).toContain('npx audit-ledger users create --company');
      expect(hint.create_admin).toContain('--password-stdin');
      await logs.waitFor((l) => l.msg === 'audit-ledger listening');
      const mode = (f: string) => fs.statSync(path.join(dataDir, f)).mode & 0o777;
      expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
      for (const f of ['signing-key.pem', 'secrets.key', ...(kind === 'sqlite' ? ['ledger.db'] : [])]) expect(mode(f), f).toBe(0o600);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      await fresh.drop();
    }
  });

  it('bootstraps the first company and admin when the store has no user', async () => {
    const fresh = await createTestDatabase(kind);
    try {
      const freshEnv = { LEDGER_DATA_DIR: fresh.dataDir, PORT: '0', ...(fresh.databaseUrl ? { DATABASE_URL: fresh.databaseUrl } : {}) };
      const child = spawnCli(['serve'], { ...freshEnv, LEDGER_BOOTSTRAP_EMAIL: 'boot@x.test', LEDGER_BOOTSTRAP_PASSWORD: 'bootstrap password' });
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      const listening = await new LogWatcher(child).waitFor((l) => l.msg === 'audit-ledger listening');
      const login = await request(`${String(listening.url)}/api/v1/auth/login`, 'POST', JSON.stringify({ email: 'boot@x.test', password: 'bootstrap password' }));
      expect(login.status).toBe(200);
      const me = await request(`${String(listening.url)}/api/v1/auth/me`, 'GET', undefined, { authorization: `Bearer ${JSON.parse(login.body).access_token}` });
      expect(JSON.parse(me.body)).toMatchObject({ company: { name: 'default' }, user: { role: 'admin' } });
      const [created] = await trailOf(String(listening.url), JSON.parse(login.body).access_token, 1);
      expect(created?.data).toMatchObject({ actor: { kind: 'operator' }, subject: { email: 'boot@x.test' }, role: 'admin', via: 'bootstrap' });
      if (kind === 'sqlite') expect(fs.existsSync(path.join(fresh.dataDir, 'ledger.db'))).toBe(true);
      child.kill('SIGINT');
      expect(await exited).toBe(0);
    } finally {
      await fresh.drop();
    }
  });
});
