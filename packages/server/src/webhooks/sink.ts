// The store-backed event sink: each event is recorded with its outbox rows (one per
// subscribed endpoint) in one transaction, then the delivery worker is woken.
import type { JsonObject } from '@audit-ledger/core';
import type { EventSink, EventType } from '../kernel/events.js';
import { uuidv7 } from '../ledger/uuidv7.js';
import type { WebhookStore } from '../store/webhooks.js';
import { iso } from '../kernel/time.js';

export interface WebhookEventSinkDeps {
  webhookStore: WebhookStore;
  clock: () => number;
  /** Called after an event was recorded with at least one delivery (wakes the delivery worker). */
  onRecorded: () => void;
}

export class WebhookEventSink implements EventSink {
  constructor(private readonly deps: WebhookEventSinkDeps) {}

  async emit(companyId: string, type: EventType, data: JsonObject): Promise<void> {
    const now = this.deps.clock();
    const deliveries = await this.deps.webhookStore.recordEvent({ company_id: companyId, event_id: uuidv7(now), type, created_at: iso(now), data: JSON.stringify(data) }, () => uuidv7(now));
    if (deliveries > 0) this.deps.onRecorded();
  }
}
