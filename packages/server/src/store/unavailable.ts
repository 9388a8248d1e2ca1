// Telling "the database is away" from a bug. During an outage every request that touches the
// store fails the same way; the client deserves 503 with Retry-After (retrying later will work,
// and nothing was committed), and the operator one warn line per outage, not one error with a
// stack per request. The service recovers by itself: the pool reconnects on the next request.

/** How long a client is told to wait before retrying, in seconds. */
export const OUTAGE_RETRY_AFTER_SECONDS = 2;

// PostgreSQL SQLSTATE: class 08 (connection exception), 57P01–57P03 (shutdown, crash,
// cannot connect now), 53300 (too many connections).
const PG_CODE = /^(08...|57P0[1-3]|53300)$/;
const NET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
// SQLite: the file is locked past the busy timeout, or the disk failed or is full.
const SQLITE_CODE = /^SQLITE_(BUSY|IOERR|FULL|CANTOPEN)/;
// node-postgres raises these as plain Errors without a code.
const PG_MESSAGE = /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection closed|terminating connection/i;

/** Whether err (or an error it wraps) means the store cannot be reached right now. */
export function isStoreUnavailable(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (PG_CODE.test(code) || NET_CODES.has(code) || SQLITE_CODE.test(code))) return true;
    if (typeof message === 'string' && PG_MESSAGE.test(message)) return true;
    if (e instanceof AggregateError && e.errors.some(isStoreUnavailable)) return true;
  }
  return false;
}

/** The error's code for the log line; never its message (it may name internal hosts). */
function codeOf(err: unknown): string {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return err instanceof Error ? err.message.slice(0, 80) : 'unknown';
}

export interface OutageReporterDeps {
  clock: () => number;
  warn: (obj: object, msg: string) => void;
  /** Failures further apart than this belong to different outages. */
  quietMs?: number;
}

/** Logs one warn line per outage: the first failure, then nothing until failures stop for quietMs. */
export class OutageReporter {
  private lastFailure = -Infinity;
  private suppressed = 0;

  constructor(private readonly deps: OutageReporterDeps) {}

  report(err: unknown): void {
    const now = this.deps.clock();
    if (now - this.lastFailure > (this.deps.quietMs ?? 10_000)) {
      this.deps.warn(
        { db_error: codeOf(err), earlier_failures: this.suppressed },
        'database unavailable: answering 503 with Retry-After until it is back (one line per outage)',
      );
      this.suppressed = 0;
    } else this.suppressed++;
    this.lastFailure = now;
  }
}
