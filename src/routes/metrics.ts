// Prometheus scrape endpoint. With METRICS_TOKEN set it needs that bearer token; without,
// it answers only clients on loopback (a scraper on the same host or a sidecar).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { ApiError, problemResponses } from '../http/problems.js';
import type { AppContext } from '../app.js';

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);
const digest = (s: string) => createHash('sha256').update(s).digest();

export function metricsRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  const expected = ctx.config.metricsToken === undefined ? undefined : digest(ctx.config.metricsToken);
  return async (app) => {
    app.get(
      '/metrics',
      {
        schema: {
          tags: ['operations'],
          summary: 'Prometheus metrics (text exposition format)',
          description: 'Needs `Authorization: Bearer <METRICS_TOKEN>` when METRICS_TOKEN is set; otherwise served to loopback clients only.',
          produces: ['text/plain'],
          response: { 200: Type.String(), ...problemResponses(401, 403) },
        },
      },
      async (request, reply) => {
        if (expected) {
          const m = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
          if (!m) throw new ApiError(401, 'missing_credential', 'Send Authorization: Bearer <METRICS_TOKEN>', { headers: { 'WWW-Authenticate': 'Bearer realm="metrics"' } });
          if (!timingSafeEqual(digest(m[1] as string), expected)) throw new ApiError(401, 'invalid_credential', 'The metrics token is not valid');
        } else if (!LOOPBACK.has(request.socket.remoteAddress ?? '')) {
          throw new ApiError(403, 'forbidden', 'Metrics are served to loopback clients only; set METRICS_TOKEN to scrape from elsewhere');
        }
        return reply.type(ctx.metrics.registry.contentType).send((await ctx.metrics.registry.metrics()) as never);
      },
    );
  };
}
