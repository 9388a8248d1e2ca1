// The events a company can subscribe to, and the sink components report them to. The
// service's sink (src/webhooks/sink.ts) records each with its delivery outbox.
import type { JsonObject } from '@audit-ledger/core';

export const EVENT_TYPES = [
  'api_key.created',
  'api_key.revoked',
  'integrity.violation_detected',
  'integrity.verification_completed',
  'hitl.rejected',
  'forensics.anomaly_detected',
  'webhook_endpoint.disabled',
  'approval.requested',
  'approval.decided',
  'approval.escalated',
  'approval.violated',
  'policy.version_created',
  'incident.opened',
  'incident.updated',
  'log_stream.failed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface EventSink {
  emit(companyId: string, type: EventType, data: JsonObject): Promise<void>;
}
