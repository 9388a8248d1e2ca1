// Routes guarded by a fixed token from the configuration (METRICS_TOKEN, LEDGER_OPERATOR_TOKEN)
// rather than by a user or an API key. Compared in constant time over SHA-256 digests, so
// neither the token's value nor its length leaks through timing.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../http/problems.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

/** A check that throws 401 unless the request carries `Authorization: Bearer <token>`. */
export function staticBearerToken(token: string, name: string, realm: string): (request: FastifyRequest) => void {
  const expected = digest(token);
  return (request) => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    if (!m) throw new ApiError(401, 'missing_credential', `Send Authorization: Bearer <${name}>`, { headers: { 'WWW-Authenticate': `Bearer realm="${realm}"` } });
    if (!timingSafeEqual(digest(m[1] as string), expected)) throw new ApiError(401, 'invalid_credential', `The ${realm} token is not valid`);
  };
}
