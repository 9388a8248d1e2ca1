// The governance layer's ledger entries: every request, decision, check, policy version and
// incident change is appended to the company's chain under the reserved source
// `audit-ledger/governance` (clients cannot forge one through POST /logs), naming who did it, and
// committed before the change is answered. docs/governance.md lists the event types.
import { createHash } from 'node:crypto';
import { argumentsHash, type Json, type JsonObject } from '@audit-ledger/core';
import type { TrailActor } from '../ingestion/trail.js';
import { InputError } from '../kernel/domain-error.js';
import { prepareEvent } from '../ingestion/input.js';
import type { Appender } from '../ledger/appender.js';
import type { AppendedEvent } from '../ledger/appender/errors.js';
import type { PreparedEvent } from '../ledger/appender/types.js';
import { RESERVED_SOURCE_PREFIX } from '../store/columns.js';

export const GOVERNANCE_SOURCE = `${RESERVED_SOURCE_PREFIX}governance`;

/** Where a governance entry sits in the company's traces. */
export interface Placement {
  trace_id?: string | null | undefined;
  agent_id?: string | null | undefined;
  /** The entry this one is about (an execution, for its check), so the causal graph links them. */
  parent_event_id?: string | null | undefined;
}

/** Lowercase hex SHA-256 of the RFC 8785 canonical JSON of a value: how arguments, inputs and policy texts are bound. */
/** The arguments hash (the core's rule, with its vectors). */
export const canonicalHash = (value: unknown): string => argumentsHash(value as Json);

/** Lowercase hex SHA-256 of a text (UTF-8). */
export const textHash = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

export class GovernanceRecorder {
  constructor(private readonly deps: { appender: Pick<Appender, 'append'> }) {}

  async record(companyId: string, eventType: string, actor: TrailActor, details: JsonObject, at: Placement = {}): Promise<AppendedEvent> {
    const event = prepareEvent(
      {
        event_type: eventType,
        source: GOVERNANCE_SOURCE,
        ...(at.trace_id ? { trace_id: at.trace_id } : {}),
        ...(at.agent_id ? { agent_id: at.agent_id } : {}),
        ...(at.parent_event_id ? { parent_event_id: at.parent_event_id } : {}),
        data: { actor, ...details } as JsonObject,
      },
      '/body',
    );
    // What a caller sent and the entry cannot hold (nesting deeper than an entry allows): their input, a 400.
    if (Array.isArray(event)) throw new InputError(event.map((e) => ({ field: e.field.replace(/^\/body\/data/, '/body'), message: e.message })));
    const [appended] = await this.deps.appender.append(companyId, [event as PreparedEvent]);
    return appended as AppendedEvent;
  }
}
