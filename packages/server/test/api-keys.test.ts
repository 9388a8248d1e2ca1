// Integration API keys over HTTP, on both stores: the one-active-key rule, revocation,
// credential handling, validation, and isolation between companies.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS } from './helpers/env.js';
import { type Account, problem, startTestApp, type TestApp } from './helpers/app.js';

describe.each(STORE_KINDS)('API keys on %s', (kind) => {
  let t: TestApp;
  let a: Account;
  let b: Account;

  beforeAll(async () => {
    t = await startTestApp(kind);
    [a, b] = await Promise.all([t.newAccount(), t.newAccount()]);
  });
  afterAll(() => t.close());

  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const create = (token: string, payload: unknown) =>
    t.inject({ method: 'POST', url: '/api/v1/auth/api_keys', headers: bearer(token), payload: payload as object });
  const list = (token: string) => t.inject({ method: 'GET', url: '/api/v1/auth/api_keys', headers: bearer(token) });
  const revoke = (token: string, id: string) => t.inject({ method: 'DELETE', url: `/api/v1/auth/api_keys/${id}`, headers: bearer(token) });
  const useKey = (headers: Record<string, string>) => t.inject({ method: 'GET', url: '/api/v1/auth/me', headers });

  it('creates a key (201), shows the secret once and stores only its hash', async () => {
    const res = await create(a.token, { name: 'agents', rate_limit_per_minute: 600 });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({ name: 'agents', rate_limit_per_minute: 600, status: 'active', revoked_at: null });
    expect(body.key).toMatch(/^alk_[A-Za-z0-9_-]{43}$/); // 256 random bits
    expect(body.key.startsWith(body.key_prefix)).toBe(true);
    expect(Object.keys(body).sort()).toEqual(['created_at', 'id', 'key', 'key_prefix', 'name', 'rate_limit_per_minute', 'revoked_at', 'status']);

    const listed = (await list(a.token)).json().items;
    expect(listed).toHaveLength(1);
    expect(listed[0].id).toBe(body.id);
    expect(listed[0]).not.toHaveProperty('key');
    const stored = await t.store.db.selectFrom('api_keys').selectAll().execute();
    expect(JSON.stringify(stored)).not.toContain(body.key);

    // Usable through X-API-Key, and as a bearer token (agent SDKs send it that way).
    for (const headers of [{ 'x-api-key': body.key }, bearer(body.key)]) {
      const who = await useKey(headers);
      expect(who.statusCode).toBe(200);
      expect(who.json()).toMatchObject({ credential: 'api_key', company: { id: a.companyId }, api_key: { id: body.id, rate_limit_per_minute: 600 } });
      expect(who.json()).toMatchObject({ company_id: a.companyId, user_id: null, email: null, is_admin: null });
    }
  });

  it('refuses a second key while one is active (409 active_key_exists)', async () => {
    const res = problem(await create(a.token, { name: 'second', rate_limit_per_minute: 10 }), 409, 'active_key_exists');
    expect(res.detail).toMatch(/revoke/i);
    expect((await list(a.token)).json().items).toHaveLength(1);
  });

  it('lets exactly one of many simultaneous creates win', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => create(b.token, { name: `race-${i}`, rate_limit_per_minute: 5 })));
    expect(results.filter((r) => r.statusCode === 201)).toHaveLength(1);
    for (const r of results.filter((r) => r.statusCode !== 201)) problem(r, 409, 'active_key_exists');
    expect((await list(b.token)).json().items.filter((k: { status: string }) => k.status === 'active')).toHaveLength(1);
  });

  it('revokes (204), refuses the revoked key (401), then allows a new key (201)', async () => {
    const current = (await list(a.token)).json().items.find((k: { status: string }) => k.status === 'active');
    expect((await revoke(a.token, current.id)).statusCode).toBe(204);
    expect((await revoke(a.token, current.id)).statusCode).toBe(204); // idempotent
    const listed = (await list(a.token)).json().items;
    expect(listed.find((k: { id: string }) => k.id === current.id)).toMatchObject({ status: 'revoked', revoked_at: expect.any(String) });
    const fresh = await create(a.token, { name: 'rotated', rate_limit_per_minute: 100 });
    expect(fresh.statusCode).toBe(201);
    expect((await useKey({ 'x-api-key': fresh.json().key })).statusCode).toBe(200);
  });

  /** Revokes the account's active key, if any, and creates a new one. */
  async function rotate(acct: Account): Promise<{ id: string; key: string }> {
    const active = (await list(acct.token)).json().items.find((k: { status: string }) => k.status === 'active');
    if (active) expect((await revoke(acct.token, active.id)).statusCode).toBe(204);
    return t.createKey(acct.token);
  }

  it('refuses a revoked key on its next request', async () => {
    const secret = await rotate(b);
    expect((await useKey({ 'x-api-key': secret.key })).statusCode).toBe(200);
    expect((await revoke(b.token, secret.id)).statusCode).toBe(204);
    problem(await useKey({ 'x-api-key': secret.key }), 401, 'invalid_credential');
    problem(await useKey(bearer(secret.key)), 401, 'invalid_credential');
    problem(await useKey({ 'x-api-key': 'alk_made-up' }), 401, 'invalid_credential');
  });

  it("keeps companies apart: B cannot list, revoke or use A's keys", async () => {
    const aKey = await rotate(a);
    const bList = (await list(b.token)).json().items;
    expect(bList.map((k: { id: string }) => k.id)).not.toContain(aKey.id);
    problem(await revoke(b.token, aKey.id), 404, 'not_found');
    expect((await list(a.token)).json().items.find((k: { id: string }) => k.id === aKey.id).status).toBe('active');
    // A's key identifies A's company, never B's.
    expect((await useKey({ 'x-api-key': aKey.key })).json().company.id).toBe(a.companyId);
  });

  it('accepts only a user bearer token for key management (403 for an API key)', async () => {
    const secret = await rotate(a);
    for (const headers of [{ 'x-api-key': secret.key }, bearer(secret.key)]) {
      problem(await t.inject({ method: 'GET', url: '/api/v1/auth/api_keys', headers }), 403, 'forbidden');
      problem(await t.inject({ method: 'POST', url: '/api/v1/auth/api_keys', headers, payload: { name: 'n', rate_limit_per_minute: 1 } }), 403, 'forbidden');
      problem(await t.inject({ method: 'DELETE', url: `/api/v1/auth/api_keys/${secret.id}`, headers }), 403, 'forbidden');
    }
    problem(await t.inject({ method: 'GET', url: '/api/v1/auth/api_keys' }), 401, 'missing_credential');
    // The key is still active after all that.
    expect((await useKey({ 'x-api-key': secret.key })).statusCode).toBe(200);
  });

  it('requires the admin role (403 for a member)', async () => {
    const member = await t.newAccount({ role: 'reviewer' });
    problem(await create(member.token, { name: 'n', rate_limit_per_minute: 1 }), 403, 'forbidden');
    problem(await list(member.token), 403, 'forbidden');
  });

  it('validates the create body and loses nothing on a bad request', async () => {
    const c = await t.newAccount();
    const cases: Array<[unknown, string]> = [
      [{ rate_limit_per_minute: 10 }, '/body/name'],
      [{ name: 'x' }, '/body/rate_limit_per_minute'],
      [{ name: '', rate_limit_per_minute: 10 }, '/body/name'],
      [{ name: '   ', rate_limit_per_minute: 10 }, '/body/name'],
      [{ name: 'x'.repeat(201), rate_limit_per_minute: 10 }, '/body/name'],
      [{ name: 7, rate_limit_per_minute: 10 }, '/body/name'],
      [{ name: 'x', rate_limit_per_minute: 0 }, '/body/rate_limit_per_minute'],
      [{ name: 'x', rate_limit_per_minute: 1_000_001 }, '/body/rate_limit_per_minute'],
      [{ name: 'x', rate_limit_per_minute: 1.5 }, '/body/rate_limit_per_minute'],
      [{ name: 'x', rate_limit_per_minute: '10' }, '/body/rate_limit_per_minute'],
      [{ name: 'x', rate_limit_per_minute: 10, status: 'active' }, '/body/status'],
    ];
    for (const [payload, field] of cases) {
      const body = problem(await create(c.token, payload), 400, 'validation_failed');
      expect((body.errors as Array<{ field: string }>).map((e) => e.field)).toContain(field);
    }
    expect((await list(c.token)).json().items).toEqual([]);
    // The limits themselves are accepted.
    expect((await create(c.token, { name: 'x'.repeat(200), rate_limit_per_minute: 1_000_000 })).statusCode).toBe(201);
  });

  it('validates the revoke path parameter', async () => {
    problem(await revoke(a.token, 'not-a-uuid'), 400, 'validation_failed');
    problem(await revoke(a.token, '00000000-0000-4000-8000-000000000000'), 404, 'not_found');
  });
});
