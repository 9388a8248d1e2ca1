// The company's usage: requests, events and rate-limited requests per day and per API
// key, the storage its entries use, and its current key's rate limit.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { principalOf } from '../auth/authenticate.js';
import { ApiError, problemResponses } from '../http/problems.js';
import type { Services } from '../services.js';
import { iso } from '../time.js';
import { READ } from '../auth/rules.js';

const DAY_MS = 86_400_000;
const MAX_DAYS = 366;

const Counts = { api_requests: Type.Integer(), events_ingested: Type.Integer(), rate_limited_requests: Type.Integer() };

/** The services these routes use. */
export type UsageServices = Pick<Services, 'accounts' | 'clock' | 'ledger' | 'usage' | 'usageStore'>;

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
      async (request) => {
        const { companyId } = principalOf(request);
        const today = iso(ctx.clock()).slice(0, 10);
        const to = request.query.to ?? today;
        const from = request.query.from ?? iso(Date.parse(to) - 29 * DAY_MS).slice(0, 10);
        if (from > to) throw new ApiError(400, 'validation_failed', 'from must not be after to', { errors: [{ field: '/querystring/from', message: 'must not be after to' }] });
        if ((Date.parse(to) - Date.parse(from)) / DAY_MS + 1 > MAX_DAYS) {
          throw new ApiError(400, 'validation_failed', `At most ${MAX_DAYS} days at once`, { errors: [{ field: '/querystring/from', message: `at most ${MAX_DAYS} days before to` }] });
        }
        await ctx.usage.flush();
        const [rows, keys, head, bytes] = await Promise.all([
          ctx.usageStore.list(companyId, from, to),
          ctx.accounts.listApiKeys(companyId),
          ctx.ledger.getChainHead(companyId),
          ctx.usageStore.storedBytes(companyId),
        ]);
        const zero = () => ({ api_requests: 0, events_ingested: 0, rate_limited_requests: 0 });
        const add = (a: ReturnType<typeof zero>, r: (typeof rows)[number]) => {
          a.api_requests += r.requests;
          a.events_ingested += r.events;
          a.rate_limited_requests += r.rate_limited;
        };
        const totals = zero();
        const byDay = new Map<string, ReturnType<typeof zero>>();
        const byKey = new Map<string, ReturnType<typeof zero>>();
        for (const r of rows) {
          add(totals, r);
          add(byDay.get(r.day) ?? byDay.set(r.day, zero()).get(r.day)!, r);
          add(byKey.get(r.key_id) ?? byKey.set(r.key_id, zero()).get(r.key_id)!, r);
        }
        const keyInfo = new Map(keys.map((k) => [k.key_id, k]));
        const active = keys.find((k) => k.status === 'active');
        return {
          company_id: companyId,
          from,
          to,
          totals,
          by_day: [...byDay].map(([day, c]) => ({ day, ...c })),
          by_key: [...byKey].map(([keyId, c]) => ({
            key_id: keyId === '' ? null : keyId,
            name: keyInfo.get(keyId)?.name ?? null,
            key_prefix: keyInfo.get(keyId)?.key_prefix ?? null,
            ...c,
          })),
          storage: { entries: head ? head.lastSeq + 1 : 0, data_bytes: bytes },
          rate_limit: active ? { key_id: active.key_id, key_prefix: active.key_prefix, rate_limit_per_minute: active.rate_limit_per_minute } : null,
        };
      },
    );
  };
}
