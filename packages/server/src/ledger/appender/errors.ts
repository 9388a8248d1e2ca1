// What appending can fail with, and what it answers: the appender's vocabulary, apart from how
// it commits. Callers map these to HTTP in one place (http/ledger-problems.ts).
import { DomainError } from '../../kernel/domain-error.js';

export interface AppendedEvent {
  log_id: string;
  seq: number;
  hash: string;
  event_type: string;
  created_at: string;
  /** True when an idempotency key matched an earlier event and nothing was appended. */
  duplicate: boolean;
  /** The original entry's log_id when this event reused a body idempotency key for different content (appended anyway); else null. */
  idempotency_conflict_of: string | null;
}

/** An idempotency key reused with a different event_type or data. */
export class IdempotencyConflictError extends DomainError<'idempotency_key_reused'> {
  constructor(index: number, key: string) {
    super('idempotency_key_reused', `idempotency_key "${key}" was already used for a different event`, { index, key });
  }
}

/** Thrown by append() once close() has been called. */
export class AppenderClosedError extends DomainError<'appender_closed'> {
  constructor() {
    super('appender_closed', 'the service is shutting down', {});
  }
}

/** The tree in the store does not extend the last checkpoint: signing would fork the log. */
export class InconsistentTreeError extends DomainError<'inconsistent_tree'> {
  constructor(companyId: string, from: number, to: number) {
    super('inconsistent_tree', `company ${companyId}: the stored tree of size ${to} is not consistent with the checkpoint at size ${from}; no checkpoint signed`, { companyId, from, to });
  }
}
