// Single sign-on with OpenID Connect (docs/console.md, "Single sign-on"), without HTTP: the
// authorization code flow with PKCE (S256), state and nonce, through openid-client. The flow's
// secrets (state, nonce, code verifier, where to come back) travel in a sealed cookie (AES-GCM under
// the secrets key), so any process can finish what another started and nothing is stored. At the
// callback: the ID token's email must be verified by the provider and of an allowed domain; its role
// claim maps to a role (at every sign-in; a change is recorded); a user seen the first time is
// created in OIDC_COMPANY, just in time, recorded as `user.created` (actor: the service, task sso).
// The ID token's signature is checked against the provider's JWKS, and each flow finishes once.
import { createHash, randomBytes } from 'node:crypto';
import * as client from 'openid-client';
import type { AdminTrail } from '../ingestion/recorder.js';
import { DomainError } from '../kernel/domain-error.js';
import type { OidcConfig } from '../kernel/config.js';
import { iso } from '../kernel/time.js';
import type { AccountStore, User } from '../store/accounts.js';
import type { SecretBox } from '../store/secret-box.js';
import type { UserRole } from '../store/schema.js';
import { hashPassword } from '../crypto/passwords.js';
import type { IssuedSession, SignIn } from './sign-in.js';

/** How long a sign-in may take at the provider. */
export const SSO_FLOW_SECONDS = 600;

/** The sign-in at the provider did not give a user of this service: said on the sign-in page. */
export class SsoRefusedError extends DomainError<'sso_refused'> {
  constructor(reason: string) {
    super('sso_refused', reason, {});
  }
}

export interface SsoDeps {
  config: OidcConfig;
  accounts: AccountStore;
  trail: AdminTrail;
  signIn: Pick<SignIn, 'startSessionFor'>;
  secretBox: SecretBox;
  clock: () => number;
  newId: () => string;
}

interface Flow {
  state: string;
  nonce: string;
  verifier: string;
  back: string;
  at: number;
}

const loopback = (u: URL) => u.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname);

export class SingleSignOn {
  private discovered: Promise<client.Configuration> | undefined;

  constructor(private readonly deps: SsoDeps) {}

  /** The provider's configuration, discovered once (again after a failure). */
  private configuration(): Promise<client.Configuration> {
    const { issuer, clientId, clientSecret } = this.deps.config;
    const url = new URL(issuer);
    this.discovered ??= client
      // The ID token's signature is checked against the provider's JWKS (not only trusted for
      // having come over TLS from the token endpoint): a token signed by any other key is refused.
      .discovery(url, clientId, clientSecret, clientSecret === undefined ? client.None() : client.ClientSecretBasic(clientSecret), { execute: [client.enableNonRepudiationChecks, ...(loopback(url) ? [client.allowInsecureRequests] : [])] })
      .catch((err: unknown) => {
        this.discovered = undefined;
        throw err;
      });
    return this.discovered;
  }

