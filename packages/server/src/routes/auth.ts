// Login, logout and "who am I" (spec 4.1, 5).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { principalOf, SESSION_COOKIE } from '../auth/authenticate.js';
import { dummyPasswordHash, verifyPassword } from '../auth/passwords.js';
import { ACCESS_TOKEN_PREFIX, hashSecret, newSecret } from '../auth/secrets.js';
import { ApiError, problemResponses } from '../http/problems.js';
import type { Services } from '../services.js';
import { iso } from '../time.js';
import { ANY_CREDENTIAL, OWN_ACCOUNT } from '../auth/rules.js';

const MAX_FAILED_LOGINS_PER_MINUTE = 10;

const LoginBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 320 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);

const LoginResponse = Type.Object({
  access_token: Type.String({ description: 'Shown once; send as Authorization: Bearer <access_token>' }),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'Seconds until the token expires' }),
  expires_at: Type.String({ format: 'date-time' }),
  password_change_required: Type.Boolean({ description: 'True after an invitation or a reset: POST /auth/password before anything else (other routes answer 403 password_change_required)' }),
});

const SessionResponse = Type.Object({
  csrf_token: Type.String({ description: 'Send as X-CSRF-Token on every request that changes something; GET /auth/session gives it again after a reload' }),
  expires_at: Type.String({ format: 'date-time', description: 'The absolute end of the session (SESSION_MAX_AGE_SECONDS after login)' }),
  idle_timeout_seconds: Type.Integer({ description: 'The session ends after this long without a request' }),
  password_change_required: Type.Boolean(),
  user: Type.Object({ id: Type.String(), email: Type.String(), role: Type.String() }),
});

const Company = Type.Object({ id: Type.String(), name: Type.String(), created_at: Type.String({ format: 'date-time' }) });

const MeResponse = Type.Object({
  credential: Type.Union([Type.Literal('user'), Type.Literal('api_key')]),
  company: Company,
  user: Type.Optional(Type.Object({ id: Type.String(), email: Type.String(), role: Type.String(), created_at: Type.String() })),
  api_key: Type.Optional(
    Type.Object({ id: Type.String(), key_prefix: Type.String(), rate_limit_per_minute: Type.Integer() }),
  ),
  // The flat fields other agent SDKs read (docs/integrations.md): null where an API key is the caller.
  company_id: Type.String({ description: 'Same as company.id' }),
  user_id: Type.Union([Type.String(), Type.Null()], { description: 'Same as user.id; null for an API key' }),
  email: Type.Union([Type.String(), Type.Null()], { description: 'Same as user.email; null for an API key' }),
  is_admin: Type.Union([Type.Boolean(), Type.Null()], { description: "Whether the user's role is admin; null for an API key" }),
});

/** The services these routes use. */
export type AuthServices = Pick<Services, 'accounts' | 'clock' | 'config' | 'counters' | 'secretBox' | 'trail' | 'userAdmin'>;

