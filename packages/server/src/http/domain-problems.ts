// Every domain error (domain-error.ts) as the problem a client gets: one function, one case per
// code, so a new error is mapped here and nowhere else. The error handler (problems.ts) calls it
// for whatever a route lets through; routes that append pass the body's item pointers
// (ledger-problems.ts), so a refused item is named. A code with no case stays an internal error.
import type { DomainError } from '../domain-error.js';
import type { JobRow } from '../store/integrity.js';
import { ApiError } from './problems.js';

/** The problem for a domain error, or undefined when it is not one a client can act on. */
export function domainProblem(err: DomainError, pointer: (i: number) => string = (i) => `/${i}`): ApiError | undefined {
  const retry = { headers: { 'Retry-After': '1' } };
  switch (err.code) {
    // the ledger (appends)
    case 'appender_closed':
      return new ApiError(503, 'service_unavailable', 'The service is shutting down; retry on another instance', retry);
    case 'head_moved':
      // Another process kept appending to this chain first, every time we tried: transient.
      return new ApiError(503, 'service_unavailable', 'The chain kept moving under this append (another process is appending); nothing was appended; retry', retry);
    case 'key_retired':
      return new ApiError(503, 'service_unavailable', 'The signing key was rotated while this append was built, every time it was tried; nothing was appended; retry', retry);
    case 'idempotency_key_reused': {
      const { index } = err.data as { index: number };
      return new ApiError(422, 'idempotency_key_reused', `${err.message}; nothing was appended`, {
        errors: [{ field: `${pointer(index)}/idempotency_key`, message: 'already used for a different event' }],
      });
    }
    // integrity
    case 'verification_running': {
      const { job } = err.data as { job: JobRow };
      return new ApiError(409, 'verification_running', `Verification ${job.job_id} is already ${job.status}; poll /api/v1/integrity/jobs/${job.job_id}`, {
        headers: { location: `/api/v1/integrity/jobs/${job.job_id}` },
      });
    }
    // signing keys
    case 'rotation_conflict':
      return new ApiError(409, 'rotation_conflict', `${err.message}; nothing was changed`);
    // accounts and API keys
    case 'active_key_exists':
      return new ApiError(409, 'active_key_exists', 'The company already has an active API key; revoke it (DELETE /api/v1/auth/api_keys/{id}) before creating another');
    // users
    case 'user_not_found':
      return new ApiError(404, 'not_found', err.message);
    case 'last_admin':
      return new ApiError(409, 'last_admin', `${err.message}; nothing was changed`);
    case 'user_input': {
      const { field, status } = err.data as { field: string; status: 400 | 409 };
      return new ApiError(status, status === 409 ? 'email_taken' : 'validation_failed', `${field} ${err.message}`, { errors: [{ field, message: err.message }] });
    }
    // forensics
    case 'trace_not_found':
      return new ApiError(404, 'not_found', err.message);
    // compliance
    case 'under_legal_hold': {
      const { holdId, caseReference, logIds } = err.data as { holdId: string; caseReference: string | null; logIds: string[] };
      return new ApiError(409, 'under_legal_hold', err.message, { extensions: { hold_id: holdId, case_reference: caseReference, log_ids: logIds.slice(0, 100) } });
    }
    case 'not_erasable': {
      const { logIds } = err.data as { logIds: string[] };
      return new ApiError(409, 'not_erasable', err.message, { extensions: { log_ids: logIds.slice(0, 100) } });
    }
    case 'entries_not_found': {
      const { logIds } = err.data as { logIds: string[] };
      return new ApiError(404, 'not_found', err.message, { extensions: { log_ids: logIds.slice(0, 100) } });
    }
    case 'hold_not_found':
      return new ApiError(404, 'not_found', err.message);
    case 'hold_released':
      return new ApiError(409, 'hold_released', `${err.message}; nothing was changed`);
    default:
      return undefined;
  }
}