  /** The provider's authorization URL to send the browser to, and the sealed flow cookie. */
  async start(back: string): Promise<{ url: string; cookie: string }> {
    const config = await this.configuration();
    const flow: Flow = { state: client.randomState(), nonce: client.randomNonce(), verifier: client.randomPKCECodeVerifier(), back: safeBack(back), at: this.deps.clock() };
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.deps.config.redirectUri,
      scope: 'openid email profile',
      response_type: 'code',
      code_challenge: await client.calculatePKCECodeChallenge(flow.verifier),
      code_challenge_method: 'S256',
      state: flow.state,
      nonce: flow.nonce,
    });
    return { url: url.href, cookie: this.deps.secretBox.seal(JSON.stringify(flow)) };
  }

  /** Finishes the flow at the callback: a console session for the user, and where to go back to. */
  async finish(callbackQuery: string, cookie: string | undefined): Promise<{ session: IssuedSession; back: string }> {
    let flow: Flow;
    try {
      flow = JSON.parse(this.deps.secretBox.open(cookie ?? '')) as Flow;
    } catch {
      throw new SsoRefusedError('the sign-in was not started here, or its cookie is gone: start again');
    }
    if (this.deps.clock() - flow.at > SSO_FLOW_SECONDS * 1000) throw new SsoRefusedError('the sign-in took too long: start again');
    // A flow ends once, whatever the provider does with a code presented again: a replayed
    // callback (the same URL and flow cookie) is refused before the code is sent anywhere.
    const now = this.deps.clock();
    if (!(await this.deps.accounts.useSsoFlow(createHash('sha256').update(flow.state).digest('hex'), iso(now), iso(now - 2 * SSO_FLOW_SECONDS * 1000)))) {
      throw new SsoRefusedError('this sign-in was already used: start again');
    }
    const config = await this.configuration();
    const current = new URL(this.deps.config.redirectUri);
    current.search = callbackQuery;
    let claims: client.IDToken | undefined;
    try {
      const tokens = await client.authorizationCodeGrant(config, current, { pkceCodeVerifier: flow.verifier, expectedState: flow.state, expectedNonce: flow.nonce, idTokenExpected: true });
      claims = tokens.claims();
    } catch (err) {
      throw new SsoRefusedError(`the provider's answer was refused: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (!claims) throw new SsoRefusedError('the provider gave no ID token');
    const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : '';
    if (!email || claims.email_verified !== true) throw new SsoRefusedError('the provider did not give a verified email address');
    const domain = email.split('@')[1] ?? '';
    if (!this.deps.config.allowedDomains.includes(domain)) throw new SsoRefusedError(`${domain} is not an email domain allowed to sign in here`);
    const role = this.roleOf(claims[this.deps.config.roleClaim]);
    if (!role) throw new SsoRefusedError(`none of your ${this.deps.config.roleClaim} gives a role here`);
    const user = await this.userFor(email, role, String(claims.iss), String(claims.sub));
    if (user.disabled_at !== null) throw new SsoRefusedError('your account here is disabled');
    return { session: await this.deps.signIn.startSessionFor(user), back: flow.back };
  }

  /** The first value of the claim that maps to a role, or the default role. */
  private roleOf(claim: unknown): UserRole | undefined {
    const values = Array.isArray(claim) ? claim.map(String) : typeof claim === 'string' ? [claim] : [];
    for (const m of this.deps.config.roleMap) if (values.includes(m.value)) return m.role;
    return this.deps.config.defaultRole;
  }

  /**
   * The user of a sign-in. A provider identity (iss + sub) is bound to one user at its first
   * sign-in and matched by it afterwards, never by email alone: a sign-in that presents a bound
   * user's email under another subject is refused. The provider's role mapping is applied at
   * every sign-in, except that it never takes the admin role from the company's last active admin
   * (the rule PATCH /users keeps, 409 last_admin): the role is left and the refusal recorded.
   */
  private async userFor(email: string, role: UserRole, issuer: string, subject: string): Promise<User> {
    const { accounts, trail, clock, config } = this.deps;
    const service = { kind: 'service' as const, task: 'sso' };
    const company = await accounts.findCompanyByName(config.company);
    const linked = company ? await accounts.ssoIdentity(company.company_id, issuer, subject) : undefined;
    const existing = linked && company ? await accounts.getUser(company.company_id, linked.user_id) : await accounts.findUserByEmail(email);
    if (existing) {
      if (existing.company_id !== company?.company_id) throw new SsoRefusedError('this email belongs to a user of another company here');
      if (!linked) {
        const bound = await accounts.ssoSubjectOf(existing.company_id, existing.user_id, issuer);
        if (bound !== undefined && bound !== subject) throw new SsoRefusedError(`the account ${email} is bound to another sign-in at ${config.name}: sign in with that one`);
        if (bound === undefined && !(await accounts.linkSsoIdentity({ company_id: existing.company_id, issuer, subject, user_id: existing.user_id, linked_at: iso(clock()) }))) {
          throw new SsoRefusedError('this sign-in is bound to another account here');
        }
      }
      if (existing.role === role || existing.disabled_at !== null) return existing;
      if (existing.role === 'admin' && (await accounts.countActiveAdmins(existing.company_id)) <= 1) {
        await trail.record(existing.company_id, 'user.role_change_refused', service, { subject: { kind: 'user', user_id: existing.user_id, email: existing.email }, role: existing.role, asked_role: role, reason: 'last_admin', via: 'sso' });
        return existing;
      }
      await accounts.updateUser(existing.company_id, existing.user_id, { role });
      await trail.record(existing.company_id, 'user.role_changed', service, { subject: { kind: 'user', user_id: existing.user_id, email: existing.email }, previous_role: existing.role, role, via: 'sso' });
      return { ...existing, role };
    }
    // Just in time: a password nobody knows (local sign-in stays impossible until an admin resets it).
    const { company: created, user } = await accounts.createUser({
      companyName: config.company,
      newCompanyId: this.deps.newId(),
      userId: this.deps.newId(),
      email,
      passwordHash: await hashPassword(randomBytes(32).toString('base64url')),
      role,
      now: iso(clock()),
    });
    await accounts.linkSsoIdentity({ company_id: created.company_id, issuer, subject, user_id: user.user_id, linked_at: iso(clock()) });
    await trail.record(created.company_id, 'user.created', service, { subject: { kind: 'user', user_id: user.user_id, email }, role, via: 'sso', sso_subject: subject });
    return user;
  }
}

/** Only a console hash route comes back (never another site). */
function safeBack(back: string): string {
  return /^#\/[\w\-/?=&%.]*$/.test(back) ? back : '#/';
}
