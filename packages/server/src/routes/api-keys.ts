// Integration API keys (spec 3, 5.5–5.7, 8): one active key per company, shown once.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { principalOf } from '../auth/authenticate.js';
import { problemResponses } from '../http/problems.js';
import { ServiceId, Uuid } from '../kernel/shapes.js';
import type { ApiKey } from '../auth/api-keys.js';
import type { Services } from '../services.js';
import { ADMIN } from '../auth/rules.js';

const CreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'Label of the key' }),
    rate_limit_per_minute: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Requests per minute allowed for this key' }),
  },
  { additionalProperties: false },
);

const ApiKeyView = Type.Object({
  id: Uuid,
  name: Type.String(),
  key_prefix: Type.String({ description: 'First characters of the key, to tell keys apart' }),
  rate_limit_per_minute: Type.Integer(),
  status: Type.Union([Type.Literal('active'), Type.Literal('revoked')]),
  created_at: Type.String({ format: 'date-time' }),
  revoked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

const CreatedApiKey = Type.Object({
  ...ApiKeyView.properties,
  key: Type.String({ description: 'The key itself. Shown only in this response; store it now.' }),
});

function view(k: ApiKey) {
  return {
    id: k.key_id,
    name: k.name,
    key_prefix: k.key_prefix,
    rate_limit_per_minute: k.rate_limit_per_minute,
    status: k.status,
    created_at: k.created_at,
    revoked_at: k.revoked_at,
  };
}

// Key management takes a user's bearer token only, never an API key (a leaked key must not mint keys).

/** The services these routes use. */
export type ApiKeyServices = Pick<Services, 'apiKeys'>;

export function apiKeyRoutes(ctx: ApiKeyServices): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/auth/api_keys',
      {
        config: ADMIN,
        schema: {
          tags: ['api keys'],
          operationId: 'createApiKey',
          summary: 'Create the company integration API key',
          description: 'Only one key may be active per company: revoke the current key first, or get 409 active_key_exists.',
          body: CreateBody,
          response: { 201: CreatedApiKey, ...problemResponses(400, 401, 403, 409) },
        },
      },
      async (request, reply) => {
        const { row, key } = await ctx.apiKeys.create(principalOf(request), request.body);
        return reply.code(201).send({ ...view(row), key });
      },
    );

    app.get(
      '/auth/api_keys',
      {
        config: ADMIN,
        schema: {
          tags: ['api keys'],
          operationId: 'listApiKeys',
          summary: "List the company's API keys (never the secrets)",
          description: 'Every key of the company, active and revoked, with its prefix, rate limit and who created it. The secret is shown once, when the key is created, and never again.',
          response: { 200: Type.Object({ items: Type.Array(ApiKeyView) }), ...problemResponses(401, 403) },
        },
      },
      async (request) => ({ items: (await ctx.apiKeys.list(principalOf(request).companyId)).map(view) }),
    );

    app.delete(
      '/auth/api_keys/:id',
      {
        config: ADMIN,
        schema: {
          tags: ['api keys'],
          operationId: 'revokeApiKey',
          summary: 'Revoke an API key',
          description: 'Idempotent: revoking a revoked key answers 204 too. Another company\'s key is 404.',
          params: Type.Object({ id: ServiceId }),
          response: { 204: Type.Null(), ...problemResponses(400, 401, 403, 404) },
        },
      },
      async (request, reply) => {
        await ctx.apiKeys.revoke(principalOf(request), request.params.id);
        return reply.code(204).send(null);
      },
    );
  };
}
