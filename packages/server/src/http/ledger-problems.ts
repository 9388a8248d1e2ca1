// The ledger's domain errors as problems: what a client is told when the appender refuses or
// fails an append (one mapping for every route that appends: logs, HITL), and when what it asks
// for is not yet covered by a checkpoint. Anything else stays an internal error.
import { ApiError } from './problems.js';
import { AppenderClosedError, IdempotencyConflictError } from '../ledger/appender/errors.js';
import { HeadMovedError, KeyRetiredError } from '../store/chain.js';

/** Rethrows an append error as the problem the client gets; `pointer` locates event i in the body. */
export function appendFailure(err: unknown, pointer: (i: number) => string): never {
  if (err instanceof AppenderClosedError) throw new ApiError(503, 'service_unavailable', 'The service is shutting down; retry on another instance', { headers: { 'Retry-After': '1' } });
  if (err instanceof HeadMovedError) {
    // Another process kept appending to this chain first, every time we tried: transient.
    throw new ApiError(503, 'service_unavailable', 'The chain kept moving under this append (another process is appending); nothing was appended; retry', { headers: { 'Retry-After': '1' } });
  }
  if (err instanceof KeyRetiredError) {
    throw new ApiError(503, 'service_unavailable', 'The signing key was rotated while this append was built, every time it was tried; nothing was appended; retry', { headers: { 'Retry-After': '1' } });
  }
  if (err instanceof IdempotencyConflictError) {
    throw new ApiError(422, 'idempotency_key_reused', `${err.message}; nothing was appended`, {
      errors: [{ field: `${pointer(err.index)}/idempotency_key`, message: 'already used for a different event' }],
    });
  }
  throw err;
}

/** 409 for entries newer than the latest checkpoint, with Retry-After: one is signed within CHECKPOINT_INTERVAL_MS. */
export function notYetCheckpointed(checkpointIntervalMs: number, what: string): ApiError {
  const wait = Math.max(1, Math.ceil(checkpointIntervalMs / 1000));
  return new ApiError(409, 'not_yet_checkpointed', `${what} not yet covered by a checkpoint; one is signed within ${wait} s`, { headers: { 'retry-after': String(wait) } });
}
