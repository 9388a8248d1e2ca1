// Signing in and out, without HTTP: the login lockout (and its trail entry), issuing access tokens
// and console sessions, a session's CSRF token, and who a credential is. routes/auth.ts parses,
// calls one method and shapes the answer; services.test.ts drives this directly.
import { DomainError } from '../kernel/domain-error.js';
import type { Config } from '../kernel/config.js';
import type { AdminTrail } from '../ingestion/recorder.js';
import type { CounterStore } from '../ratelimit/counter.js';
import type { AccountStore, Company, User } from '../store/accounts.js';
import type { SecretBox } from '../store/secret-box.js';
import { iso } from '../kernel/time.js';
import type { UserAdmin } from '../users/admin.js';
import type { Principal } from './authenticate.js';
import { dummyPasswordHash, verifyPassword } from '../crypto/passwords.js';
import { ACCESS_TOKEN_PREFIX, hashSecret, newSecret } from './secrets.js';

/** Failed logins for one email within a minute before further attempts are refused. */
export const MAX_FAILED_LOGINS_PER_MINUTE = 10;
const LOCK_WINDOW_MS = 60_000;

/** The email or password is wrong, or the user is disabled (the same answer: nothing tells an attacker the account exists). */
export class InvalidLoginError extends DomainError<'invalid_login'> {
  constructor() {
    super('invalid_login', 'The email or password is incorrect', {});
  }
}

/** Too many failed logins for this email within the minute: retry after the given seconds. */
export class LoginLockedError extends DomainError<'too_many_login_attempts'> {
  constructor(retryAfterSeconds: number) {
    super('too_many_login_attempts', `Too many failed logins for this email; retry after ${retryAfterSeconds} s`, { retryAfterSeconds });
  }
}

/** The credential names a company or user that no longer exists. */
export class StaleCredentialError extends DomainError<'stale_credential'> {
  constructor(message: string) {
    super('stale_credential', message, {});
  }
}

/** LOCAL_LOGIN=off: passwords are not accepted, single sign-on only. */
export class LocalLoginOffError extends DomainError<'local_login_off'> {
  constructor() {
    super('local_login_off', 'Sign-in with a password is turned off here (LOCAL_LOGIN=off): use single sign-on', {});
  }
}

/** Only a console session (the cookie) has a CSRF token. */
export class SessionRequiredError extends DomainError<'session_required'> {
  constructor() {
    super('session_required', 'Only a console session (the session cookie) has a CSRF token', {});
  }
}

export interface SignInDeps {
  accounts: AccountStore;
  counters: CounterStore;
  trail: AdminTrail;
  userAdmin: UserAdmin;
  secretBox: SecretBox;
  clock: () => number;
  config: Pick<Config, 'accessTokenTtlSeconds' | 'sessionMaxAgeSeconds' | 'sessionIdleTimeoutSeconds' | 'localLogin'>;
}

export interface IssuedToken {
  token: string;
  expiresAt: string;
  ttlSeconds: number;
  passwordChangeRequired: boolean;
}

export interface SessionView {
  csrf_token: string;
  expires_at: string;
  idle_timeout_seconds: number;
  password_change_required: boolean;
  user: { id: string; email: string; role: string };
}

export interface IssuedSession {
  /** The cookie's value (shown once) and how long the cookie lives. */
  token: string;
  maxAgeSeconds: number;
  view: SessionView;
}

export type WhoAmI = { company: Company; apiKey: { id: string; keyPrefix: string; rateLimitPerMinute: number }; user?: undefined } | { company: Company; user: User; apiKey?: undefined };

export class SignIn {
  constructor(private readonly deps: SignInDeps) {}

  /** An access token for an email and password (spec 4.1). */
  async login(email: string, password: string): Promise<IssuedToken> {
    const user = await this.checkPassword(email, password);
    const ttl = this.deps.config.accessTokenTtlSeconds;
    const { token, expiresAt } = await this.issue(user, ttl);
    return { token, expiresAt, ttlSeconds: ttl, passwordChangeRequired: user.password_change_required === 1 };
  }

  /** A console session: the same check, a token that also ends after the idle timeout, and its CSRF token. */
  async startSession(email: string, password: string): Promise<IssuedSession> {
    return this.startSessionFor(await this.checkPassword(email, password));
  }

  /** A console session for a user already authenticated (a password checked, or single sign-on). */
  async startSessionFor(user: User): Promise<IssuedSession> {
    const { sessionMaxAgeSeconds: maxAge, sessionIdleTimeoutSeconds: idle } = this.deps.config;
    const { token, tokenHash, expiresAt } = await this.issue(user, maxAge, idle);
    return {
      token,
      maxAgeSeconds: maxAge,
      view: {
        csrf_token: this.csrfToken(tokenHash),
        expires_at: expiresAt,
        idle_timeout_seconds: idle,
        password_change_required: user.password_change_required === 1,
        user: { id: user.user_id, email: user.email, role: user.role },
      },
    };
  }

