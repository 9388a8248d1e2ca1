// Webhook events and endpoints (spec 6, 4.5). Endpoints are managed by an admin user;
// the signing secret is shown when created or rotated, and stored only encrypted.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { principalOf } from '../auth/authenticate.js';
import { EVENT_TYPES } from '../kernel/events.js';
import { idCursor, page } from '../http/cursor.js';
import { problemResponses } from '../http/problems.js';
import { ServiceId, Uuid } from '../kernel/shapes.js';
import type { EndpointRow } from '../webhooks/endpoints.js';
import type { Services } from '../services.js';
import { ADMIN, READ } from '../auth/rules.js';
import { actorOf } from '../auth/authenticate.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
const EventTypeSchema = Type.Union(EVENT_TYPES.map((t) => Type.Literal(t)));
const EventTypes = Type.Array(EventTypeSchema, { minItems: 1, uniqueItems: true, description: `Any of: ${EVENT_TYPES.join(', ')}` });

const Endpoint = Type.Object({
  id: Uuid,
  url: Type.String(),
  description: Nullable(Type.String()),
  event_types: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  disabled_reason: Nullable(Type.String()),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
const EndpointWithSecret = Type.Object({
  ...Endpoint.properties,
  secret: Type.String({ description: 'Standard Webhooks signing secret (whsec_…). Shown only now: store it.' }),
});

function view(e: EndpointRow) {
  return {
    id: e.endpoint_id,
    url: e.url,
    description: e.description,
    event_types: JSON.parse(e.event_types) as string[],
    enabled: e.enabled === 1,
    disabled_reason: e.disabled_reason,
    created_at: e.created_at,
    updated_at: e.updated_at,
  };
}

/** The services these routes use. */
export type WebhookServices = Pick<Services, 'webhookEndpoints'>;

export function webhookRoutes(ctx: WebhookServices): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/webhooks/events',
      {
        config: READ,
        schema: {
          tags: ['webhooks'],
          operationId: 'listWebhookEvents',
          summary: "The company's events, newest first",
          description: 'Events recorded for the company (whether or not an endpoint subscribes to them), newest first: the same payloads webhooks deliver.',
          querystring: Type.Object(
            {
              type: Type.Optional(EventTypeSchema),
              after: Type.Optional(Type.String({ maxLength: 200, description: 'next_cursor of the previous page' })),
              limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
            },
            { additionalProperties: false },
          ),
          response: {
            200: Type.Object({
              items: Type.Array(Type.Object({ id: Uuid, type: Type.String(), created_at: Type.String({ format: 'date-time' }), data: Type.Object({}, { additionalProperties: true }) })),
              next_cursor: Nullable(Type.String()),
            }),
            ...problemResponses(400, 401, 429),
          },
        },
      },
      async (request) => {
        const q = request.query;
        const rows = await ctx.webhookEndpoints.events(principalOf(request).companyId, {
          type: q.type,
          before: idCursor(q.after),
          limit: q.limit,
        });
        return page(rows, q.limit, (r) => ({ id: r.event_id }), (r) => ({ id: r.event_id, type: r.type, created_at: r.created_at, data: JSON.parse(r.data) as Record<string, unknown> }));
      },
    );

    app.post(
      '/webhooks/endpoints',
      {
        config: ADMIN,
        schema: {
          tags: ['webhooks'],
          operationId: 'createWebhookEndpoint',
          summary: 'Subscribe a URL to event types; the signing secret is shown once',
          description: 'URLs must be http(s) and resolve to public addresses (unless WEBHOOK_ALLOW_PRIVATE=true). Deliveries follow Standard Webhooks.',
          body: Type.Object(
            { url: Type.String({ minLength: 1, maxLength: 2000 }), event_types: EventTypes, description: Type.Optional(Type.String({ maxLength: 500 })) },
            { additionalProperties: false },
          ),
          response: { 201: EndpointWithSecret, ...problemResponses(400, 401, 403, 429) },
        },
      },
      async (request, reply) => {
        const p = principalOf(request);
        const { row, secret } = await ctx.webhookEndpoints.create(p.companyId, request.body, actorOf(p));
        return reply.code(201).header('location', `/api/v1/webhooks/endpoints/${row.endpoint_id}`).send({ ...view(row), secret });
      },
    );

    app.get(
      '/webhooks/endpoints',
      { config: ADMIN, schema: { tags: ['webhooks'], operationId: 'listWebhookEndpoints', description: 'Every webhook endpoint of the company with its URL, event types and state; secrets are never shown again after creation or rotation.', summary: "The company's endpoints (without secrets)", response: { 200: Type.Object({ items: Type.Array(Endpoint) }), ...problemResponses(401, 403, 429) } } },
      async (request) => ({ items: (await ctx.webhookEndpoints.list(principalOf(request).companyId)).map(view) }),
    );

    app.get(
      '/webhooks/endpoints/:id',
      { config: ADMIN, schema: { tags: ['webhooks'], operationId: 'getWebhookEndpoint', description: 'One webhook endpoint of the company, without its secret.', summary: 'One endpoint', params: Type.Object({ id: ServiceId }), response: { 200: Endpoint, ...problemResponses(400, 401, 403, 404, 429) } } },
      async (request) => view(await ctx.webhookEndpoints.get(principalOf(request).companyId, request.params.id)),
    );

    app.patch(
      '/webhooks/endpoints/:id',
      {
        config: ADMIN,
        schema: {
          tags: ['webhooks'],
          operationId: 'updateWebhookEndpoint',
          summary: 'Change an endpoint: URL, event types, description, enabled; or rotate its secret',
          description: 'Re-enabling clears disabled_reason. With rotate_secret: true the answer carries the new secret, shown once; the old one stops signing at once.',
          params: Type.Object({ id: ServiceId }),
          body: Type.Object(
            {
              url: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
              event_types: Type.Optional(EventTypes),
              description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
              enabled: Type.Optional(Type.Boolean()),
              rotate_secret: Type.Optional(Type.Literal(true)),
            },
            { additionalProperties: false, minProperties: 1 },
          ),
          response: { 200: Type.Object({ ...Endpoint.properties, secret: Type.Optional(Type.String()) }), ...problemResponses(400, 401, 403, 404, 429) },
        },
      },
      async (request) => {
        const p = principalOf(request);
        const { row, secret } = await ctx.webhookEndpoints.update(p.companyId, request.params.id, request.body, actorOf(p));
        return secret ? { ...view(row), secret } : view(row);
      },
    );

    app.delete(
      '/webhooks/endpoints/:id',
      {
        config: ADMIN,
        schema: { tags: ['webhooks'], operationId: 'deleteWebhookEndpoint', description: 'Removes the endpoint; deliveries still pending for it are given up. Recorded events stay.', summary: 'Delete an endpoint; its pending deliveries are given up', params: Type.Object({ id: ServiceId }), response: { 204: Type.Null(), ...problemResponses(400, 401, 403, 404, 429) } },
      },
      async (request, reply) => {
        const p = principalOf(request);
        await ctx.webhookEndpoints.remove(p.companyId, request.params.id, actorOf(p));
        return reply.code(204).send(null);
      },
    );

    app.get(
      '/webhooks/endpoints/:id/deliveries',
      {
        config: READ,
        schema: {
          tags: ['webhooks'],
          operationId: 'listWebhookDeliveries',
          summary: 'Delivery attempts to an endpoint, newest first',
          description: 'Each delivery to the endpoint with its status, attempts, last response status and next retry time, newest first.',
          params: Type.Object({ id: ServiceId }),
          querystring: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }), cursor: Type.Optional(Type.String({ maxLength: 200 })) }, { additionalProperties: false }),
          response: {
            200: Type.Object({
              items: Type.Array(
                Type.Object({
                  id: Uuid,
                  delivery_id: Uuid,
                  event_id: Uuid,
                  event_type: Nullable(Type.String()),
                  attempted_at: Type.String({ format: 'date-time' }),
                  status_code: Nullable(Type.Integer()),
                  latency_ms: Type.Integer(),
                  error: Nullable(Type.String()),
                  result: Type.String({ description: 'delivered, retry (another attempt is scheduled), failed (given up) or disabled (410: endpoint disabled)' }),
                }),
              ),
              next_cursor: Nullable(Type.String()),
            }),
            ...problemResponses(400, 401, 404, 429),
          },
        },
      },
      async (request) => {
        const q = request.query;
        const rows = await ctx.webhookEndpoints.attempts(principalOf(request).companyId, request.params.id, {
          before: idCursor(q.cursor),
          limit: q.limit,
        });
        return page(
          rows,
          q.limit,
          (a) => ({ id: a.attempt_id }),
          (a) => ({
            id: a.attempt_id,
            delivery_id: a.delivery_id,
            event_id: a.event_id,
            event_type: a.event_type,
            attempted_at: a.attempted_at,
            status_code: a.status_code,
            latency_ms: a.latency_ms,
            error: a.error,
            result: a.result,
          }),
        );
      },
    );
  };
}
