// Health for operators and orchestrators. No credential, no company data.
//  /health        everything, with latencies (200 ok/degraded, 503 down)
//  /health/live   the process answers (always 200)
//  /health/ready  the store answers, migrations are current, the signing key is loaded
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import type { Services } from '../services.js';
const Status = Type.Union([Type.Literal('ok'), Type.Literal('down')]);

const Health = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('down')], {
    description: 'down: the store, migrations or signing key fail (not ready); degraded: Redis (rate limits fall back to nothing shared) or the search index fails',
  }),
  version: Type.String(),
  uptime_seconds: Type.Integer(),
  checks: Type.Object({
    database: Type.Object({ status: Status, latency_ms: Type.Union([Type.Number(), Type.Null()]), error: Type.Optional(Type.String()) }),
    signing_key: Type.Object({ status: Status }),
    migrations: Type.Object({ status: Type.Union([Type.Literal('ok'), Type.Literal('behind'), Type.Literal('down')]), version: Type.Union([Type.String(), Type.Null()]) }),
    redis: Type.Optional(Type.Object({ status: Status })),
    search_index: Type.Object(
      { status: Type.Union([Type.Literal('ok'), Type.Literal('failing'), Type.Literal('off')]) },
      { description: 'The index of words: failing while its batches fail (tried again)' },
    ),
  }),
});

/** The services these routes use. */
export type HealthServices = Pick<Services, 'health'>;

export function healthRoutes(ctx: HealthServices): FastifyPluginAsyncTypebox {
  const check = () => ctx.health.check();
  return async (app) => {
    app.get(
      '/health',
      { schema: { tags: ['operations'], operationId: 'getHealth', description: 'Every check (database with its latency, signing key, migrations, the search index, rate-limit store) and the overall status. No credential needed, and no company data shown.', summary: 'Service health and each dependency', response: { 200: Health, 503: Health } } },
      async (_request, reply) => {
        const { ready, body } = await check();
        return reply.code(ready ? 200 : 503).send(body);
      },
    );
    app.get(
      '/health/live',
      { schema: { tags: ['operations'], operationId: 'getLiveness', description: 'For orchestrator liveness probes: answers 200 as long as the process runs its event loop, whatever its dependencies do.', summary: 'Liveness: 200 while the process can answer', response: { 200: Type.Object({ status: Type.Literal('ok') }) } } },
      async () => ({ status: 'ok' as const }),
    );
    app.get(
      '/health/ready',
      {
        schema: {
          tags: ['operations'],
          operationId: 'getReadiness',
          summary: 'Readiness: 200 when the store answers, migrations are current and the signing key is loaded; otherwise 503 with the checks',
          description: 'For orchestrator readiness probes and container health checks: 200 when the database answers, the schema is at the expected migration and a signing key is loaded; 503 otherwise.',
          response: { 200: Health, 503: Health },
        },
      },
      async (_request, reply) => {
        const { ready, body } = await check();
        return reply.code(ready ? 200 : 503).send(body);
      },
    );
  };
}
