// The one recorder of the entries the service writes itself, under the reserved sources clients
// cannot forge through POST /logs (`audit-ledger/admin`, `audit-ledger/governance`,
// `audit-ledger/hitl`): prepared as any event is (ingestion/input.ts), appended to the company's
// chain, and committed before the action they record is answered. docs/event-types.md lists the
// event types. Secrets, passwords and their hashes never enter an entry.
import { ADMIN_SOURCE, type JsonObject } from '@audit-ledger/core';
import type { TrailActor } from '../kernel/actor.js';
import { InputError } from '../kernel/domain-error.js';
import type { Appender } from '../ledger/appender.js';
import type { AppendedEvent } from '../ledger/appender/errors.js';
import { RESERVED_SOURCE_PREFIX } from '../store/columns.js';
import { prepareEvent } from './input.js';

export { ADMIN_SOURCE };

export type { TrailActor };

/** Where an entry sits in the company's traces, and its idempotency key (a resumed job appends nothing again). */
export interface Placement {
  trace_id?: string | null | undefined;
  agent_id?: string | null | undefined;
  /** The entry this one is about (an execution, for its check), so the causal graph links them. */
  parent_event_id?: string | null | undefined;
  idempotency_key?: string | undefined;
}

export class Recorder {
  constructor(private readonly deps: { appender: Pick<Appender, 'append'> }) {}

  /**
   * Appends one entry of a reserved source and returns it once committed. What the entry cannot
   * hold (content a caller sent, nested deeper than an entry allows) is an InputError naming the
   * field as the caller sent it; nothing is appended. With an idempotency key, a repeat appends
   * nothing and returns the original entry.
   */
  async record(companyId: string, source: string, eventType: string, data: JsonObject, at: Placement = {}): Promise<AppendedEvent> {
    const [appended] = await this.recordMany(companyId, [{ source, eventType, data, at }]);
    if (!appended) throw new Error(`the appender answered no entry for ${eventType}`);
    return appended;
  }

  /** Several entries in one append (one group of the chain), in order; all or none are prepared. */
  async recordMany(companyId: string, entries: Array<{ source: string; eventType: string; data: JsonObject; at?: Placement }>): Promise<AppendedEvent[]> {
    const events = entries.map(({ source, eventType, data, at = {} }) => {
      if (!source.startsWith(RESERVED_SOURCE_PREFIX)) throw new Error(`the service records only under ${RESERVED_SOURCE_PREFIX}, not ${source}`);
      const event = prepareEvent(
        {
          event_type: eventType,
          source,
          ...(at.trace_id ? { trace_id: at.trace_id } : {}),
          ...(at.agent_id ? { agent_id: at.agent_id } : {}),
          ...(at.parent_event_id ? { parent_event_id: at.parent_event_id } : {}),
          ...(at.idempotency_key ? { idempotency_key: at.idempotency_key } : {}),
          data,
        },
        '/body',
      );
      if (Array.isArray(event)) throw new InputError(event.map((e) => ({ field: e.field.replace(/^\/body\/data/, '/body'), message: e.message })));
      return event;
    });
    return events.length === 0 ? [] : this.deps.appender.append(companyId, events);
  }

  /** The trail of one source: each entry names who acted (`data.actor`), then what was done. */
  trail(source: string): Trail {
    return new Trail(this, source);
  }
}

/** One reserved source's trail: the administrators' (`audit-ledger/admin`), governance's (`audit-ledger/governance`). */
export class Trail {
  constructor(
    private readonly recorder: Pick<Recorder, 'record' | 'recordMany'>,
    readonly source: string,
  ) {}

  record(companyId: string, eventType: string, actor: TrailActor, details: JsonObject, at: Placement = {}): Promise<AppendedEvent> {
    return this.recorder.record(companyId, this.source, eventType, { actor, ...details }, at);
  }

  /** Several entries of this trail in one append, in order. */
  recordMany(companyId: string, entries: Array<{ eventType: string; actor: TrailActor; details: JsonObject; at?: Placement }>): Promise<AppendedEvent[]> {
    return this.recorder.recordMany(
      companyId,
      entries.map(({ eventType, actor, details, at }) => ({ source: this.source, eventType, data: { actor, ...details }, ...(at ? { at } : {}) })),
    );
  }
}

/** The administrators' audit trail: every administrative action as an `audit-ledger/admin` entry. */
export type AdminTrail = Trail;
