// Every malformed input gets its RFC 9457 problem with a stable code, and the app keeps serving.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, problem, startTestApp, type TestApp } from './helpers/app.js';
import { DomainError } from '../src/kernel/domain-error.js';
import { domainProblem } from '../src/http/domain-problems.js';
import { AppenderClosedError, InconsistentTreeError } from '../src/ledger/appender/errors.js';
import { CompanyNameAmbiguousError, EmailTakenError } from '../src/store/accounts.js';
import { LastAdminError, UserNotFoundError } from '../src/users/admin.js';

describe('problem responses', () => {
  let t: TestApp;
  let acct: Account;
  beforeAll(async () => {
    t = await startTestApp('sqlite', { env: { MAX_BODY_BYTES: '2048' } });
    acct = await t.newAccount();
  });
  afterAll(() => t.close());

  const post = (headers: Record<string, string>, payload: string) =>
    t.inject({ method: 'POST', url: '/api/v1/auth/api_keys', headers: { authorization: `Bearer ${acct.token}`, ...headers }, payload });

  it('unknown route → 404 not_found', async () => {
    const body = problem(await t.inject({ method: 'GET', url: '/api/v1/nothing-here?x=1' }), 404, 'not_found');
    expect(body).toMatchObject({ type: 'urn:audit-ledger:problem:not_found', title: 'Not found', status: 404, instance: '/api/v1/nothing-here' });
    problem(await t.inject({ method: 'GET', url: '/nothing' }), 404, 'not_found');
    problem(await t.inject({ method: 'PUT', url: '/api/v1/auth/login' }), 404, 'not_found');
  });

  it('malformed JSON → 400 malformed_json', async () => {
    for (const bad of ['{"name": "x",', '{name: 1}', 'nul', '[1,2']) {
      problem(await post({ 'content-type': 'application/json' }, bad), 400, 'malformed_json');
    }
    // An empty body is no body: a route that needs one says so.
    const empty = problem(await post({ 'content-type': 'application/json' }, ''), 400, 'validation_failed');
    expect(empty.errors).toEqual([{ field: '/body', message: 'must be object' }]);
  });

  it('body over MAX_BODY_BYTES → 413 payload_too_large', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(4000), rate_limit_per_minute: 1 });
    const body = problem(await post({ 'content-type': 'application/json' }, big), 413, 'payload_too_large');
    expect(body.detail).toContain('2048');
  });

  it('unsupported content type → 415 unsupported_media_type', async () => {
    for (const type of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      problem(await post({ 'content-type': type }, 'name=x'), 415, 'unsupported_media_type');
    }
  });

  it('missing credential → 401, valid credential without the right → 403', async () => {
    problem(await t.inject({ method: 'POST', url: '/api/v1/auth/api_keys', payload: { name: 'x', rate_limit_per_minute: 1 } }), 401, 'missing_credential');
    const member = await t.newAccount({ role: 'reviewer' });
    problem(
      await t.inject({ method: 'POST', url: '/api/v1/auth/api_keys', headers: { authorization: `Bearer ${member.token}` }, payload: { name: 'x', rate_limit_per_minute: 1 } }),
      403,
      'forbidden',
    );
  });

  it('lists every offending field of a validation failure', async () => {
    const body = problem(await post({ 'content-type': 'application/json' }, JSON.stringify({ name: '', rate_limit_per_minute: 'many', x: 1 })), 400, 'validation_failed');
    expect([...new Set((body.errors as Array<{ field: string }>).map((e) => e.field))].sort()).toEqual(['/body/name', '/body/rate_limit_per_minute', '/body/x']);
  });

  it('accepts Content-Type: application/json with no body where no body is needed', async () => {
    const res = await t.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { authorization: `Bearer ${(await t.newAccount()).token}`, 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(204);
  });

  it('keeps serving after all of the above, and lost nothing', async () => {
    const res = await post({ 'content-type': 'application/json' }, JSON.stringify({ name: 'ok', rate_limit_per_minute: 5 }));
    expect(res.statusCode).toBe(201);
    const keys = await t.store.accounts.listApiKeys(acct.companyId);
    expect(keys.map((k) => k.name)).toEqual(['ok']);
  });

  it('returns X-Request-Id on every answer, matching the problem request_id', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/v1/nope' });
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.json().request_id).toBe(res.headers['x-request-id']);
  });
});

describe('domain errors', () => {
  it('map to a problem by a table the compiler checks: a code outside DomainErrorData does not compile, and each mapped code keeps its own status', () => {
    // @ts-expect-error 'made_up' is not a domain error code: it would need its data and its problem first
    class MadeUp extends DomainError<'made_up'> {}
    expect(MadeUp.name).toBe('MadeUp');
    const cases: Array<[DomainError, number, string]> = [
      [new UserNotFoundError('u-1'), 404, 'not_found'],
      [new LastAdminError('u-1'), 409, 'last_admin'],
      [new EmailTakenError('a@example.com'), 409, 'email_taken'],
      [new CompanyNameAmbiguousError('Acme', ['acme', 'ACME']), 409, 'company_name_ambiguous'],
      [new AppenderClosedError(), 503, 'service_unavailable'],
      [new InconsistentTreeError('c-1', 3, 2), 503, 'integrity_failure'],
    ];
    for (const [err, status, code] of cases) expect([domainProblem(err).status, domainProblem(err).code], err.code).toEqual([status, code]);
  });
});
