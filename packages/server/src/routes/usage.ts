// The company's usage: requests, events and rate-limited requests per day and per API
// key, the storage its entries use, and its current key's rate limit.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { principalOf } from '../auth/authenticate.js';
import { READ } from '../auth/rules.js';
import { problemResponses } from '../http/problems.js';
import type { Services } from '../services.js';

const Counts = { api_requests: Type.Integer(), events_ingested: Type.Integer(), rate_limited_requests: Type.Integer() };

/** The services these routes use. */
export type UsageServices = Pick<Services, 'usageReport'>;

export function usageRoutes(ctx: UsageServices): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/usage',
      {
        config: READ,
        schema: {
          tags: ['operations'],
          operationId: 'getUsage',
          summary: "The company's usage per day and per API key, storage, and rate limit",
          description:
            'from and to are UTC days (YYYY-MM-DD), inclusive; default the last 30 days. Counts are kept in memory and written every 10 s; this process writes its own first, so they are exact here, and other processes on the same database add theirs within 10 s.',
          querystring: Type.Object(
            { from: Type.Optional(Type.String({ format: 'date' })), to: Type.Optional(Type.String({ format: 'date' })) },
            { additionalProperties: false },
          ),
          response: {
            200: Type.Object({
              company_id: Type.String(),
              from: Type.String({ format: 'date' }),
              to: Type.String({ format: 'date' }),
              totals: Type.Object(Counts),
              by_day: Type.Array(Type.Object({ day: Type.String({ format: 'date' }), ...Counts })),
              by_key: Type.Array(
                Type.Object({
                  key_id: Type.Union([Type.String(), Type.Null()], { description: 'null: requests made with user tokens' }),
                  name: Type.Union([Type.String(), Type.Null()]),
                  key_prefix: Type.Union([Type.String(), Type.Null()]),
                  ...Counts,
                }),
              ),
              by_agent: Type.Array(Type.Object({ agent_id: Type.Union([Type.String(), Type.Null()], { description: 'null: entries without an agent' }), entries: Type.Integer() }), {
                description: 'Ledger entries appended in the span per agent_id, the 50 busiest first (read from the ledger, so entries of every process are counted at once)',
              }),
              storage: Type.Object({
                entries: Type.Integer({ description: 'Ledger entries the company has' }),
                data_bytes: Type.Integer({ description: 'Bytes of event data (data and extra JSON) in them' }),
              }),
              rate_limit: Type.Union([Type.Object({ key_id: Type.String(), key_prefix: Type.String(), rate_limit_per_minute: Type.Integer() }), Type.Null()], {
                description: "The active API key's limit (null when the company has none)",
              }),
            }),
            ...problemResponses(400, 401, 429),
          },
        },
      },
      async (request) => ctx.usageReport.report(principalOf(request).companyId, request.query.from, request.query.to),
    );
  };
}
