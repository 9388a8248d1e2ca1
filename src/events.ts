// Where the service records the events a company can subscribe to (webhooks). The
// operations issue gives this a store-backed implementation with an outbox; until then
// events are only logged, so callers already say what happened and when.
import type { JsonObject } from './core/hash.js';

export type EventType =
  | 'api_key.created'
  | 'api_key.revoked'
  | 'integrity.violation_detected'
  | 'integrity.verification_completed'
  | 'hitl.rejected'
  | 'forensics.anomaly_detected'
  | 'webhook_endpoint.disabled';

export interface EventSink {
  emit(companyId: string, type: EventType, data: JsonObject): Promise<void>;
}

/** Logs each event at debug level and keeps nothing. */
export function loggingEventSink(log: (obj: object, msg: string) => void): EventSink {
  return {
    async emit(companyId, type, data) {
      log({ company_id: companyId, event_type: type, data }, 'event');
    },
  };
}
