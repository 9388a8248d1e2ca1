// Login, logout and "who am I" (spec 4.1, 5).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { principalOf, SESSION_COOKIE } from '../auth/authenticate.js';
import { ANY_CREDENTIAL, OWN_ACCOUNT } from '../auth/rules.js';
import { MAX_FAILED_LOGINS_PER_MINUTE } from '../auth/sign-in.js';
import { ApiError, problemResponses } from '../http/problems.js';
import type { Services } from '../services.js';
import { SSO_FLOW_SECONDS, SsoRefusedError } from '../auth/sso.js';

/** The cookie that carries a single sign-on flow from its start to the callback (sealed). */
const OIDC_COOKIE = 'al_oidc';

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
export type AuthServices = Pick<Services, 'signIn' | 'config' | 'sso'>;

export function authRoutes(ctx: AuthServices): FastifyPluginAsyncTypebox {
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
        const t = await ctx.signIn.login(request.body.email, request.body.password);
        return { access_token: t.token, token_type: 'Bearer' as const, expires_in: t.ttlSeconds, expires_at: t.expiresAt, password_change_required: t.passwordChangeRequired };
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
        const s = await ctx.signIn.startSession(request.body.email, request.body.password);
        reply.setCookie(SESSION_COOKIE, s.token, { httpOnly: true, sameSite: 'strict', secure: ctx.config.tls !== undefined, path: '/', maxAge: s.maxAgeSeconds });
        return reply.code(201).send(s.view);
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
      async (request) => ctx.signIn.session(principalOf(request)),
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
        await ctx.signIn.signOut(principalOf(request));
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
        await ctx.signIn.signOut(principalOf(request));
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
        const { company, user, apiKey } = await ctx.signIn.whoAmI(principalOf(request));
        const companyOut = { id: company.company_id, name: company.name, created_at: company.created_at };
        if (apiKey) {
          return {
            credential: 'api_key' as const,
            company: companyOut,
            api_key: { id: apiKey.id, key_prefix: apiKey.keyPrefix, rate_limit_per_minute: apiKey.rateLimitPerMinute },
            company_id: company.company_id,
            user_id: null,
            email: null,
            is_admin: null,
          };
        }
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

    // ---- single sign-on (OpenID Connect; docs/console.md) ----

    app.get(
      '/auth/methods',
      {
        schema: {
          tags: ['auth'],
          operationId: 'signInMethods',
          summary: 'How users sign in here: a password, single sign-on, or both',
          description: 'Public: the console reads it to show its sign-in form and the single sign-on button.',
          response: { 200: Type.Object({ password: Type.Boolean(), oidc: Type.Union([Type.Object({ name: Type.String(), login_url: Type.String() }), Type.Null()]) }) },
        },
      },
      async () => ({ password: ctx.config.localLogin, oidc: ctx.config.oidc ? { name: ctx.config.oidc.name, login_url: '/api/v1/auth/oidc/login' } : null }),
    );

    app.get(
      '/auth/oidc/login',
      {
        schema: {
          tags: ['auth'],
          operationId: 'startSingleSignOn',
          summary: 'Start single sign-on: a redirect to the OpenID provider',
          description:
            'Answers 302 to the provider (authorization code flow with PKCE S256, state and nonce), with the flow sealed in a short-lived HttpOnly cookie (SameSite=Lax: the provider sends the browser back with a top-level navigation). `return` is the console page to come back to. 404 when OIDC_ISSUER is unset.',
          querystring: Type.Object({ return: Type.Optional(Type.String({ maxLength: 500 })) }, { additionalProperties: false }),
          response: { 302: Type.Null(), ...problemResponses(400, 404, 503) },
        },
      },
      async (request, reply) => {
        if (!ctx.sso) throw new ApiError(404, 'not_found', 'Single sign-on is not configured here (OIDC_ISSUER)');
        let started;
        try {
          started = await ctx.sso.start(request.query.return ?? '#/');
        } catch (err) {
          request.log.warn({ err }, 'single sign-on: the provider could not be reached');
          throw new ApiError(503, 'service_unavailable', 'The single sign-on provider could not be reached; retry, or sign in with a password', { headers: { 'Retry-After': '5' } });
        }
        reply.setCookie(OIDC_COOKIE, started.cookie, { httpOnly: true, sameSite: 'lax', secure: ctx.config.tls !== undefined, path: '/api/v1/auth/oidc', maxAge: SSO_FLOW_SECONDS });
        return reply.code(302).header('location', started.url).send(null);
      },
    );

    app.get(
      '/auth/oidc/callback',
      {
        schema: {
          tags: ['auth'],
          operationId: 'finishSingleSignOn',
          summary: 'Where the OpenID provider sends the browser back',
          description:
            "Exchanges the code (with the PKCE verifier), checks state, nonce and the ID token, the verified email's domain and the role claim, creates the user the first time, sets the console session cookie and answers 302 to the console page the sign-in started from. A refusal answers 302 to the console's sign-in page, saying why.",
          querystring: Type.Object({}, { additionalProperties: true }),
          response: { 302: Type.Null(), ...problemResponses(404) },
        },
      },
      async (request, reply) => {
        if (!ctx.sso) throw new ApiError(404, 'not_found', 'Single sign-on is not configured here (OIDC_ISSUER)');
        const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
        reply.clearCookie(OIDC_COOKIE, { path: '/api/v1/auth/oidc' });
        try {
          const { session, back } = await ctx.sso.finish(query, request.cookies[OIDC_COOKIE]);
          reply.setCookie(SESSION_COOKIE, session.token, { httpOnly: true, sameSite: 'strict', secure: ctx.config.tls !== undefined, path: '/', maxAge: session.maxAgeSeconds });
          return reply.code(302).header('location', `/console/${back}`).send(null);
        } catch (err) {
          if (!(err instanceof SsoRefusedError)) throw err;
          return reply.code(302).header('location', `/console/#/?sso_error=${encodeURIComponent(err.message)}`).send(null);
        }
      },
    );
  };
}
