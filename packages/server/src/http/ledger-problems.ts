// The ledger's problems: an append's failure, with the failing item named in the body (every
// route that appends: logs, HITL; the mapping itself is domain-problems.ts), and what is not yet
// covered by a checkpoint.
import { DomainError } from '../domain-error.js';
import { domainProblem } from './domain-problems.js';
import { ApiError } from './problems.js';

/** Rethrows an append error as the problem the client gets; `pointer` locates event i in the body. */
export function appendFailure(err: unknown, pointer: (i: number) => string): never {
  throw (err instanceof DomainError && domainProblem(err, pointer)) || err;
}

/** 409 for entries newer than the latest checkpoint, with Retry-After: one is signed within CHECKPOINT_INTERVAL_MS. */
export function notYetCheckpointed(checkpointIntervalMs: number, what: string): ApiError {
  const wait = Math.max(1, Math.ceil(checkpointIntervalMs / 1000));
  return new ApiError(409, 'not_yet_checkpointed', `${what} not yet covered by a checkpoint; one is signed within ${wait} s`, { headers: { 'retry-after': String(wait) } });
}
