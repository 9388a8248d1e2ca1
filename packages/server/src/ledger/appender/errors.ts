// What appending can fail with, and what it answers: the appender's vocabulary, apart from how
// it commits. Callers map these to HTTP in one place (routes/append-failure.ts).
export interface AppendedEvent {
  log_id: string;
  seq: number;
  hash: string;
  event_type: string;
  created_at: string;
  /** True when an idempotency key matched an earlier event and nothing was appended. */
  duplicate: boolean;
}

/** An idempotency key reused with a different event_type or data. */
export class IdempotencyConflictError extends Error {
  constructor(
    readonly index: number,
    readonly key: string,
  ) {
    super(`idempotency_key "${key}" was already used for a different event`);
    this.name = 'IdempotencyConflictError';
  }
}

/** Thrown by append() once close() has been called. */
export class AppenderClosedError extends Error {
  constructor() {
    super('the service is shutting down');
    this.name = 'AppenderClosedError';
  }
}

/** The tree in the store does not extend the last checkpoint: signing would fork the log. */
export class InconsistentTreeError extends Error {
  constructor(companyId: string, from: number, to: number) {
    super(`company ${companyId}: the stored tree of size ${to} is not consistent with the checkpoint at size ${from}; no checkpoint signed`);
    this.name = 'InconsistentTreeError';
  }
}
