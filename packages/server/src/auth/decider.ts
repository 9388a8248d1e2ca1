// Who makes a governance decision: always the person of the session or bearer token, never a name
// in the body (the DECIDE rule admits users only; an API key reaching here is refused).
import type { FastifyRequest } from 'fastify';
import type { Decider } from '../kernel/actor.js';
import { ApiError } from '../http/problems.js';
import { principalOf } from './authenticate.js';

/** The reviewer deciding, from the session (the DECIDE rule admits users only). */
export function deciderOf(request: FastifyRequest): Decider {
  const p = principalOf(request);
  if (p.kind !== 'user') throw new ApiError(403, 'forbidden', 'a decision is a person\'s: sign in as a reviewer or admin');
  return { user_id: p.userId, email: p.email, role: p.role };
}
