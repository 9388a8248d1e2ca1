// The one shape of the service's domain errors: a name (the class's), a stable code, and the
// data a caller needs to act on it. Services throw them and know nothing of HTTP; the HTTP layer
// maps each to a problem in one place per area (http/domain-problems.ts, and the append path's
// http/ledger-problems.ts, which also knows which body item failed).
export abstract class DomainError<Code extends string = string, Data extends object = object> extends Error {
  constructor(
    readonly code: Code,
    message: string,
    readonly data: Data,
  ) {
    super(message);
    this.name = new.target.name;
  }
}
