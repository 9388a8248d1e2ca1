// Single sign-on against a real OpenID provider (the `oidc-provider` package, run here on loopback
// with its development login pages), driven in Chromium through the console: the authorization code
// flow with PKCE, a user created just in time with the role its groups map to (recorded in the
// administrators' trail), a role changed at the next sign-in, a domain that is not allowed refused
// on the sign-in page, and passwords refused when LOCAL_LOGIN=off.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOTSTRAP, killLeftovers, type Service, startService } from './fault/harness.js';
import { freePort, launchChromium, requireBrowserAndConsole } from './helpers/console-browser.js';
import { call } from './helpers/http.js';
import { createTestDatabase, type TestDatabase } from './helpers/stores.js';

/** The provider's people: their groups decide their role here. */
const PEOPLE: Record<string, { groups: string[]; verified?: boolean; email?: string }> = {
  'olga@acme.example': { groups: ['staff', 'ledger-auditors'] },
  // Issue 42 (10): another identity at the provider claiming ivan's (verified) email.
  'mallory-7': { groups: ['ledger-auditors'], email: 'ivan@acme.example' },
  'ivan@acme.example': { groups: ['ledger-admins'] },
  'eve@evil.example': { groups: ['ledger-admins'] },
  'nobody@acme.example': { groups: ['staff'] },
};

