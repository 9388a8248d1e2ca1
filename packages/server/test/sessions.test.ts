// Console sessions over HTTP on both stores (issue 16): the session cookie's flags, CSRF on every
// request that changes something, idle and absolute timeouts, logout, and the separation of
// session and bearer tokens (a session token is accepted only as the cookie, a bearer token never
// as one). Time is the fake clock's.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, problem, startTestApp, type TestApp } from './helpers/app.js';
import { STORE_KINDS } from './helpers/env.js';
import { countEntries } from './helpers/ledger.js';

const cookieOf = (res: LightMyRequestResponse) => {
  const header = res.headers['set-cookie'];
  return (Array.isArray(header) ? header : [header]).find((c) => c?.startsWith('al_session=')) as string;
};
const valueOf = (setCookie: string) => (setCookie.split(';')[0] as string).slice('al_session='.length);

describe.each(STORE_KINDS)('console sessions on %s', (kind) => {
  let t: TestApp;
  let acct: Account;
  beforeAll(async () => {
    t = await startTestApp(kind, { env: { SESSION_IDLE_TIMEOUT_SECONDS: '1800', SESSION_MAX_AGE_SECONDS: '3600' } });
    acct = await t.newAccount();
  });
  afterAll(() => t.close());

  const signIn = async () => {
    const res = await t.inject({ method: 'POST', url: '/api/v1/auth/session', payload: { email: acct.email, password: acct.password } });
    expect(res.statusCode, res.body).toBe(201);
    const set = cookieOf(res);
    return { set, cookie: `al_session=${valueOf(set)}`, csrf: res.json().csrf_token as string, body: res.json() };
  };
  const reject = (headers: Record<string, string>) =>
    t.inject({ method: 'POST', url: '/api/v1/hitl/reject', headers, payload: { reviewer: 'r', rejection_reason: 'session test' } });

  it('sets an HttpOnly, SameSite=Strict cookie (not Secure without TLS) and answers a CSRF token, no token in the body', async () => {
    const s = await signIn();
    expect(s.set).toMatch(/; HttpOnly/);
    expect(s.set).toMatch(/; SameSite=Strict/);
    expect(s.set).toMatch(/; Path=\//);
    expect(s.set).toMatch(/; Max-Age=3600/);
    expect(s.set).not.toMatch(/; Secure/);
    expect(s.body).toMatchObject({ idle_timeout_seconds: 1800, password_change_required: false, user: { email: acct.email, role: 'admin' } });
    expect(JSON.stringify(s.body)).not.toContain(valueOf(s.set));
    expect((await t.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie: s.cookie } })).json()).toMatchObject({ credential: 'user', email: acct.email });
    expect((await t.inject({ method: 'GET', url: '/api/v1/auth/session', headers: { cookie: s.cookie } })).json().csrf_token).toBe(s.csrf);
  });

  it('refuses a change sent with the cookie but without the right X-CSRF-Token, and stores nothing', async () => {
    const s = await signIn();
    const before = await countEntries(t.store, acct.companyId);
    problem(await reject({ cookie: s.cookie }), 403, 'csrf_failed');
    problem(await reject({ cookie: s.cookie, 'x-csrf-token': 'not-the-token' }), 403, 'csrf_failed');
    const other = await signIn();
    problem(await reject({ cookie: s.cookie, 'x-csrf-token': other.csrf }), 403, 'csrf_failed');
    expect(await countEntries(t.store, acct.companyId)).toBe(before);
    expect((await reject({ cookie: s.cookie, 'x-csrf-token': s.csrf })).statusCode).toBe(201);
    // Reads need no token.
    expect((await t.inject({ method: 'GET', url: '/api/v1/logs', headers: { cookie: s.cookie } })).statusCode).toBe(200);
  });

  it('keeps session and bearer tokens apart', async () => {
    const s = await signIn();
    problem(await t.inject({ method: 'GET', url: '/api/v1/logs', headers: { authorization: `Bearer ${valueOf(s.set)}` } }), 401, 'invalid_credential');
    problem(await t.inject({ method: 'GET', url: '/api/v1/logs', headers: { cookie: `al_session=${acct.token}` } }), 401, 'invalid_credential');
    problem(await t.inject({ method: 'GET', url: '/api/v1/auth/session', headers: { authorization: `Bearer ${acct.token}` } }), 403, 'forbidden');
    // A bearer token needs no CSRF token (no browser sends it by itself).
    expect((await reject({ authorization: `Bearer ${acct.token}` })).statusCode).toBe(201);
  });

  it('ends after the idle timeout, moved forward by use, and at the absolute limit whatever the use', async () => {
    const s = await signIn();
    const me = () => t.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie: s.cookie } });
    for (let i = 0; i < 2; i++) {
      t.clock.advance(20 * 60_000); // 20 min: inside the 30 min idle window each time
      expect((await me()).statusCode).toBe(200);
    }
    t.clock.advance(19 * 60_000); // 59 min after login, still active
    expect((await me()).statusCode).toBe(200);
    t.clock.advance(2 * 60_000); // 61 min: past the 1 h absolute limit
    problem(await me(), 401, 'invalid_credential');
    const idle = await signIn();
    t.clock.advance(31 * 60_000);
    problem(await t.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie: idle.cookie } }), 401, 'invalid_credential');
  });

  it('signs out: DELETE /auth/session needs the CSRF token, revokes the session and clears the cookie', async () => {
    const s = await signIn();
    problem(await t.inject({ method: 'DELETE', url: '/api/v1/auth/session', headers: { cookie: s.cookie } }), 403, 'csrf_failed');
    const out = await t.inject({ method: 'DELETE', url: '/api/v1/auth/session', headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } });
    expect(out.statusCode).toBe(204);
    expect(cookieOf(out)).toMatch(/^al_session=;.*Expires=Thu, 01 Jan 1970/);
    problem(await t.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie: s.cookie } }), 401, 'invalid_credential');
  });

  it('refuses a wrong password with the login lockout rules, and sets no cookie', async () => {
    const res = await t.inject({ method: 'POST', url: '/api/v1/auth/session', payload: { email: acct.email, password: 'wrong password here' } });
    problem(res, 401, 'invalid_login');
    expect(res.headers['set-cookie']).toBeUndefined();
    problem(await t.inject({ method: 'POST', url: '/api/v1/auth/session', payload: { email: acct.email } }), 400, 'validation_failed');
  });
});

