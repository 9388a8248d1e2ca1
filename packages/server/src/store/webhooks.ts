// Storage for webhook events, endpoints, the delivery outbox and attempts. Claiming uses
// FOR UPDATE SKIP LOCKED on PostgreSQL, so several processes never take the same delivery.
import type { ExpressionBuilder, Selectable } from 'kysely';
import type { Database, WebhookAttemptsTable, WebhookDeliveriesTable, WebhookEndpointsTable, WebhookEventsTable } from './schema.js';
import type { DbHandle } from './handle.js';

export type EndpointRow = Selectable<WebhookEndpointsTable>;
export type EventRow = Selectable<WebhookEventsTable>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;
export type AttemptRow = Selectable<WebhookAttemptsTable>;

export class WebhookStore {
  constructor(private readonly store: DbHandle) {}

  private get db() {
    return this.store.db;
  }

  /** Records an event and, in the same transaction, one outbox row per enabled endpoint subscribed to its type. */
  async recordEvent(event: EventRow, newDeliveryId: () => string): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      await trx.insertInto('webhook_events').values(event).execute();
      const endpoints = await trx.selectFrom('webhook_endpoints').selectAll().where('company_id', '=', event.company_id).where('enabled', '=', 1).execute();
      const subscribed = endpoints.filter((e) => (JSON.parse(e.event_types) as string[]).includes(event.type));
      if (subscribed.length > 0) {
        await trx
          .insertInto('webhook_deliveries')
          .values(
            subscribed.map((e) => ({
              company_id: event.company_id,
              delivery_id: newDeliveryId(),
              event_id: event.event_id,
              endpoint_id: e.endpoint_id,
              status: 'pending' as const,
              attempts: 0,
              next_attempt_at: event.created_at,
              lease_until: null,
              created_at: event.created_at,
              finished_at: null,
            })),
          )
          .execute();
      }
      return subscribed.length;
    });
  }

  /** Newest first; `before` is the last event_id of the previous page. */
  listEvents(companyId: string, f: { type?: string; before?: string; limit: number }): Promise<EventRow[]> {
    let q = this.db.selectFrom('webhook_events').selectAll().where('company_id', '=', companyId);
    if (f.type !== undefined) q = q.where('type', '=', f.type);
    if (f.before !== undefined) q = q.where('event_id', '<', f.before);
    return q.orderBy('event_id', 'desc').limit(f.limit).execute();
  }

  // ---- endpoints ----

  async insertEndpoint(row: EndpointRow): Promise<void> {
    await this.db.insertInto('webhook_endpoints').values(row).execute();
  }

  getEndpoint(companyId: string, endpointId: string): Promise<EndpointRow | undefined> {
    return this.db.selectFrom('webhook_endpoints').selectAll().where('company_id', '=', companyId).where('endpoint_id', '=', endpointId).executeTakeFirst();
  }

  listEndpoints(companyId: string): Promise<EndpointRow[]> {
    return this.db.selectFrom('webhook_endpoints').selectAll().where('company_id', '=', companyId).orderBy('endpoint_id').execute();
  }

  async updateEndpoint(companyId: string, endpointId: string, set: Partial<Omit<EndpointRow, 'company_id' | 'endpoint_id'>>): Promise<void> {
    await this.db.updateTable('webhook_endpoints').set(set).where('company_id', '=', companyId).where('endpoint_id', '=', endpointId).execute();
  }

  /** Deletes the endpoint and gives up its pending deliveries. */
  async deleteEndpoint(companyId: string, endpointId: string, now: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const r = await trx.deleteFrom('webhook_endpoints').where('company_id', '=', companyId).where('endpoint_id', '=', endpointId).executeTakeFirst();
      await trx
        .updateTable('webhook_deliveries')
        .set({ status: 'failed', finished_at: now, lease_until: null })
        .where('company_id', '=', companyId)
        .where('endpoint_id', '=', endpointId)
        .where('status', '=', 'pending')
        .execute();
      return Number(r.numDeletedRows) === 1;
    });
  }

  // ---- delivery ----

  /**
   * Takes up to `limit` due deliveries under a lease until `leaseUntil`, company by company: the
   * companies with the earliest due deliveries first (a read, no lock), then each company's own
   * due rows, locked FOR UPDATE SKIP LOCKED on PostgreSQL so several processes never take the same
   * one. Each company's claim touches one company's rows only, which is what Citus can lock (a
   * row lock across companies would span shards).
   */
  async claimDue(now: string, leaseUntil: string, limit: number): Promise<DeliveryRow[]> {
    const due = (eb: ExpressionBuilder<Database, 'webhook_deliveries'>) =>
      eb.and([eb('status', '=', 'pending'), eb('next_attempt_at', '<=', now), eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)])]);
    const companies = await this.db
      .selectFrom('webhook_deliveries')
      .select('company_id')
      .where(due)
      .groupBy('company_id')
      .orderBy((eb) => eb.fn.min('next_attempt_at'))
      .limit(limit)
      .execute();
    const claimed: DeliveryRow[] = [];
    for (const { company_id } of companies) {
      if (claimed.length >= limit) break;
      const rows = await this.db.transaction().execute(async (trx) => {
        let q = trx.selectFrom('webhook_deliveries').selectAll().where('company_id', '=', company_id).where(due).orderBy('next_attempt_at').limit(limit - claimed.length);
        if (this.store.kind === 'postgres') q = q.forUpdate().skipLocked();
        const got = await q.execute();
        if (got.length > 0) {
          await trx
            .updateTable('webhook_deliveries')
            .set({ lease_until: leaseUntil })
            .where('company_id', '=', company_id)
            .where('delivery_id', 'in', got.map((r) => r.delivery_id))
            .execute();
        }
        return got;
      });
      claimed.push(...rows);
    }
    return claimed;
  }

  getEvent(companyId: string, eventId: string): Promise<EventRow | undefined> {
    return this.db.selectFrom('webhook_events').selectAll().where('company_id', '=', companyId).where('event_id', '=', eventId).executeTakeFirst();
  }

  /** Records an attempt and the delivery's new state together. */
  async recordAttempt(attempt: AttemptRow, delivery: Pick<DeliveryRow, 'status' | 'attempts' | 'next_attempt_at' | 'finished_at'>): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('webhook_attempts').values(attempt).execute();
      await trx
        .updateTable('webhook_deliveries')
        .set({ ...delivery, lease_until: null })
        .where('company_id', '=', attempt.company_id)
        .where('delivery_id', '=', attempt.delivery_id)
        .execute();
    });
  }

  /** Attempts for one endpoint, newest first; `before` is the last attempt_id of the previous page. */
  listAttempts(companyId: string, endpointId: string, f: { before?: string; limit: number }): Promise<Array<AttemptRow & { event_type: string | null }>> {
    let q = this.db
      .selectFrom('webhook_attempts as a')
      .leftJoin('webhook_events as e', (j) => j.onRef('e.company_id', '=', 'a.company_id').onRef('e.event_id', '=', 'a.event_id'))
      .selectAll('a')
      .select('e.type as event_type')
      .where('a.company_id', '=', companyId)
      .where('a.endpoint_id', '=', endpointId);
    if (f.before !== undefined) q = q.where('a.attempt_id', '<', f.before);
    return q.orderBy('a.attempt_id', 'desc').limit(f.limit).execute();
  }
}
