// Resolves the caller's credential and enforces what each route accepts.
// Credentials: X-API-Key, Authorization: Bearer (an access token or an API key), or the console's
// session cookie (an access token flagged as a session, never accepted as a bearer token): a
// session has an idle deadline, moved forward as it is used, and every state-changing request
// sent with it must carry X-CSRF-Token (an HMAC of the session under the secrets key, so every
// process can check it and no CSRF secret is stored). The cookie is HttpOnly, SameSite=Strict, and
// Secure when the service serves TLS.
// A route declares `config: { auth: { accept: [...], role? } }`; routes without it are
// public. The hook runs at onRequest, before the body is read, so an unauthenticated
// or over-limit caller costs no parsing.
import type { TrailActor } from '../kernel/actor.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http/problems.js';
import type { CounterStore } from '../ratelimit/counter.js';
import type { UserRole } from '../store/schema.js';
import type { AccountStore } from '../store/accounts.js';
import { iso } from '../kernel/time.js';
import { ACCESS_TOKEN_PREFIX, API_KEY_PREFIX, digestsEqual, hashSecret } from './secrets.js';

export type CredentialKind = 'user' | 'api_key';

export interface AuthRule {
  accept: CredentialKind[];
  /** For user credentials: the roles allowed (every role when absent). */
  roles?: readonly UserRole[];
  /** Reachable by a user who still has to replace a one-time password. */
  allowedBeforePasswordChange?: boolean;
}

export type Principal =
  | { kind: 'user'; companyId: string; userId: string; role: UserRole; email: string; tokenHash: string; passwordChangeRequired: boolean; session: boolean }
  | { kind: 'api_key'; companyId: string; keyId: string; keyPrefix: string; rateLimitPerMinute: number };

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | undefined;
  }
  interface FastifyContextConfig {
    auth?: AuthRule;
  }
}

const RATE_WINDOW_MS = 60_000;

/** The principal of an authenticated route (the hook guarantees it is set). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error('principalOf called on a route without auth');
  return request.principal;
}

/** The console's session cookie. */
export const SESSION_COOKIE = 'al_session';
/** Methods that change nothing: no CSRF token needed. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/**
 * An idle deadline is written again only when it would move by more than this: at most one write
 * every 5 s per active session, not one per request, so a session's real idle timeout is its
 * setting less at most 5 s (a 1/12 of it for short settings). A fixed minute once made a 60 s
 * timeout end sessions in use.
 */
export const touchGranularityMs = (idleTimeoutSeconds: number) => Math.min(5_000, (idleTimeoutSeconds * 1000) / 12);

export interface AuthenticationDeps {
  accounts: AccountStore;
  counters: CounterStore;
  clock: () => number;
  /** The CSRF token of a session (by its token hash). */
  csrfToken: (tokenHash: string) => string;
  sessionIdleTimeoutSeconds: number;
}

export function registerAuthentication(app: FastifyInstance, deps: AuthenticationDeps): void {
  app.decorateRequest('principal', undefined);

  // Document each route's accepted credentials in OpenAPI from the same declaration.
  app.addHook('onRoute', (route) => {
    const rule = route.config?.auth;
    if (!rule) return;
    route.schema ??= {};
    (route.schema as { security?: unknown }).security = rule.accept.flatMap((k): Array<Record<string, string[]>> => (k === 'user' ? [{ bearerAuth: [] }] : [{ apiKeyAuth: [] }, { apiKeyBearer: [] }]));
    // The roles a user credential needs, for clients and for the role matrix test.
    if (rule.roles) (route.schema as Record<string, unknown>)['x-required-roles'] = rule.roles;
  });

  app.addHook('onRequest', async (request, reply) => {
    const rule = request.routeOptions.config.auth;
    if (!rule) return;
    const presented = readCredential(request);
    if (!presented) {
      reply.header('WWW-Authenticate', 'Bearer realm="audit-ledger"');
      throw new ApiError(401, 'missing_credential', describeAccepted(rule));
    }
    const principal =
      presented.kind === 'api_key' ? await resolveApiKey(deps.accounts, presented.secret) : await resolveAccessToken(deps, presented.secret, presented.viaCookie === true);
    if (!principal) {
      reply.header('WWW-Authenticate', 'Bearer realm="audit-ledger", error="invalid_token"');
      throw new ApiError(
        401,
        'invalid_credential',
        presented.kind === 'api_key' ? 'The API key is not valid or has been revoked' : 'The access token is not valid, has expired or has been revoked',
      );
    }
    request.principal = principal;
    if (principal.kind === 'user' && principal.session && !SAFE_METHODS.has(request.method)) {
      const sent = request.headers['x-csrf-token'];
      const expected = deps.csrfToken(principal.tokenHash);
      if (typeof sent !== 'string' || !digestsEqual(hashSecret(sent), hashSecret(expected))) {
        throw new ApiError(403, 'csrf_failed', 'A request that changes something, sent with the session cookie, needs the X-CSRF-Token header (from POST or GET /api/v1/auth/session)');
      }
    }
    if (principal.kind === 'api_key') await enforceKeyLimit(deps.counters, principal, reply);
    if (!rule.accept.includes(principal.kind)) {
      throw new ApiError(403, 'forbidden', rule.accept.includes('user') ? "This endpoint accepts only a user's bearer token, not an API key" : 'This endpoint accepts only an API key');
    }
    if (principal.kind === 'user' && rule.roles && !rule.roles.includes(principal.role)) {
      throw new ApiError(403, 'forbidden', `This endpoint requires the ${rule.roles.join(' or ')} role; yours is ${principal.role}`);
    }
    // A one-time password was used: nothing but setting one's own password (and who am I, logout) until then.
    if (principal.kind === 'user' && principal.passwordChangeRequired && !rule.allowedBeforePasswordChange) {
      throw new ApiError(403, 'password_change_required', 'Set your own password first: POST /api/v1/auth/password');
    }
  });
}

