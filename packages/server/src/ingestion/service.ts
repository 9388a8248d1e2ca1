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
import { type ExecutionBinding, type GovernanceMarks, governed } from '../governance/binding.js';
import { RESERVED_SOURCE_PREFIX } from '../store/columns.js';
import { isReservedSource, type LogInputT, prepareEvent } from './input.js';

/** Events validated between turns of the event loop: a large batch does not hold other requests up for all of it. */
const PREPARE_SLICE = 200;

/** Who sends: the company, and the API key (null for a user). */
export interface Sender {
  companyId: string;
  keyId: string | null;
}

export interface IngestionDeps {
  appender: Pick<Appender, 'append'>;
  usage: Pick<UsageCounter, 'appended'>;
  config: Pick<Config, 'maxEntryBytes'>;
  /** Checks committed executions against their approvals, and policy evaluations against the register. */
  binding?: Pick<ExecutionBinding, 'afterAppend'>;
}

/** A committed event, with the governance checks made on it (when it named an approval or a policy version). */
export type CommittedEvent = AppendedEvent & GovernanceMarks;

export class Ingestion {
  constructor(private readonly deps: IngestionDeps) {}

  /**
   * One event. An Idempotency-Key header is the key (a body key that differs is refused), and a
   * reuse of it for other content is refused (422) where a body key's is appended and marked.
   */
  async appendOne(sender: Sender, body: LogInputT, idempotencyHeader: string | undefined): Promise<CommittedEvent> {
    const item = { ...body };
    if (idempotencyHeader !== undefined) {
      if (item.idempotency_key != null && item.idempotency_key !== idempotencyHeader) throw new InputError([{ field: '/body/idempotency_key', message: 'differs from the Idempotency-Key header' }]);
      item.idempotency_key = idempotencyHeader;
    }
    const events = await this.prepareAll([item], () => '/body', idempotencyHeader !== undefined);
    const [result] = await this.commit(sender, events);
    return result as CommittedEvent;
  }

  /** Many events, all or nothing: one invalid item refuses the batch, naming it. */
  async appendBatch(sender: Sender, logs: LogInputT[]): Promise<CommittedEvent[]> {
    return this.commit(sender, await this.prepareAll(logs, (i) => `/body/logs/${i}`, false));
  }

  private async commit(sender: Sender, events: PreparedEvent[]): Promise<CommittedEvent[]> {
    const results = await this.deps.appender.append(sender.companyId, events);
    this.deps.usage.appended(sender.companyId, sender.keyId, events, results);
    // Committed first (the ledger keeps what happened whatever the check says), then checked; a
    // request with nothing to check costs one pass over its event types.
    if (!this.deps.binding || !events.some(governed)) return results;
    const marks = await this.deps.binding.afterAppend(sender.companyId, events, results);
    return results.map((r, i) => (marks[i] ? { ...r, ...marks[i] } : r));
  }

  private async prepareAll(items: LogInputT[], pointer: (i: number) => string, strictKey: boolean): Promise<PreparedEvent[]> {
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
    return prepared;
  }
}
