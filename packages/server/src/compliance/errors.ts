// What a compliance request can be refused for, as domain errors (http/domain-problems.ts maps them).
import { DomainError } from '../kernel/domain-error.js';

/** Some entries are under an active legal hold: nothing was erased. Release the hold first, or leave those entries out. */
export class UnderLegalHoldError extends DomainError<'under_legal_hold'> {
  constructor(holdId: string, caseReference: string | null, logIds: string[]) {
    super('under_legal_hold', `${logIds.length} of the entries are under legal hold ${holdId}${caseReference ? ` (case ${caseReference})` : ''}; nothing was erased`, { holdId, caseReference, logIds });
  }
}

/** Some entries cannot be erased: format version 1 (its hash covers the content itself), or written by the service under a reserved source. */
export class NotErasableError extends DomainError<'not_erasable'> {
  constructor(logIds: string[], reason: string) {
    super('not_erasable', `${logIds.length} of the entries cannot be erased: ${reason}; nothing was erased`, { logIds, reason });
  }
}

/** Named entries that the company does not have. */
export class EntriesNotFoundError extends DomainError<'entries_not_found'> {
  constructor(logIds: string[]) {
    super('entries_not_found', `No entries ${logIds.slice(0, 5).join(', ')}${logIds.length > 5 ? ` and ${logIds.length - 5} more` : ''} in this company; nothing was erased`, { logIds });
  }
}

export class HoldNotFoundError extends DomainError<'hold_not_found'> {
  constructor(holdId: string) {
    super('hold_not_found', `No legal hold ${holdId} in this company`, { holdId });
  }
}

export class HoldReleasedError extends DomainError<'hold_released'> {
  constructor(holdId: string) {
    super('hold_released', `Legal hold ${holdId} was already released`, { holdId });
  }
}
