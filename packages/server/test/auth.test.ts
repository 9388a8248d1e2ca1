// Login, token lifetime, logout and /auth/me over HTTP, on both stores.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS } from './helpers/env.js';
import { type Account, problem, startTestApp, type TestApp } from './helpers/app.js';

describe.each(STORE_KINDS)('auth on %s', (kind) => {
  let t: TestApp;
  let alice: Account;

  beforeAll(async () => {
    t = await startTestApp(kind);
    alice = await t.newAccount();
  });
  afterAll(() => t.close());

  const login = (payload: unknown) => t.inject({ method: 'POST', url: '/api/v1/auth/login', payload: payload as object });
  const me = (token: string) => t.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { authorization: `Bearer ${token}` } });

  it('logs in with the right password and returns a bearer token', async () => {
    const res = await login({ email: alice.email.toUpperCase(), password: alice.password });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, expires_at: '2026-03-01T13:00:00.000Z' });
    expect(body.access_token).toMatch(/^alt_[A-Za-z0-9_-]{43}$/);
    // Stored only as a hash.
    const rows = await t.store.db.selectFrom('access_tokens').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(body.access_token);
    const who = await me(body.access_token);
    expect(who.statusCode).toBe(200);
    expect(who.json()).toMatchObject({ credential: 'user', company: { id: alice.companyId, name: alice.companyName }, user: { email: alice.email, role: 'admin' } });
    // The flat fields other agent SDKs read.
    expect(who.json()).toMatchObject({ company_id: alice.companyId, user_id: who.json().user.id, email: alice.email, is_admin: true });
  });

  it('answers a wrong email and a wrong password with the same 401 body', async () => {
    const wrongPw = problem(await login({ email: alice.email, password: 'not-the-password' }), 401, 'invalid_login');
    const wrongEmail = problem(await login({ email: 'nobody@example.com', password: alice.password }), 401, 'invalid_login');
    const strip = (b: Record<string, unknown>) => ({ ...b, request_id: undefined });
    expect(strip(wrongEmail)).toEqual(strip(wrongPw));
  });

  it('rejects malformed login bodies with 400 naming the field', async () => {
    const missing = problem(await login({ email: alice.email }), 400, 'validation_failed');
    expect(missing.errors).toEqual([{ field: '/body/password', message: 'is required' }]);
    const wrongType = problem(await login({ email: 42, password: 'x' }), 400, 'validation_failed');
    expect(wrongType.errors).toEqual([{ field: '/body/email', message: 'must be string' }]);
    problem(await login({ email: '', password: 'x' }), 400, 'validation_failed');
    problem(await login({ email: alice.email, password: 'x', extra: 1 }), 400, 'validation_failed');
    problem(await login([]), 400, 'validation_failed');
  });

  it('expires tokens after ACCESS_TOKEN_TTL_SECONDS', async () => {
    const { access_token } = (await login({ email: alice.email, password: alice.password })).json();
    t.clock.advance(3599_000);
    expect((await me(access_token)).statusCode).toBe(200);
    t.clock.advance(1000);
    problem(await me(access_token), 401, 'invalid_credential');
  });

  it('revokes the token on logout, and only that token', async () => {
    const a = (await login({ email: alice.email, password: alice.password })).json().access_token;
    const b = (await login({ email: alice.email, password: alice.password })).json().access_token;
    const out = await t.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { authorization: `Bearer ${a}` } });
    expect(out.statusCode).toBe(204);
    problem(await me(a), 401, 'invalid_credential');
    expect((await me(b)).statusCode).toBe(200);
  });

  it('answers a missing or unknown credential with 401', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/v1/auth/me' });
    problem(res, 401, 'missing_credential');
    expect(res.headers['www-authenticate']).toContain('Bearer');
    problem(await me('alt_doesnotexist'), 401, 'invalid_credential');
    problem(await me('garbage'), 401, 'invalid_credential');
    problem(await t.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { authorization: 'Basic Zm9vOmJhcg==' } }), 401, 'missing_credential');
  });

  it('locks an email out after 10 failed logins in a minute, even for the right password', async () => {
    const victim = await t.newAccount();
    for (let i = 0; i < 10; i++) problem(await login({ email: victim.email, password: `wrong-${i}` }), 401, 'invalid_login');
    const locked = await login({ email: victim.email, password: victim.password });
    problem(locked, 429, 'too_many_login_attempts');
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(locked.headers['retry-after'])).toBeLessThanOrEqual(60);
    // Other emails are unaffected.
    expect((await login({ email: alice.email, password: alice.password })).statusCode).toBe(200);
    // After the window the right password works again.
    t.clock.advance(60_000);
    expect((await login({ email: victim.email, password: victim.password })).statusCode).toBe(200);
  });

  it('counts only failures toward the lockout', async () => {
    const user = await t.newAccount();
    for (let i = 0; i < 12; i++) expect((await login({ email: user.email, password: user.password })).statusCode).toBe(200);
  });
});

describe('password hashing cost', () => {
  it('is OWASP’s in the service (N = 2^15, r = 8, p = 3), and the cheap test cost cannot be switched on outside Vitest', async () => {
    const { spawnSync } = await import('node:child_process');
    const script = "import { hashPassword, useCheapPasswordCostForTests } from './src/crypto/passwords.ts'; console.log((await hashPassword('a long password')).split('$').slice(0, 4).join('$')); try { useCheapPasswordCostForTests(); console.log('switched'); } catch (e) { console.log(e.message); }";
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST')));
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: new URL('..', import.meta.url).pathname, encoding: 'utf8', env });
    expect(r.stdout.trim().split('\n'), r.stderr).toEqual(['scrypt$32768$8$3', 'useCheapPasswordCostForTests: only under Vitest']);
  });
});