export function authRoutes(ctx: AuthServices): FastifyPluginAsyncTypebox {
  /**
   * The user an email and password name, or 401 invalid_login (also for a disabled user);
   * after MAX_FAILED_LOGINS_PER_MINUTE failures for one email, 429 until the minute is over.
   */
  const checkPassword = async (emailInput: string, password: string) => {
    const email = emailInput.trim().toLowerCase();
    const lockKey = `login:${email}`;
    // Reserve this attempt's place in the failure count before checking the password, in one
    // atomic step, so parallel guesses cannot all pass a check made before any of them failed.
    const reserved = await ctx.counters.hit(lockKey, 60_000);
    if (reserved.count > MAX_FAILED_LOGINS_PER_MINUTE) {
      // The first attempt over the threshold is recorded in the user's company chain (an unknown email has no chain).
      if (reserved.count === MAX_FAILED_LOGINS_PER_MINUTE + 1) {
        const target = await ctx.accounts.findUserByEmail(email);
        if (target) {
          await ctx.trail.record(target.company_id, 'auth.login_locked', { kind: 'service', task: 'login' }, {
            subject: { kind: 'user', user_id: target.user_id, email: target.email },
            failed_attempts: MAX_FAILED_LOGINS_PER_MINUTE,
            window_seconds: 60,
          });
        }
      }
      const retry = String(Math.max(1, Math.ceil(reserved.resetMs / 1000)));
      throw new ApiError(429, 'too_many_login_attempts', `Too many failed logins for this email; retry after ${retry} s`, {
        headers: { 'Retry-After': retry },
      });
    }
    const user = await ctx.accounts.findUserByEmail(email);
    // Verify against a dummy hash for unknown emails: same work, same answer.
    const passwordOk = await verifyPassword(user?.password_hash ?? (await dummyPasswordHash()), password);
    // A failed attempt keeps its reservation; a successful one gives it back.
    // A disabled user gets the same answer as a wrong password: nothing tells an attacker the account exists.
    if (!user || !passwordOk || user.disabled_at !== null) throw new ApiError(401, 'invalid_login', 'The email or password is incorrect');
    await ctx.counters.release(lockKey);
    // A user created outside the service (`users create`) is in the trail before their first action.
    if (user.trail_pending !== null) await ctx.userAdmin.recordCreatedOutside();
    return user;
  };

  return async (app) => {
    app.post(
      '/auth/login',
      {
        schema: {
          tags: ['auth'],
          operationId: 'login',
          summary: 'Exchange email and password for an access token',
          description: `After ${MAX_FAILED_LOGINS_PER_MINUTE} failed attempts for one email within a minute, further attempts get 429 until the minute is over.`,
          body: LoginBody,
          response: { 200: LoginResponse, ...problemResponses(400, 401, 429) },
        },
      },
      async (request) => {
        const user = await checkPassword(request.body.email, request.body.password);
        const token = newSecret(ACCESS_TOKEN_PREFIX);
        const now = ctx.clock();
        const ttl = ctx.config.accessTokenTtlSeconds;
        const expiresAt = iso(now + ttl * 1000);
        await ctx.accounts.insertAccessToken({
          company_id: user.company_id,
          token_hash: hashSecret(token),
          user_id: user.user_id,
          created_at: iso(now),
          expires_at: expiresAt,
        });
        return { access_token: token, token_type: 'Bearer' as const, expires_in: ttl, expires_at: expiresAt, password_change_required: user.password_change_required === 1 };
      },
    );

    app.post(
      '/auth/session',
      {
        schema: {
          tags: ['auth'],
          operationId: 'createSession',
          summary: 'Sign in to the console: a session cookie and its CSRF token',
          description:
            'Sets the session cookie (HttpOnly, SameSite=Strict, Secure when the service serves TLS, Path=/) and answers its CSRF token. The cookie works on every route a user token works on; requests that change something must also send X-CSRF-Token. It ends after SESSION_IDLE_TIMEOUT_SECONDS without a request, SESSION_MAX_AGE_SECONDS after login, or at DELETE /auth/session. The same lockout as /auth/login.',
          body: LoginBody,
          response: { 201: SessionResponse, ...problemResponses(400, 401, 429) },
        },
      },
      async (request, reply) => {
        const user = await checkPassword(request.body.email, request.body.password);
        const token = newSecret(ACCESS_TOKEN_PREFIX);
        const now = ctx.clock();
        const { sessionMaxAgeSeconds: maxAge, sessionIdleTimeoutSeconds: idle } = ctx.config;
        const tokenHash = hashSecret(token);
        const expiresAt = iso(now + maxAge * 1000);
        await ctx.accounts.insertAccessToken({ company_id: user.company_id, token_hash: tokenHash, user_id: user.user_id, created_at: iso(now), expires_at: expiresAt, idle_expires_at: iso(now + idle * 1000) });
        reply.setCookie(SESSION_COOKIE, token, { httpOnly: true, sameSite: 'strict', secure: ctx.config.tls !== undefined, path: '/', maxAge });
        return reply.code(201).send({
          csrf_token: ctx.secretBox.mac('csrf', tokenHash),
          expires_at: expiresAt,
          idle_timeout_seconds: idle,
          password_change_required: user.password_change_required === 1,
          user: { id: user.user_id, email: user.email, role: user.role },
        });
      },
    );

    app.get(
      '/auth/session',
      {
        config: OWN_ACCOUNT,
        schema: {
          tags: ['auth'],
          operationId: 'getSession',
          summary: "The console session's CSRF token and limits, again (after a page reload)",
          description: 'Only with the session cookie (403 for a bearer token). A page on another site cannot read the answer (same-origin policy), so handing the token out here is safe.',
          response: { 200: SessionResponse, ...problemResponses(401, 403) },
        },
      },
      async (request) => {
        const p = principalOf(request);
        if (p.kind !== 'user' || !p.session) throw new ApiError(403, 'forbidden', 'Only a console session (the session cookie) has a CSRF token');
        const user = await ctx.accounts.getUser(p.companyId, p.userId);
        const grant = await ctx.accounts.findAccessToken(p.tokenHash);
        return {
          csrf_token: ctx.secretBox.mac('csrf', p.tokenHash),
          expires_at: grant?.expires_at ?? iso(ctx.clock()),
          idle_timeout_seconds: ctx.config.sessionIdleTimeoutSeconds,
          password_change_required: p.passwordChangeRequired,
          user: { id: p.userId, email: p.email, role: user?.role ?? p.role },
        };
      },
    );

    app.delete(
      '/auth/session',
      {
        config: OWN_ACCOUNT,
        schema: {
          tags: ['auth'],
          operationId: 'deleteSession',
          summary: 'Sign out of the console',
          description: 'Revokes the session and clears its cookie. Needs X-CSRF-Token, like every request that changes something.',
          response: { 204: Type.Null(), ...problemResponses(401, 403) },
        },
      },
      async (request, reply) => {
        const p = principalOf(request);
        if (p.kind === 'user') await ctx.accounts.revokeAccessToken(p.companyId, p.tokenHash, iso(ctx.clock()));
        reply.clearCookie(SESSION_COOKIE, { path: '/' });
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/auth/logout',
      {
        config: OWN_ACCOUNT,
        schema: {
          tags: ['auth'],
          operationId: 'logout',
          summary: 'Revoke the access token used for this request',
          description: 'Ends the session of the bearer token sent: the token stops working at once. API keys are revoked with DELETE /auth/api_keys/{id}.',
          response: { 204: Type.Null(), ...problemResponses(401, 403) },
        },
      },
      async (request, reply) => {
        const p = principalOf(request);
        if (p.kind === 'user') await ctx.accounts.revokeAccessToken(p.companyId, p.tokenHash, iso(ctx.clock()));
        return reply.code(204).send(null);
      },
    );

    app.get(
      '/auth/me',
      {
        config: ANY_CREDENTIAL,
        schema: {
          tags: ['auth'],
          operationId: 'getMe',
          summary: 'The calling user or API key, and its company',
          description: 'Who the credential belongs to: the user (with role) or the API key, and the company. Flat `company_id`, `user_id`, `email` and `is_admin` are there too, for agent SDKs that read them (null where an API key is the caller).',
          response: { 200: MeResponse, ...problemResponses(401, 429) },
        },
      },
      async (request) => {
        const p = principalOf(request);
        const company = await ctx.accounts.getCompany(p.companyId);
        if (!company) throw new ApiError(401, 'invalid_credential', 'The credential belongs to no company');
        const companyOut = { id: company.company_id, name: company.name, created_at: company.created_at };
        if (p.kind === 'api_key') {
          return {
            credential: 'api_key' as const,
            company: companyOut,
            api_key: { id: p.keyId, key_prefix: p.keyPrefix, rate_limit_per_minute: p.rateLimitPerMinute },
            company_id: company.company_id,
            user_id: null,
            email: null,
            is_admin: null,
          };
        }
        const user = await ctx.accounts.getUser(p.companyId, p.userId);
        if (!user) throw new ApiError(401, 'invalid_credential', 'The user no longer exists');
        return {
          credential: 'user' as const,
          company: companyOut,
          user: { id: user.user_id, email: user.email, role: user.role, created_at: user.created_at },
          company_id: company.company_id,
          user_id: user.user_id,
          email: user.email,
          is_admin: user.role === 'admin',
        };
      },
    );
  };
}
