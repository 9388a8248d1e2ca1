// Webhook endpoints and what was sent to them, without HTTP: an endpoint's URL is checked
// against the address policy (egress/address-policy.ts) before it is kept, its secret is shown once and
// kept encrypted (store/secret-box.ts), and every change is a trail entry. routes/webhooks.ts
// parses (its cursors too), calls one method and shapes the answer.
import type { JsonObject } from '@audit-ledger/core';
import { type AdminTrail, type TrailActor } from '../ingestion/recorder.js';
import type { Config } from '../kernel/config.js';
import { InputError, NotFoundError } from '../kernel/domain-error.js';
import type { EventType } from '../kernel/events.js';
import { uuidv7 } from '../ledger/uuidv7.js';
import type { SecretBox } from '../store/secret-box.js';
import type { AttemptRow, EndpointRow, EventRow, WebhookStore } from '../store/webhooks.js';

/** An endpoint as kept (its view is the route's). */
export type { EndpointRow };
import { iso } from '../kernel/time.js';
import { newWebhookSecret } from './secrets.js';
import { type Resolver, urlProblem } from '../egress/address-policy.js';

export interface WebhookEndpointsDeps {
  webhookStore: WebhookStore;
  secretBox: Pick<SecretBox, 'seal'>;
  trail: Pick<AdminTrail, 'record'>;
  clock: () => number;
  config: Pick<Config, 'webhookAllowPrivate'>;
  resolveHost: Resolver;
}

export interface EndpointChange {
  url?: string | undefined;
  description?: string | null | undefined;
  event_types?: EventType[] | undefined;
  enabled?: boolean | undefined;
  rotate_secret?: true | undefined;
}

export class WebhookEndpoints {
  constructor(private readonly deps: WebhookEndpointsDeps) {}

  /** The company's events, newest first (before: an event id of the previous page). */
  events(companyId: string, f: { type?: EventType | undefined; before?: string | undefined; limit: number }): Promise<EventRow[]> {
    return this.deps.webhookStore.listEvents(companyId, f);
  }

  /** A new endpoint, and its signing secret (shown this once). */
  async create(companyId: string, input: { url: string; event_types: EventType[]; description?: string | undefined }, actor: TrailActor): Promise<{ row: EndpointRow; secret: string }> {
    const { webhookStore, secretBox, trail, clock } = this.deps;
    await this.checkUrl(input.url);
    const now = iso(clock());
    const secret = newWebhookSecret();
    const row: EndpointRow = {
      company_id: companyId,
      endpoint_id: uuidv7(clock()),
      url: input.url,
      description: input.description ?? null,
      event_types: JSON.stringify(input.event_types),
      secret_encrypted: secretBox.seal(secret),
      enabled: 1,
      disabled_reason: null,
      created_at: now,
      updated_at: now,
    };
    await webhookStore.insertEndpoint(row);
    await trail.record(companyId, 'webhook.endpoint_created', actor, { endpoint_id: row.endpoint_id, url: row.url, event_types: input.event_types });
    return { row, secret };
  }

  list(companyId: string): Promise<EndpointRow[]> {
    return this.deps.webhookStore.listEndpoints(companyId);
  }

  async get(companyId: string, endpointId: string): Promise<EndpointRow> {
    const e = await this.deps.webhookStore.getEndpoint(companyId, endpointId);
    if (!e) throw new NotFoundError(`No webhook endpoint ${endpointId}`);
    return e;
  }

  /** Changes an endpoint; a rotated secret is in the answer (this once). Disabling by a user says so. */
  async update(companyId: string, endpointId: string, change: EndpointChange, actor: TrailActor): Promise<{ row: EndpointRow; secret?: string }> {
    const { webhookStore, secretBox, trail, clock } = this.deps;
    await this.get(companyId, endpointId);
    if (change.url !== undefined) await this.checkUrl(change.url);
    const secret = change.rotate_secret ? newWebhookSecret() : undefined;
    await webhookStore.updateEndpoint(companyId, endpointId, {
      ...(change.url !== undefined ? { url: change.url } : {}),
      ...(change.event_types !== undefined ? { event_types: JSON.stringify(change.event_types) } : {}),
      ...(change.description !== undefined ? { description: change.description } : {}),
      ...(change.enabled !== undefined ? { enabled: change.enabled ? 1 : 0, disabled_reason: change.enabled ? null : 'disabled by a user' } : {}),
      ...(secret ? { secret_encrypted: secretBox.seal(secret) } : {}),
      updated_at: iso(clock()),
    });
    const row = await this.get(companyId, endpointId);
    const { rotate_secret: _rotate, ...changed } = change;
    await trail.record(companyId, 'webhook.endpoint_updated', actor, { endpoint_id: endpointId, changed: { ...changed } as JsonObject, secret_rotated: secret !== undefined });
    return secret ? { row, secret } : { row };
  }

  async remove(companyId: string, endpointId: string, actor: TrailActor): Promise<void> {
    if (!(await this.deps.webhookStore.deleteEndpoint(companyId, endpointId, iso(this.deps.clock())))) throw new NotFoundError(`No webhook endpoint ${endpointId}`);
    await this.deps.trail.record(companyId, 'webhook.endpoint_deleted', actor, { endpoint_id: endpointId });
  }

  /** An endpoint's delivery attempts, newest first (before: an attempt id of the previous page). */
  async attempts(companyId: string, endpointId: string, f: { before?: string | undefined; limit: number }): Promise<Array<AttemptRow & { event_type: string | null }>> {
    await this.get(companyId, endpointId);
    return this.deps.webhookStore.listAttempts(companyId, endpointId, f);
  }

  /** A URL the address policy refuses (not https, a private address, …) is an input error naming /body/url. */
  private async checkUrl(url: string): Promise<void> {
    const problem = await urlProblem(url, this.deps.config.webhookAllowPrivate, this.deps.resolveHost);
    if (problem) throw new InputError([{ field: '/body/url', message: problem }]);
  }
}