function readCredential(request: FastifyRequest): { kind: CredentialKind; secret: string; viaCookie?: boolean } | undefined {
  const apiKey = request.headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey !== '') return { kind: 'api_key', secret: apiKey.trim() };
  const authz = request.headers.authorization;
  const m = authz ? /^Bearer\s+(\S+)\s*$/i.exec(authz) : null;
  if (!m?.[1]) {
    // No header credential: the console's session cookie, if any.
    const cookie = request.cookies?.[SESSION_COOKIE];
    return typeof cookie === 'string' && cookie !== '' ? { kind: 'user', secret: cookie, viaCookie: true } : undefined;
  }
  // Many agent SDKs send every credential as a bearer token: recognize API keys by prefix.
  return { kind: m[1].startsWith(API_KEY_PREFIX) ? 'api_key' : 'user', secret: m[1] };
}

function describeAccepted(rule: AuthRule): string {
  const ways = rule.accept.map((k) => (k === 'user' ? 'Authorization: Bearer <access token>' : 'X-API-Key: <API key>'));
  return `Send ${ways.join(' or ')}`;
}

async function resolveApiKey(accounts: AccountStore, secret: string): Promise<Principal | undefined> {
  if (!secret.startsWith(API_KEY_PREFIX)) return undefined;
  const hash = hashSecret(secret);
  const key = await accounts.findApiKeyByHash(hash);
  if (!key || key.status !== 'active' || !digestsEqual(key.key_hash, hash)) return undefined;
  return { kind: 'api_key', companyId: key.company_id, keyId: key.key_id, keyPrefix: key.key_prefix, rateLimitPerMinute: key.rate_limit_per_minute };
}

async function resolveAccessToken(deps: AuthenticationDeps, secret: string, viaCookie: boolean): Promise<Principal | undefined> {
  if (!secret.startsWith(ACCESS_TOKEN_PREFIX)) return undefined;
  const now = deps.clock();
  const hash = hashSecret(secret);
  const grant = await deps.accounts.findAccessToken(hash);
  if (!grant || grant.revoked_at !== null || grant.disabled_at !== null || Date.parse(grant.expires_at) <= now) return undefined;
  // A session token only as the cookie (where scripts cannot read it); a bearer token never as one.
  const session = grant.session === 1;
  if (session !== viaCookie) return undefined;
  if (session) {
    const idle = Date.parse(grant.idle_expires_at ?? '');
    if (!(idle > now)) return undefined;
    const next = now + deps.sessionIdleTimeoutSeconds * 1000;
    if (next - idle > touchGranularityMs(deps.sessionIdleTimeoutSeconds)) await deps.accounts.touchSession(grant.company_id, hash, iso(Math.min(next, Date.parse(grant.expires_at))));
  }
  return {
    kind: 'user',
    companyId: grant.company_id,
    userId: grant.user_id,
    role: grant.role,
    email: grant.email,
    tokenHash: hash,
    passwordChangeRequired: grant.password_change_required === 1,
    session,
  };
}

/** Counts the request against the key's per-minute budget; 429 past it. Headers go on every answer. */
async function enforceKeyLimit(counters: CounterStore, principal: Extract<Principal, { kind: 'api_key' }>, reply: FastifyReply): Promise<void> {
  const limit = principal.rateLimitPerMinute;
  const { count, resetMs } = await counters.hit(`key:${principal.keyId}`, RATE_WINDOW_MS);
  const resetSeconds = Math.max(1, Math.ceil(resetMs / 1000));
  reply.header('RateLimit-Limit', String(limit));
  reply.header('RateLimit-Remaining', String(Math.max(0, limit - count)));
  reply.header('RateLimit-Reset', String(resetSeconds));
  if (count > limit) {
    throw new ApiError(429, 'rate_limited', `This API key allows ${limit} requests per minute; retry after ${resetSeconds} s`, {
      headers: { 'Retry-After': String(resetSeconds) },
    });
  }
}

/** The actor of an authenticated request, as the service's entries name it (routes pass principalOf(request)). */
export function actorOf(p: Principal): TrailActor {
  return p.kind === 'user' ? { kind: 'user', user_id: p.userId, email: p.email } : { kind: 'api_key', key_id: p.keyId, key_prefix: p.keyPrefix };
}
