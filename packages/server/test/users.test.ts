// User management over HTTP on both stores (issue 16): an admin invites users with one-time
// passwords, changes roles, disables and re-enables them, resets passwords; a user must replace a
// one-time password before anything else; the company keeps an active admin; every change is a
// ledger entry under audit-ledger/admin naming who did what to whom, and never a password.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, problem, startTestApp, type TestApp } from './helpers/app.js';
import { STORE_KINDS } from './helpers/env.js';

describe.each(STORE_KINDS)('users and roles on %s', (kind) => {
  let t: TestApp;
  let admin: Account;
  let auth: Record<string, string>;
  beforeAll(async () => {
    t = await startTestApp(kind);
    admin = await t.newAccount();
    auth = { authorization: `Bearer ${admin.token}` };
  });
  afterAll(() => t.close());

  const call = (method: string, url: string, headers: Record<string, string>, payload?: object) =>
    t.inject({ method: method as 'GET', url: `/api/v1${url}`, headers, ...(payload ? { payload } : {}) });
  const login = async (email: string, password: string) => call('POST', '/auth/login', {}, { email, password });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const adminEntries = async () => (await call('GET', `/logs?source=${encodeURIComponent('audit-ledger/admin')}&limit=1000`, auth)).json().items as Array<{ event_type: string; data: Record<string, { user_id?: string; email?: string } | string | boolean> }>;

  it('invites a user with a one-time password that must be replaced before anything else', async () => {
    const res = await call('POST', '/users', auth, { email: 'Ana.Reviewer@Example.com', role: 'reviewer' });
    expect(res.statusCode, res.body).toBe(201);
    const { user, one_time_password: otp } = res.json();
    expect(user).toMatchObject({ email: 'ana.reviewer@example.com', role: 'reviewer', disabled: false, password_change_required: true });
    expect(otp).toMatch(/^[A-Za-z0-9_-]{24}$/);
    const first = await login('ana.reviewer@example.com', otp);
    expect(first.json()).toMatchObject({ password_change_required: true });
    const token = bearer(first.json().access_token);
    problem(await call('GET', '/logs', token), 403, 'password_change_required');
    expect((await call('GET', '/auth/me', token)).statusCode).toBe(200);
    problem(await call('POST', '/auth/password', token, { current_password: 'not it at all', new_password: 'a new long password' }), 400, 'validation_failed');
    problem(await call('POST', '/auth/password', token, { current_password: otp, new_password: 'short' }), 400, 'validation_failed');
    expect((await call('POST', '/auth/password', token, { current_password: otp, new_password: 'ana chose this one' })).statusCode).toBe(204);
    expect((await call('GET', '/logs', token)).statusCode).toBe(200);
    problem(await login('ana.reviewer@example.com', otp), 401, 'invalid_login');
    expect((await login('ana.reviewer@example.com', 'ana chose this one')).json().password_change_required).toBe(false);
    // The answer never shows a password or a hash; the list neither.
    const list = (await call('GET', '/users', auth)).json().items;
    expect(list.map((u: { email: string }) => u.email).sort()).toEqual([admin.email, 'ana.reviewer@example.com'].sort());
    expect(JSON.stringify(list)).not.toMatch(/password_hash|scrypt|argon/);
  });

  it('changes roles: an auditor reads but cannot review or administer', async () => {
    const created = (await call('POST', '/users', auth, { email: 'bo@example.com', role: 'reviewer', password: 'bo has a long password' })).json().user;
    const token = bearer((await login('bo@example.com', 'bo has a long password')).json().access_token);
    const reject = { reviewer: 'bo', rejection_reason: 'no' };
    expect((await call('POST', '/hitl/reject', token, reject)).statusCode).toBe(201);
    const changed = await call('PATCH', `/users/${created.user_id}`, auth, { role: 'auditor' });
    expect(changed.json()).toMatchObject({ role: 'auditor' });
    problem(await call('POST', '/hitl/reject', token, reject), 403, 'forbidden');
    problem(await call('POST', '/users', token, { email: 'x@example.com', role: 'admin' }), 403, 'forbidden');
    expect((await call('GET', '/logs', token)).statusCode).toBe(200);
    expect((await call('POST', '/integrity/verify', token, {})).statusCode).toBeLessThan(410);
  });

  it('disables a user (tokens stop at once, login refused) and enables them again', async () => {
    const created = (await call('POST', '/users', auth, { email: 'cy@example.com', role: 'reviewer', password: 'cy has a long password' })).json().user;
    const token = bearer((await login('cy@example.com', 'cy has a long password')).json().access_token);
    expect((await call('PATCH', `/users/${created.user_id}`, auth, { disabled: true })).json()).toMatchObject({ disabled: true, disabled_at: expect.any(String) });
    problem(await call('GET', '/logs', token), 401, 'invalid_credential');
    problem(await login('cy@example.com', 'cy has a long password'), 401, 'invalid_login');
    expect((await call('PATCH', `/users/${created.user_id}`, auth, { disabled: false })).json()).toMatchObject({ disabled: false, disabled_at: null });
    expect((await login('cy@example.com', 'cy has a long password')).statusCode).toBe(200);
  });

  it('resets a password: the old tokens stop, a one-time password must be replaced', async () => {
    const created = (await call('POST', '/users', auth, { email: 'di@example.com', role: 'auditor', password: 'di has a long password' })).json().user;
    const token = bearer((await login('di@example.com', 'di has a long password')).json().access_token);
    const reset = await call('POST', `/users/${created.user_id}/password-reset`, auth);
    expect(reset.json()).toMatchObject({ user_id: created.user_id, one_time_password: expect.stringMatching(/^[A-Za-z0-9_-]{24}$/) });
    problem(await call('GET', '/logs', token), 401, 'invalid_credential');
    expect((await login('di@example.com', reset.json().one_time_password)).json().password_change_required).toBe(true);
  });

  it('keeps the company an active admin; refuses bad input with a problem and changes nothing', async () => {
    const me = (await call('GET', '/auth/me', auth)).json().user_id;
    problem(await call('PATCH', `/users/${me}`, auth, { disabled: true }), 409, 'last_admin');
    problem(await call('PATCH', `/users/${me}`, auth, { role: 'auditor' }), 409, 'last_admin');
    const before = (await call('GET', '/users', auth)).json().items.length;
    const entriesBefore = (await adminEntries()).length;
    problem(await call('POST', '/users', auth, { email: admin.email, role: 'reviewer' }), 409, 'email_taken');
    problem(await call('POST', '/users', auth, { email: 'not an email', role: 'reviewer' }), 400, 'validation_failed');
    problem(await call('POST', '/users', auth, { email: 'ok@example.com', role: 'superuser' }), 400, 'validation_failed');
    problem(await call('POST', '/users', auth, { email: 'ok@example.com', role: 'reviewer', password: 'short' }), 400, 'validation_failed');
    problem(await call('POST', '/users', auth, { email: 'ok@example.com', role: 'reviewer', is_admin: true }), 400, 'validation_failed');
    problem(await call('PATCH', `/users/${me}`, auth, {}), 400, 'validation_failed');
    problem(await call('PATCH', '/users/00000000-0000-4000-8000-000000000000', auth, { role: 'auditor' }), 404, 'not_found');
    problem(await call('PATCH', '/users/not-a-uuid', auth, { role: 'auditor' }), 400, 'validation_failed');
    // Another company's user is not found.
    const other = await t.newAccount();
    const otherId = (await call('GET', '/auth/me', { authorization: `Bearer ${other.token}` })).json().user_id;
    problem(await call('PATCH', `/users/${otherId}`, auth, { disabled: true }), 404, 'not_found');
    problem(await call('POST', `/users/${otherId}/password-reset`, auth), 404, 'not_found');
    expect((await call('GET', '/users', auth)).json().items.length).toBe(before);
    expect((await adminEntries()).length).toBe(entriesBefore);
    expect((await login(other.email, other.password)).statusCode).toBe(200);
  });

  it('records every change in the ledger under audit-ledger/admin: who did what to whom, never a password', async () => {
    const entries = await adminEntries();
    const types = entries.map((e) => e.event_type);
    for (const type of ['user.created', 'user.password_changed', 'user.role_changed', 'user.disabled', 'user.enabled', 'user.password_reset']) expect(types).toContain(type);
    const roleChange = entries.find((e) => e.event_type === 'user.role_changed');
    expect(roleChange?.data).toMatchObject({ actor: { email: admin.email }, subject: { email: 'bo@example.com' }, previous_role: 'reviewer', role: 'auditor' });
    expect(JSON.stringify(entries)).not.toMatch(/long password|chose this/);
    // A client cannot forge one: the source is reserved.
    const key = (await t.createKey(admin.token)).key;
    problem(await call('POST', '/logs', { 'x-api-key': key }, { event_type: 'user.created', source: 'audit-ledger/admin', data: {} }), 400, 'validation_failed');
  });
});
