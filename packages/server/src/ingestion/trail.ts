// The administrators' audit trail: every administrative action is appended to the company's own
// chain as an entry of the reserved source `audit-ledger/admin`, naming who did it, committed
// before the action is answered. The event types are listed in docs/event-types.md
// ("Administrative events"). Secrets, passwords and their hashes never enter an entry.
import { ADMIN_SOURCE, type JsonObject } from '@audit-ledger/core';
import type { TrailActor } from '../kernel/actor.js';
import type { Appender } from '../ledger/appender.js';
import type { AppendedEvent } from '../ledger/appender/errors.js';
import { prepareEvent } from './input.js';
import type { PreparedEvent } from '../ledger/appender/types.js';

export { ADMIN_SOURCE };

export type { TrailActor };

export class AdminTrail {
  constructor(private readonly deps: { appender: Pick<Appender, 'append'> }) {}

  /**
   * Appends one administrative entry and returns it once committed. With an idempotency key, a
   * repeat (a resumed job) appends nothing and returns the original entry.
   */
  async record(companyId: string, eventType: string, actor: TrailActor, details: JsonObject, idempotencyKey?: string): Promise<AppendedEvent> {
    const event = prepareEvent(
      { event_type: eventType, source: ADMIN_SOURCE, data: { actor, ...details }, ...(idempotencyKey ? { idempotency_key: idempotencyKey } : {}) },
      '/body',
    );
    if (Array.isArray(event)) throw new Error(`administrative entry ${eventType} is not valid: ${event.map((e) => `${e.field} ${e.message}`).join('; ')}`);
    const [appended] = await this.deps.appender.append(companyId, [event as PreparedEvent]);
    return appended as AppendedEvent;
  }
}