  /** The session's CSRF token and limits again (after a page reload). */
  async session(p: Principal): Promise<SessionView> {
    if (p.kind !== 'user' || !p.session) throw new SessionRequiredError();
    const user = await this.deps.accounts.getUser(p.companyId, p.userId);
    const grant = await this.deps.accounts.findAccessToken(p.tokenHash);
    return {
      csrf_token: this.csrfToken(p.tokenHash),
      expires_at: grant?.expires_at ?? iso(this.deps.clock()),
      idle_timeout_seconds: this.deps.config.sessionIdleTimeoutSeconds,
      password_change_required: p.passwordChangeRequired,
      user: { id: p.userId, email: p.email, role: user?.role ?? p.role },
    };
  }

  /** Revokes the user's token or session at once (an API key is revoked by its own route). */
  async signOut(p: Principal): Promise<void> {
    if (p.kind === 'user') await this.deps.accounts.revokeAccessToken(p.companyId, p.tokenHash, iso(this.deps.clock()));
  }

  /** The company and the user or API key a credential belongs to. */
  async whoAmI(p: Principal): Promise<WhoAmI> {
    const company = await this.deps.accounts.getCompany(p.companyId);
    if (!company) throw new StaleCredentialError('The credential belongs to no company');
    if (p.kind === 'api_key') return { company, apiKey: { id: p.keyId, keyPrefix: p.keyPrefix, rateLimitPerMinute: p.rateLimitPerMinute } };
    const user = await this.deps.accounts.getUser(p.companyId, p.userId);
    if (!user) throw new StaleCredentialError('The user no longer exists');
    return { company, user };
  }

  /** The CSRF token of a session: a MAC of its token hash, so nothing more is stored. */
  csrfToken(tokenHash: string): string {
    return this.deps.secretBox.mac('csrf', tokenHash);
  }

  /**
   * The user an email and password name, or InvalidLoginError (also for a disabled user); after
   * MAX_FAILED_LOGINS_PER_MINUTE failures for one email, LoginLockedError until the minute is over.
   */
  private async checkPassword(emailInput: string, password: string): Promise<User> {
    if (!this.deps.config.localLogin) throw new LocalLoginOffError();
    const { accounts, counters, trail, userAdmin } = this.deps;
    const email = emailInput.trim().toLowerCase();
    const lockKey = `login:${email}`;
    // Reserve this attempt's place in the failure count before checking the password, in one
    // atomic step, so parallel guesses cannot all pass a check made before any of them failed.
    const reserved = await counters.hit(lockKey, LOCK_WINDOW_MS);
    if (reserved.count > MAX_FAILED_LOGINS_PER_MINUTE) {
      // The first attempt over the threshold is recorded in the user's company chain (an unknown email has no chain).
      if (reserved.count === MAX_FAILED_LOGINS_PER_MINUTE + 1) {
        const target = await accounts.findUserByEmail(email);
        if (target) {
          await trail.record(target.company_id, 'auth.login_locked', { kind: 'service', task: 'login' }, {
            subject: { kind: 'user', user_id: target.user_id, email: target.email },
            failed_attempts: MAX_FAILED_LOGINS_PER_MINUTE,
            window_seconds: LOCK_WINDOW_MS / 1000,
          });
        }
      }
      throw new LoginLockedError(Math.max(1, Math.ceil(reserved.resetMs / 1000)));
    }
    const user = await accounts.findUserByEmail(email);
    // Verify against a dummy hash for unknown emails: same work, same answer.
    const passwordOk = await verifyPassword(user?.password_hash ?? (await dummyPasswordHash()), password);
    // A failed attempt keeps its reservation; a successful one gives it back.
    if (!user || !passwordOk || user.disabled_at !== null) throw new InvalidLoginError();
    await counters.release(lockKey);
    // A user created outside the service (`users create`) is in the trail before their first action.
    if (user.trail_pending !== null) await userAdmin.recordCreatedOutside();
    return user;
  }

  /** A new access token for the user (only its hash is stored); with an idle timeout for a session. */
  private async issue(user: User, lifetimeSeconds: number, idleSeconds?: number): Promise<{ token: string; tokenHash: string; expiresAt: string }> {
    const token = newSecret(ACCESS_TOKEN_PREFIX);
    const tokenHash = hashSecret(token);
    const now = this.deps.clock();
    const expiresAt = iso(now + lifetimeSeconds * 1000);
    await this.deps.accounts.insertAccessToken({
      company_id: user.company_id,
      token_hash: tokenHash,
      user_id: user.user_id,
      created_at: iso(now),
      expires_at: expiresAt,
      ...(idleSeconds === undefined ? {} : { idle_expires_at: iso(now + idleSeconds * 1000) }),
    });
    return { token, tokenHash, expiresAt };
  }
}