describe('console sessions behind TLS', () => {
  it('marks the cookie Secure when the service serves TLS', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-session-tls-'));
    const cert = path.join(dir, 'cert.pem');
    const key = path.join(dir, 'key.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=localhost', '-keyout', key, '-out', cert], { stdio: 'ignore' });
    const t = await startTestApp('sqlite', { env: { TLS_CERT_FILE: cert, TLS_KEY_FILE: key } });
    try {
      const acct = await t.newAccount();
      const res = await t.inject({ method: 'POST', url: '/api/v1/auth/session', payload: { email: acct.email, password: acct.password } });
      expect(cookieOf(res)).toMatch(/; Secure/);
    } finally {
      await t.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.each(STORE_KINDS)('a short idle timeout on %s', (kind) => {
  let t: TestApp;
  let acct: Account;
  beforeAll(async () => {
    t = await startTestApp(kind, { env: { SESSION_IDLE_TIMEOUT_SECONDS: '60', SESSION_MAX_AGE_SECONDS: '3600' } });
    acct = await t.newAccount();
  });
  afterAll(() => t.close());

  it('is exact to within 5 seconds: a session used every 30 s stays open, one left 61 s ends', async () => {
    const res = await t.inject({ method: 'POST', url: '/api/v1/auth/session', payload: { email: acct.email, password: acct.password } });
    const cookie = `al_session=${valueOf(cookieOf(res))}`;
    const me = () => t.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie } });
    // Used every 30 s for five minutes: each use moves the 60 s deadline (a fixed one-minute
    // write granularity once let it lapse 60 s after login whatever the use).
    for (let i = 0; i < 10; i++) {
      t.clock.advance(30_000);
      expect((await me()).statusCode, `use ${i + 1}, ${(i + 1) * 30} s after login`).toBe(200);
    }
    // Idle 55 s (within the 5 s tolerance of 60): still open; then 61 s idle: ended.
    t.clock.advance(55_000);
    expect((await me()).statusCode).toBe(200);
    t.clock.advance(61_000);
    problem(await me(), 401, 'invalid_credential');
  });
});
