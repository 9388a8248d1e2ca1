// Every domain error (kernel/domain-error.ts) as the problem a client gets: one table, one entry per
// code, checked by the compiler against DomainErrorData (a code with no entry, or an entry for no
// code, fails the build; each entry gets its code's data typed). The error handler (problems.ts)
// calls it for whatever a route lets through; routes that append pass the body's item pointers
// (ledger-problems.ts), so a refused item is named.
import type { DomainError, DomainErrorCode, DomainErrorData } from '../kernel/domain-error.js';
import { ApiError } from './problems.js';

type Pointer = (i: number) => string;
type ProblemOf<C extends DomainErrorCode> = (data: DomainErrorData[C], message: string, pointer: Pointer) => ApiError;

const retry = { headers: { 'Retry-After': '1' } };
const logIds = (ids: string[]) => ({ log_ids: ids.slice(0, 100) });

const PROBLEMS = {
  // the ledger (appends)
  appender_closed: () => new ApiError(503, 'service_unavailable', 'The service is shutting down; retry on another instance', retry),
  // Another process kept appending to this chain first, every time we tried: transient.
  head_moved: () => new ApiError(503, 'service_unavailable', 'The chain kept moving under this append (another process is appending); nothing was appended; retry', retry),
  key_retired: () => new ApiError(503, 'service_unavailable', 'The signing key was rotated while this append was built, every time it was tried; nothing was appended; retry', retry),
  idempotency_key_reused: ({ index }, message, pointer) =>
    new ApiError(422, 'idempotency_key_reused', `${message}; nothing was appended`, { errors: [{ field: `${pointer(index)}/idempotency_key`, message: 'already used for a different event' }] }),
  inconsistent_tree: (_data, message) => new ApiError(503, 'integrity_failure', `The stored ledger is damaged: ${message}. Nothing was changed. POST /api/v1/integrity/verify names the damage.`),
  // any service
  not_found: (_data, message) => new ApiError(404, 'not_found', message),
  invalid_input: ({ errors }, message) => new ApiError(400, 'validation_failed', message, { errors }),
  // exports and evidence
  invalid_selection: ({ field, fieldMessage }, message) => new ApiError(400, 'validation_failed', message, { errors: [{ field, message: fieldMessage }] }),
  // One is signed within CHECKPOINT_INTERVAL_MS: Retry-After says when.
  not_yet_checkpointed: ({ checkpointIntervalMs }, message) => {
    const wait = Math.max(1, Math.ceil(checkpointIntervalMs / 1000));
    return new ApiError(409, 'not_yet_checkpointed', `${message}; one is signed within ${wait} s`, { headers: { 'retry-after': String(wait) } });
  },
  // integrity and proofs
  tree_size_out_of_range: ({ field, fieldMessage }, message) => new ApiError(400, 'tree_size_out_of_range', message, { errors: [{ field, message: fieldMessage }] }),
  verification_running: ({ job }) =>
    new ApiError(409, 'verification_running', `Verification ${job.job_id} is already ${job.status}; poll /api/v1/integrity/jobs/${job.job_id}`, { headers: { location: `/api/v1/integrity/jobs/${job.job_id}` } }),
  // signing keys
  rotation_conflict: (_data, message) => new ApiError(409, 'rotation_conflict', `${message}; nothing was changed`),
  rotation_target: (_data, message) => new ApiError(409, 'rotation_target', `${message}; nothing was changed`),
  // agents' own keys
  agent_key_exists: (_data, message) => new ApiError(409, 'agent_key_exists', message),
  agent_key_ended: (_data, message) => new ApiError(409, 'agent_key_ended', message),
  agent_signature_invalid: ({ errors }, message) => new ApiError(400, 'agent_signature_invalid', `${message}; nothing was stored`, { errors }),
  // signing in
  invalid_login: (_data, message) => new ApiError(401, 'invalid_login', message),
  too_many_login_attempts: ({ retryAfterSeconds }, message) => new ApiError(429, 'too_many_login_attempts', message, { headers: { 'Retry-After': String(retryAfterSeconds) } }),
  stale_credential: (_data, message) => new ApiError(401, 'invalid_credential', message),
  session_required: (_data, message) => new ApiError(403, 'forbidden', message),
  local_login_off: (_data, message) => new ApiError(403, 'forbidden', message),
  sso_refused: (_data, message) => new ApiError(403, 'forbidden', message),
  // accounts, users and API keys
  active_key_exists: () => new ApiError(409, 'active_key_exists', 'The company already has an active API key; revoke it (DELETE /api/v1/auth/api_keys/{id}) before creating another'),
  company_name_ambiguous: (_data, message) => new ApiError(409, 'company_name_ambiguous', message),
  email_taken: (_data, message) => new ApiError(409, 'email_taken', message, { errors: [{ field: '/body/email', message }] }),
  user_not_found: (_data, message) => new ApiError(404, 'not_found', message),
  last_admin: (_data, message) => new ApiError(409, 'last_admin', `${message}; nothing was changed`),
  user_input: ({ field, status }, message) => new ApiError(status, status === 409 ? 'email_taken' : 'validation_failed', `${field} ${message}`, { errors: [{ field, message }] }),
  // search
  search_index_off: (_data, message) => new ApiError(409, 'search_index_off', message),
  search_too_slow: (_data, message) => new ApiError(422, 'search_too_slow', message),
  // A failover or restore left this company's ledger behind a published checkpoint: an operator decides (docs/operations.md, "Continuity").
  ledger_behind_checkpoint: (_data, message) =>
    new ApiError(503, 'ledger_behind_checkpoint', `${message}. Nothing was appended; appends resume once an operator supplies the missing entries or accepts their loss (audit-ledger continuity)`, { headers: { 'Retry-After': '30' } }),
  // forensics
  trace_not_found: (_data, message) => new ApiError(404, 'not_found', message),
  // compliance
  under_legal_hold: ({ holdId, caseReference, logIds: ids }, message) => new ApiError(409, 'under_legal_hold', message, { extensions: { hold_id: holdId, case_reference: caseReference, ...logIds(ids) } }),
  not_erasable: ({ logIds: ids }, message) => new ApiError(409, 'not_erasable', message, { extensions: logIds(ids) }),
  entries_not_found: ({ logIds: ids }, message) => new ApiError(404, 'not_found', message, { extensions: logIds(ids) }),
  hold_not_found: (_data, message) => new ApiError(404, 'not_found', message),
  hold_released: (_data, message) => new ApiError(409, 'hold_released', `${message}; nothing was changed`),
  // governance: who may not do it (403), a state that does not allow it (409); nothing was changed
  self_approval: (_data, message) => new ApiError(403, 'self_approval', `${message}; nothing was changed`),
  not_in_team: (_data, message) => new ApiError(403, 'not_in_team', `${message}; nothing was changed`),
  already_approved: (_data, message) => new ApiError(409, 'already_approved', `${message}; nothing was changed`),
  approval_not_pending: (_data, message) => new ApiError(409, 'approval_not_pending', `${message}; nothing was changed`),
  approval_expired: (_data, message) => new ApiError(409, 'approval_expired', `${message}; nothing was changed`),
  approval_changed: (_data, message) => new ApiError(409, 'approval_changed', `${message}; nothing was changed`),
  approval_not_active: (_data, message) => new ApiError(409, 'approval_not_active', `${message}; nothing was changed`),
  not_a_request: (_data, message) => new ApiError(409, 'not_a_request', `${message}; nothing was changed`),
  nothing_detected: (_data, message) => new ApiError(409, 'nothing_detected', `${message}; nothing was changed`),
  incident_closed: (_data, message) => new ApiError(409, 'incident_closed', `${message}; nothing was changed`),
  incident_status_unchanged: (_data, message) => new ApiError(409, 'incident_status_unchanged', `${message}; nothing was changed`),
} satisfies { [C in DomainErrorCode]: ProblemOf<C> };

/** The problem for a domain error. */
export function domainProblem(err: DomainError, pointer: Pointer = (i) => `/${i}`): ApiError {
  const problem = PROBLEMS[err.code] as ProblemOf<DomainErrorCode>;
  return problem(err.data, err.message, pointer);
}
