// The ledger's problems: an append's failure, with the failing item named in the body (every
// route that appends: logs, HITL; the mapping itself is domain-problems.ts).
import { DomainError } from '../kernel/domain-error.js';
import { domainProblem } from './domain-problems.js';

/** Rethrows an append error as the problem the client gets; `pointer` locates event i in the body. */
export function appendFailure(err: unknown, pointer: (i: number) => string): never {
  throw (err instanceof DomainError && domainProblem(err, pointer)) || err;
}
