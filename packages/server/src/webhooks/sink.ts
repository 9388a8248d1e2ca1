// The store-backed event sink: each event is recorded with its outbox rows (one per
// subscribed endpoint) in one transaction, then the delivery worker is woken.
import type { JsonObject } from '@audit-ledger/core';
import type { EventSink, EventType } from '../events.js';
import { uuidv7 } from '../ledger/uuidv7.js';
import type { WebhookStore } from '../store/webhooks.js';
import { iso } from '../time.js';

export class WebhookEventSink implements EventSink {
  constructor(
    private readonly repo: WebhookStore,
    private readonly clock: () => number,
    private readonly onRecorded: () => void,
  ) {}

  async emit(companyId: string, type: EventType, data: JsonObject): Promise<void> {
    const now = this.clock();
    const deliveries = await this.repo.recordEvent({ company_id: companyId, event_id: uuidv7(now), type, created_at: iso(now), data: JSON.stringify(data) }, () => uuidv7(now));
    if (deliveries > 0) this.onRecorded();
  }
}
