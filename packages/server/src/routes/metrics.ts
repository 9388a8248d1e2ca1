// Prometheus scrape endpoint. With METRICS_TOKEN set it needs that bearer token; without,
// it answers only clients on loopback (a scraper on the same host or a sidecar).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { staticBearerToken } from '../auth/static-token.js';
import { rawBody } from '../http/raw-body.js';
import { ApiError, problemResponses } from '../http/problems.js';
import type { Services } from '../services.js';

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);
/** The services these routes use. */
export type MetricsServices = Pick<Services, 'config' | 'metrics'>;

export function metricsRoutes(ctx: MetricsServices): FastifyPluginAsyncTypebox {
  const checkToken = ctx.config.metricsToken === undefined ? undefined : staticBearerToken(ctx.config.metricsToken, 'METRICS_TOKEN', 'metrics');
  return async (app) => {
    app.get(
      '/metrics',
      {
        schema: {
          tags: ['operations'],
          operationId: 'getMetrics',
          summary: 'Prometheus metrics (text exposition format)',
          description: 'Needs `Authorization: Bearer <METRICS_TOKEN>` when METRICS_TOKEN is set; otherwise served to loopback clients only.',
          produces: ['text/plain'],
          response: { 200: Type.String(), ...problemResponses(401, 403) },
        },
      },
      async (request, reply) => {
        if (checkToken) checkToken(request);
        else if (!LOOPBACK.has(request.socket.remoteAddress ?? '')) {
          throw new ApiError(403, 'forbidden', 'Metrics are served to loopback clients only; set METRICS_TOKEN to scrape from elsewhere');
        }
        return reply.type(ctx.metrics.registry.contentType).send(rawBody(await ctx.metrics.registry.metrics()));
      },
    );
  };
}
