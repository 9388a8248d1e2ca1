// The one shape of the service's domain errors: a name (the class's), a stable code, and the
// data a caller needs to act on it. Services throw them and know nothing of HTTP; the HTTP layer
// maps each code to a problem in one table (http/domain-problems.ts), which the compiler holds to
// this list: a new error is added here, and its problem there, or the build fails.
/** One offending field of a request, found by a service (the HTTP layer answers them as `errors` of a 400). */
export interface FieldError {
  /** JSON Pointer into the request part, e.g. "/body/logs/3/event_type". */
  field: string;
  message: string;
}

/** Every domain error's code, with the data it carries. */
export interface DomainErrorData extends GovernanceErrors {
  // the ledger (appends)
  appender_closed: Record<string, never>;
  head_moved: { companyId: string };
  key_retired: { keyId: string };
  idempotency_key_reused: { index: number; key: string };
  inconsistent_tree: { companyId: string; from: number; to: number };
  // any service: what the caller named is not in its company; input it refuses
  not_found: Record<string, never>;
  invalid_input: { errors: FieldError[] };
  // exports and evidence
  invalid_selection: { field: string; fieldMessage: string };
  not_yet_checkpointed: { checkpointIntervalMs: number };
  // integrity and proofs
  tree_size_out_of_range: { field: string; fieldMessage: string };
  /** The open job (a store/integrity JobRow; named by what the problem uses, so this module imports no store). */
  verification_running: { job: { job_id: string; status: string } };
  // signing keys
  rotation_conflict: { keyId: string };
  /** The key a rotation names cannot be taken: used before, or its token cannot be reached. */
  rotation_target: Record<string, never>;
  // agents' own keys (producer signatures)
  agent_key_exists: { keyId: string };
  agent_key_ended: { keyId: string };
  /** Events whose agent signature the register does not bear out; nothing was stored. */
  agent_signature_invalid: { errors: FieldError[] };
  // signing in
  invalid_login: Record<string, never>;
  too_many_login_attempts: { retryAfterSeconds: number };
  stale_credential: Record<string, never>;
  session_required: Record<string, never>;
  local_login_off: Record<string, never>;
  sso_refused: Record<string, never>;
  // accounts, users and API keys
  active_key_exists: { companyId: string };
  company_name_ambiguous: { name: string; matches: string[] };
  email_taken: { email: string };
  user_not_found: { userId: string };
  last_admin: { userId: string };
  user_input: { field: string; status: 400 | 409 };
  // forensics
  trace_not_found: { traceId: string };
  // search
  search_index_off: Record<string, never>;
  search_too_slow: { budgetMs: number };
  ledger_behind_checkpoint: { seenSize: number };
  // compliance
  under_legal_hold: { holdId: string; caseReference: string | null; logIds: string[] };
  not_erasable: { logIds: string[]; reason: string };
  entries_not_found: { logIds: string[] };
  hold_not_found: { holdId: string };
  hold_released: { holdId: string };
}

export type DomainErrorCode = keyof DomainErrorData;

/** What governance's rules refuse (self-approval, not pending, four eyes…): each a code of its own in the table (http/domain-problems.ts), with its title in http/problems.ts. */
export type GovernanceProblem =
  | 'self_approval'
  | 'already_approved'
  | 'not_in_team'
  | 'approval_not_pending'
  | 'approval_expired'
  | 'approval_changed'
  | 'approval_not_active'
  | 'not_a_request'
  | 'nothing_detected'
  | 'incident_closed'
  | 'incident_status_unchanged';

/** Governance refusals carry nothing but their code and message. */
type GovernanceErrors = { [C in GovernanceProblem]: Record<string, never> };

export abstract class DomainError<Code extends DomainErrorCode = DomainErrorCode> extends Error {
  constructor(
    readonly code: Code,
    message: string,
    readonly data: DomainErrorData[Code],
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** Something the caller named is not in its company (an entry, a job, a checkpoint, a trace's entries): 404. */
export class NotFoundError extends DomainError<'not_found'> {
  constructor(message: string) {
    super('not_found', message, {});
  }
}

/** A search ran past its time budget (store/sqlite-reader.ts) and was ended: narrow it (a time range, an event_type, a trace) and ask again. */
export class SearchTooSlowError extends DomainError<'search_too_slow'> {
  constructor(budgetMs: number) {
    super('search_too_slow', `The search ran longer than its budget of ${budgetMs / 1000} s and was stopped: narrow it with a time range (from, to), an event_type, an agent_id or a trace_id`, { budgetMs });
  }
}

/** Words to find while SEARCH_INDEX=off: 409 search_index_off. */
export class SearchIndexOffError extends DomainError<'search_index_off'> {
  constructor() {
    super('search_index_off', 'This service keeps no index of the words inside events (SEARCH_INDEX=off), so it cannot search for words; where conditions still work', {});
  }
}

/** Input a service refuses, each offending field named: 400 validation_failed. */
export class InputError extends DomainError<'invalid_input'> {
  constructor(errors: FieldError[]) {
    super('invalid_input', errors.map((e) => `${e.field} ${e.message}`).join('; '), { errors });
  }
}

/** What was asked for is newer than the latest checkpoint: retry once the next one is signed. */
export class NotYetCheckpointedError extends DomainError<'not_yet_checkpointed'> {
  constructor(what: string, checkpointIntervalMs: number) {
    super('not_yet_checkpointed', `${what} not yet covered by a checkpoint`, { checkpointIntervalMs });
  }
}

/** A tree size outside what the service has signed: proofs are served only up to the latest checkpoint. */
export class TreeSizeOutOfRangeError extends DomainError<'tree_size_out_of_range'> {
  constructor(field: string, fieldMessage: string, message: string) {
    super('tree_size_out_of_range', message, { field, fieldMessage });
  }
}

/** A governance action its rules refuse; the table answers 403 for who may not do it (self-approval), 409 for a state that does not allow it. */
export class GovernanceRefusal extends DomainError<GovernanceProblem> {
  constructor(code: GovernanceProblem, message: string) {
    super(code, message, {});
  }
}
