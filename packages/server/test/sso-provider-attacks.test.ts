// Single sign-on against a provider that misbehaves (issue 42, 11), on both stores. oidc-provider
// (sso.test.ts) never signs with a key outside its JWKS and never takes a code twice, so this
// suite runs a small hostile OpenID provider of its own over real HTTP: discovery, a JWKS and a
// token endpoint that signs ID tokens with whichever key the test says and accepts any code any
// number of times. The service must refuse an ID token whose signature is not by a key of the
// JWKS, and finish each sign-in flow once, whatever the provider accepts.
import { createHash, createPrivateKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { STORE_KINDS } from './helpers/env.js';

const b64u = (b: Buffer | string) => Buffer.from(b).toString('base64url');

interface Grant {
  nonce: string;
  sub: string;
  email: string;
  key: 'published' | 'other';
}

/** A provider that signs with the key it is told and accepts every code every time. */
async function hostileProvider() {
  const published = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const grants = new Map<string, Grant>();
  let tokenCalls = 0;
  const jwk = { ...published.publicKey.export({ format: 'jwk' }), kid: 'k1', use: 'sig', alg: 'RS256' };
  const idToken = (issuer: string, g: Grant) => {
    const now = Math.floor(Date.now() / 1000);
    const header = b64u(JSON.stringify({ alg: 'RS256', kid: 'k1', typ: 'JWT' }));
    const payload = b64u(JSON.stringify({ iss: issuer, sub: g.sub, aud: 'audit-ledger', iat: now, exp: now + 300, nonce: g.nonce, email: g.email, email_verified: true, groups: ['ledger-auditors'] }));
    const key: KeyObject = g.key === 'published' ? published.privateKey : createPrivateKey(other.privateKey.export({ format: 'pem', type: 'pkcs8' }));
    return `${header}.${payload}.${b64u(sign('sha256', Buffer.from(`${header}.${payload}`), key))}`;
  };
  const server = http.createServer((req, res) => {
    const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify(body));
    };
    const url = new URL(req.url ?? '/', issuer);
    if (url.pathname === '/.well-known/openid-configuration') {
      return json(200, { issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks`, response_types_supported: ['code'], subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['RS256'], token_endpoint_auth_methods_supported: ['client_secret_basic'], code_challenge_methods_supported: ['S256'] });
    }
    if (url.pathname === '/jwks') return json(200, { keys: [jwk] });
    if (url.pathname === '/token' && req.method === 'POST') {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        tokenCalls++;
        const grant = grants.get(new URLSearchParams(body).get('code') ?? '');
        if (!grant) return json(400, { error: 'invalid_grant' });
        json(200, { access_token: 'at', token_type: 'Bearer', expires_in: 300, id_token: idToken(issuer, grant) });
      });
      return;
    }
    json(404, { error: 'not_found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { issuer, grants, tokenCalls: () => tokenCalls, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe.each(STORE_KINDS)('single sign-on against a hostile provider on %s', (kind) => {
  let t: TestApp;
  let provider: Awaited<ReturnType<typeof hostileProvider>>;
  beforeAll(async () => {
    provider = await hostileProvider();
    t = await startTestApp(kind, {
      env: {
        OIDC_ISSUER: provider.issuer,
        OIDC_CLIENT_ID: 'audit-ledger',
        OIDC_CLIENT_SECRET: 'a client secret for the test',
        OIDC_REDIRECT_URI: 'http://127.0.0.1:1/api/v1/auth/oidc/callback',
        OIDC_COMPANY: `Hostile SSO ${kind}`,
        OIDC_ALLOWED_DOMAINS: 'acme.example',
        OIDC_ROLE_MAP: 'ledger-auditors=auditor',
      },
    });
  });
  afterAll(async () => {
    await t?.close();
    await provider?.close();
  });

  /** Starts a sign-in and has the provider grant `code` for it: the callback URL and the flow cookie. */
  async function signInAt(code: string, grant: Omit<Grant, 'nonce'>) {
    const start = await t.inject({ method: 'GET', url: '/api/v1/auth/oidc/login?return=%23%2Flogs' });
    expect(start.statusCode, start.body).toBe(302);
    const to = new URL(String(start.headers.location));
    provider.grants.set(code, { ...grant, nonce: String(to.searchParams.get('nonce')) });
    const cookie = String(start.headers['set-cookie']).split(';')[0] ?? '';
    return { url: `/api/v1/auth/oidc/callback?code=${code}&state=${to.searchParams.get('state')}`, cookie };
  }
  const callback = async (flow: { url: string; cookie: string }) => {
    const res = await t.inject({ method: 'GET', url: flow.url, headers: { cookie: flow.cookie } });
    expect(res.statusCode).toBe(302);
    const session = [res.headers['set-cookie']].flat().find((c) => String(c).startsWith('al_session='));
    return { location: String(res.headers.location), session: session === undefined ? undefined : String(session) };
  };
  const usersNamed = async (email: string) => (await t.store.db.selectFrom('users').select('user_id').where('email', '=', email).execute()).length;

  it('11: an ID token signed by a key that is not in the provider\'s JWKS is refused: no session, no user', async () => {
    const email = `mallory-${kind}@acme.example`;
    const forged = await callback(await signInAt(`forged-${kind}`, { sub: 'mallory', email, key: 'other' }));
    expect(forged.session).toBeUndefined();
    expect(decodeURIComponent(forged.location)).toMatch(/^\/console\/#\/\?sso_error=the provider's answer was refused/);
    expect(await usersNamed(email)).toBe(0);
    // The same provider signing with its published key signs in (so the refusal is the key's).
    const good = await callback(await signInAt(`good-${kind}`, { sub: 'alice', email: `alice-${kind}@acme.example`, key: 'published' }));
    expect(good.location).toBe('/console/#/logs');
    expect(good.session).toMatch(/^al_session=.+HttpOnly/i);
  });

  it('11: a replayed callback (same URL, same flow cookie) is refused although the provider takes the code again', async () => {
    const flow = await signInAt(`reused-${kind}`, { sub: 'bob', email: `bob-${kind}@acme.example`, key: 'published' });
    const first = await callback(flow);
    expect(first.session).toBeDefined();
    const calls = provider.tokenCalls();
    const again = await callback(flow);
    expect(again.session).toBeUndefined();
    expect(decodeURIComponent(again.location)).toContain('this sign-in was already used');
    // Refused before the code went anywhere.
    expect(provider.tokenCalls()).toBe(calls);
    // The flow is remembered by the SHA-256 of its state only.
    const state = new URL(flow.url, 'http://x').searchParams.get('state') ?? '';
    const rows = await t.store.db.selectFrom('sso_flow_uses').selectAll().where('state_hash', '=', createHash('sha256').update(state).digest('hex')).execute();
    expect(rows).toHaveLength(1);
  });
});
