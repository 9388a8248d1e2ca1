// Ingestion without HTTP: what a client sent becomes the events the appender commits, under the
// rules no schema can say (the reserved source, the Idempotency-Key header against the body's
// key, the entry size, the depth), and the usage it counts. routes/logs.ts parses, calls one
// method, and answers with the committed entries (an append's own errors keep their item index,
// which the route names in the body).
import { setImmediate as yieldTurn } from 'node:timers/promises';
import type { Config } from '../kernel/config.js';
import { type FieldError, InputError } from '../kernel/domain-error.js';
import type { Appender } from '../ledger/appender.js';
import type { AppendedEvent } from '../ledger/appender/errors.js';
import type { PreparedEvent } from '../ledger/appender/types.js';
import type { UsageCounter } from '../ops/usage.js';
import { RESERVED_SOURCE_PREFIX } from '../store/columns.js';
import { isReservedSource, type LogInputT, prepareEvent } from './input.js';

/** Events validated between turns of the event loop: a large batch does not hold other requests up for all of it. */
const PREPARE_SLICE = 200;

/** Who sends: the company, and the API key (null for a user). */
export interface Sender {
  companyId: string;
  keyId: string | null;
}

/**
 * Checks made on events once they are committed (the governance layer's: an execution against
 * its approval, an evaluation against the policy register), answered beside each event as `M`.
 */
export interface CommitChecks<M extends object> {
  /** Whether an event needs a check: called for every event, so it must be cheap. */
  needs(e: PreparedEvent): boolean;
  afterAppend(companyId: string, events: PreparedEvent[], results: AppendedEvent[]): Promise<Array<M | undefined>>;
}

/** Checks agents' own signatures on prepared events, refusing with the item's pointer (agents/agent-keys.ts is one). */
export interface AgentSignatureCheck {
  check(companyId: string, events: PreparedEvent[], pointer: (i: number) => string): Promise<void>;
}

export interface IngestionDeps<M extends object> {
  appender: Pick<Appender, 'append'>;
  usage: Pick<UsageCounter, 'appended'>;
  config: Pick<Config, 'maxEntryBytes'>;
  checks?: CommitChecks<M>;
  /** Checks agents' own signatures before anything is appended (agents/agent-keys.ts). */
  agentKeys?: AgentSignatureCheck;
}

/** A committed event, with what the checks made on it answered (when it needed one). */
export type CommittedEvent<M extends object = object> = AppendedEvent & Partial<M>;

export class Ingestion<M extends object = object> {
  constructor(private readonly deps: IngestionDeps<M>) {}

  /**
   * One event. An Idempotency-Key header is the key (a body key that differs is refused), and a
   * reuse of it for other content is refused (422) where a body key's is appended and marked.
   */
  async appendOne(sender: Sender, body: LogInputT, idempotencyHeader: string | undefined): Promise<CommittedEvent<M>> {
    const item = { ...body };
    if (idempotencyHeader !== undefined) {
      if (item.idempotency_key != null && item.idempotency_key !== idempotencyHeader) throw new InputError([{ field: '/body/idempotency_key', message: 'differs from the Idempotency-Key header' }]);
      item.idempotency_key = idempotencyHeader;
    }
    const events = await this.prepareAll(sender, [item], () => '/body', idempotencyHeader !== undefined);
    const [result] = await this.commit(sender, events);
    return result as CommittedEvent<M>;
  }

  /** Many events, all or nothing: one invalid item refuses the batch, naming it. */
  async appendBatch(sender: Sender, logs: LogInputT[]): Promise<Array<CommittedEvent<M>>> {
    return this.commit(sender, await this.prepareAll(sender, logs, (i) => `/body/logs/${i}`, false));
  }

  /**
   * One event of another front door (OTLP): the same rules as a body item of POST /logs (the
   * reserved source, the entry size, the depth), without throwing: the event, or what is wrong.
   */
  prepareOne(item: LogInputT, pointer = ''): PreparedEvent | FieldError[] {
    if (isReservedSource(item.source)) return [{ field: `${pointer}/source`, message: `the "${RESERVED_SOURCE_PREFIX}" prefix is reserved for entries the service writes itself` }];
    return prepareEvent(item, pointer, { maxEntryBytes: this.deps.config.maxEntryBytes });
  }

  /**
   * The one commit path of every front door: the events appended together (a 200 means all of
   * them are committed), the usage counted, then the checks made once committed.
   */
  async commit(sender: Sender, events: PreparedEvent[]): Promise<Array<CommittedEvent<M>>> {
    // An event nothing checked answers no mark: every field of M is optional there (Partial<M>).
    const results = (await this.deps.appender.append(sender.companyId, events)) as Array<CommittedEvent<M>>;
    this.deps.usage.appended(sender.companyId, sender.keyId, events, results);
    // Committed first (the ledger keeps what happened whatever the check says), then checked; a
    // request with nothing to check costs one pass over its event types.
    const checks = this.deps.checks;
    if (!checks || !events.some((e) => checks.needs(e))) return results;
    const marks = await checks.afterAppend(sender.companyId, events, results);
    return results.map((r, i) => (marks[i] ? { ...r, ...marks[i] } : r));
  }

  private async prepareAll(sender: Sender, items: LogInputT[], pointer: (i: number) => string, strictKey: boolean): Promise<PreparedEvent[]> {
    const prepared: PreparedEvent[] = [];
    const errors: FieldError[] = [];
    for (const [i, item] of items.entries()) {
      if (i > 0 && i % PREPARE_SLICE === 0) await yieldTurn();
      // Entries from the service itself (the trail, HITL rejections) carry this source; nobody may forge one.
      if (isReservedSource(item.source)) {
        errors.push({ field: `${pointer(i)}/source`, message: `the "${RESERVED_SOURCE_PREFIX}" prefix is reserved for entries the service writes itself` });
        continue;
      }
      const p = prepareEvent(item, pointer(i), { strictKey, maxEntryBytes: this.deps.config.maxEntryBytes });
      if (Array.isArray(p)) errors.push(...p);
      else prepared.push(p);
    }
    if (errors.length) throw new InputError(errors);
    await this.deps.agentKeys?.check(sender.companyId, prepared, pointer);
    return prepared;
  }
}