describe('single sign-on with a real OpenID provider, in Chromium', () => {
  let db: TestDatabase;
  let svc: Service;
  let provider: http.Server;
  let browser: Browser;
  let issuer: string;
  const api = (method: string, p: string, headers: Record<string, string>, body?: unknown) => call(`${svc.url}/api/v1${p}`, method, body, headers);

  beforeAll(async () => {
    requireBrowserAndConsole();
    const [providerPort, servicePort] = [await freePort(), await freePort()];
    issuer = `http://127.0.0.1:${providerPort}`;
    const redirect = `http://127.0.0.1:${servicePort}/api/v1/auth/oidc/callback`;
    const oidc = new Provider(issuer, {
      clients: [{ client_id: 'audit-ledger', client_secret: 'a client secret for the test', redirect_uris: [redirect], grant_types: ['authorization_code'], response_types: ['code'] }],
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['groups'] },
      conformIdTokenClaims: false,
      cookies: { keys: ['cookie key of the test provider'] },
      features: { devInteractions: { enabled: true } },
      async findAccount(_ctx: unknown, sub: string) {
        const person = PEOPLE[sub];
        if (!person) return undefined;
        return { accountId: sub, claims: async () => ({ sub, email: person.email ?? sub, email_verified: person.verified ?? true, groups: person.groups }) };
      },
    });
    provider = http.createServer(oidc.callback());
    await new Promise<void>((r) => provider.listen(providerPort, '127.0.0.1', () => r()));
    db = await createTestDatabase('sqlite');
    svc = await startService({
      LEDGER_DATA_DIR: db.dataDir,
      ...BOOTSTRAP,
      PORT: String(servicePort),
      OIDC_ISSUER: issuer,
      OIDC_CLIENT_ID: 'audit-ledger',
      OIDC_CLIENT_SECRET: 'a client secret for the test',
      OIDC_REDIRECT_URI: redirect,
      OIDC_COMPANY: 'Acme SSO',
      OIDC_ALLOWED_DOMAINS: 'acme.example',
      OIDC_ROLE_MAP: 'ledger-admins=admin,ledger-auditors=auditor',
      OIDC_NAME: 'Acme ID',
    });
    browser = await launchChromium();
    expect((provider.address() as AddressInfo).port).toBe(providerPort);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    killLeftovers();
    await new Promise((r) => provider?.close(r));
    await db?.drop();
  });

  /** Signs in at the provider's development pages as `who`, from the console's button. */
  async function signInWithSso(who: string, page?: Page): Promise<Page> {
    const p = page ?? (await browser.newPage({ viewport: { width: 1280, height: 900 } }));
    await p.goto(`${svc.url}/console/#/approvals`);
    await p.getByRole('link', { name: 'Sign in with Acme ID' }).click();
    await p.waitForURL((u) => u.href.startsWith(issuer));
    await p.locator('input[name="login"]').fill(who);
    await p.locator('input[name="password"]').fill('anything');
    await p.locator('button[type="submit"]').click();
    // The provider's consent page, the first time.
    if (await p.locator('button[type="submit"]').count()) {
      if (p.url().startsWith(issuer)) await p.locator('button[type="submit"]').click();
    }
    await p.waitForURL((u) => u.href.startsWith(`${svc.url}/console/`));
    return p;
  }

  it('creates the user just in time with the role its groups map to, and comes back to the page the sign-in started from', async () => {
    const methods = await api('GET', '/auth/methods', {});
    expect(methods.json()).toEqual({ password: true, oidc: { name: 'Acme ID', login_url: '/api/v1/auth/oidc/login' } });
    const p = await signInWithSso('olga@acme.example');
    await p.getByRole('heading', { name: 'Approvals', exact: true }).waitFor();
    expect(await p.locator('header').innerText()).toContain('olga@acme.example (auditor)');
    const [cookie] = (await p.context().cookies()).filter((c) => c.name === 'al_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    // The session works on the API, as the user it names.
    const me = await p.evaluate(async () => (await fetch('/api/v1/auth/me')).json());
    expect(me).toMatchObject({ user: { email: 'olga@acme.example', role: 'auditor' }, company: { name: 'Acme SSO' } });
    await p.close();

    // The administrators' trail says who was created, by whom (the service, via sso), with which role.
    const admin = await signInWithSso('ivan@acme.example');
    await admin.getByRole('heading', { name: 'Approvals', exact: true }).waitFor();
    const created = await admin.evaluate(async () => ((await (await fetch('/api/v1/logs?event_type=user.created&limit=10')).json()) as { items: Array<{ data: unknown }> }).items.map((e) => e.data));
    expect(created).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ actor: { kind: 'service', task: 'sso' }, subject: expect.objectContaining({ email: 'olga@acme.example' }), role: 'auditor', via: 'sso' }),
        expect.objectContaining({ subject: expect.objectContaining({ email: 'ivan@acme.example' }), role: 'admin' }),
      ]),
    );
    await admin.close();
  });

  it('changes the role at the next sign-in when the groups changed, and records it', async () => {
    (PEOPLE['olga@acme.example'] as { groups: string[] }).groups = ['ledger-admins'];
    const p = await signInWithSso('olga@acme.example');
    await p.getByRole('heading', { name: 'Approvals', exact: true }).waitFor();
    expect(await p.locator('header').innerText()).toContain('olga@acme.example (admin)');
    const changed = await p.evaluate(async () => ((await (await fetch('/api/v1/logs?event_type=user.role_changed&limit=10')).json()) as { items: Array<{ data: unknown }> }).items.map((e) => e.data));
    expect(changed).toEqual([expect.objectContaining({ actor: { kind: 'service', task: 'sso' }, previous_role: 'auditor', role: 'admin', via: 'sso' })]);
    await p.close();
  });

  it('refuses a domain that is not allowed and a user whose groups give no role, saying why on the sign-in page', async () => {
    for (const [who, why] of [
      ['eve@evil.example', 'evil.example is not an email domain allowed to sign in here'],
      ['nobody@acme.example', 'none of your groups gives a role here'],
    ] as const) {
      const p = await signInWithSso(who);
      await p.getByRole('alert').filter({ hasText: why }).waitFor();
      await expect.poll(() => p.getByRole('link', { name: 'Sign in with Acme ID' }).count()).toBe(1);
      await p.close();
    }
    const users = await api('POST', '/auth/login', {}, { email: BOOTSTRAP.LEDGER_BOOTSTRAP_EMAIL, password: BOOTSTRAP.LEDGER_BOOTSTRAP_PASSWORD });
    expect(users.status).toBe(200);
    // A callback that was not started here is refused too.
    const forged = await fetch(`${svc.url}/api/v1/auth/oidc/callback?code=abc&state=xyz`, { redirect: 'manual' });
    expect(forged.status).toBe(302);
    expect(decodeURIComponent(String(forged.headers.get('location')))).toContain('the sign-in was not started here');
  });

  it('10: a sign-in is matched by the provider identity (iss + sub), not by email: another subject presenting an admin\'s email is refused, and the last admin is never demoted by a group change', async () => {
    // ivan signed in before (his subject is bound): mallory's sign-in with ivan's email is refused, ivan stays admin.
    const m = await signInWithSso('mallory-7');
    await m.getByRole('alert').filter({ hasText: 'is bound to another sign-in at Acme ID' }).waitFor();
    await m.close();
    const ivan = await signInWithSso('ivan@acme.example');
    await ivan.getByRole('heading', { name: 'Approvals', exact: true }).waitFor();
    expect(await ivan.locator('header').innerText()).toContain('ivan@acme.example (admin)');
    await ivan.close();
    // olga back to auditor (ivan stays an admin, so she may be demoted), then ivan's groups give auditor: he is the last admin, so he stays one, and the refusal is recorded.
    (PEOPLE['olga@acme.example'] as { groups: string[] }).groups = ['ledger-auditors'];
    await (await signInWithSso('olga@acme.example')).close();
    (PEOPLE['ivan@acme.example'] as { groups: string[] }).groups = ['ledger-auditors'];
    const p = await signInWithSso('ivan@acme.example');
    await p.getByRole('heading', { name: 'Approvals', exact: true }).waitFor();
    expect(await p.locator('header').innerText()).toContain('ivan@acme.example (admin)');
    const refused = await p.evaluate(async () => ((await (await fetch('/api/v1/logs?event_type=user.role_change_refused&limit=10')).json()) as { items: Array<{ data: unknown }> }).items.map((e) => e.data));
    expect(refused).toEqual([expect.objectContaining({ actor: { kind: 'service', task: 'sso' }, role: 'admin', asked_role: 'auditor', reason: 'last_admin', via: 'sso' })]);
    await p.close();
    (PEOPLE['ivan@acme.example'] as { groups: string[] }).groups = ['ledger-admins'];
  });

  it('with LOCAL_LOGIN=off, passwords are refused and single sign-on still works', async () => {
    const db2 = await createTestDatabase('sqlite');
    const port = await freePort();
    try {
      // The provider knows only the first service's redirect URI: this one is checked for passwords only.
      const svc2 = await startService({ LEDGER_DATA_DIR: db2.dataDir, ...BOOTSTRAP, PORT: String(port), LOCAL_LOGIN: 'off', OIDC_ISSUER: issuer, OIDC_CLIENT_ID: 'audit-ledger', OIDC_REDIRECT_URI: `http://127.0.0.1:${port}/api/v1/auth/oidc/callback`, OIDC_COMPANY: 'Acme SSO', OIDC_ALLOWED_DOMAINS: 'acme.example', OIDC_DEFAULT_ROLE: 'auditor' });
      const refused = await call(`${svc2.url}/api/v1/auth/login`, 'POST', { email: BOOTSTRAP.LEDGER_BOOTSTRAP_EMAIL, password: BOOTSTRAP.LEDGER_BOOTSTRAP_PASSWORD });
      expect(refused.status).toBe(403);
      expect(refused.json().detail).toContain('LOCAL_LOGIN=off');
      expect((await call(`${svc2.url}/api/v1/auth/methods`, 'GET')).json()).toMatchObject({ password: false, oidc: { name: 'single sign-on' } });
      const start = await fetch(`${svc2.url}/api/v1/auth/oidc/login?return=%23%2Flogs`, { redirect: 'manual' });
      expect(start.status).toBe(302);
      const to = new URL(String(start.headers.get('location')));
      expect(to.origin).toBe(issuer);
      expect(to.searchParams.get('code_challenge_method')).toBe('S256');
      expect(to.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(to.searchParams.get('state')).toBeTruthy();
      expect(to.searchParams.get('nonce')).toBeTruthy();
      expect(String(start.headers.get('set-cookie'))).toMatch(/al_oidc=.*HttpOnly.*SameSite=Lax/i);
    } finally {
      killLeftovers();
      await db2.drop();
    }
  });
});
