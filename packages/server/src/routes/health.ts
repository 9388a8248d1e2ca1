// Health for operators and orchestrators. No credential, no company data.
//  /health        everything, with latencies (200 ok/degraded, 503 down)
//  /health/live   the process answers (always 200)
//  /health/ready  the store answers, migrations are current, the signing key is loaded
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import type { Services } from '../services.js';
import { VERSION } from '../version.js';

const CHECK_TIMEOUT_MS = 2000;
const Status = Type.Union([Type.Literal('ok'), Type.Literal('down')]);

const Health = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('down')], {
    description: 'down: the store, migrations or signing key fail (not ready); degraded: only Redis fails (rate limits fall back to nothing shared)',
  }),
  version: Type.String(),
  uptime_seconds: Type.Integer(),
  checks: Type.Object({
    database: Type.Object({ status: Status, latency_ms: Type.Union([Type.Number(), Type.Null()]), error: Type.Optional(Type.String()) }),
    signing_key: Type.Object({ status: Status }),
    migrations: Type.Object({ status: Type.Union([Type.Literal('ok'), Type.Literal('behind'), Type.Literal('down')]), version: Type.Union([Type.String(), Type.Null()]) }),
    redis: Type.Optional(Type.Object({ status: Status })),
  }),
});

function withTimeout<T>(p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** The services these routes use. */
export type HealthServices = Pick<Services, 'clock' | 'counters' | 'keyring' | 'store'>;

export function healthRoutes(ctx: HealthServices): FastifyPluginAsyncTypebox {
  const started = ctx.clock();

  async function check() {
    const t0 = performance.now();
    const database = await withTimeout(ctx.store.ping()).then(
      () => ({ status: 'ok' as const, latency_ms: Math.round((performance.now() - t0) * 100) / 100 }),
      // The error's code only: its message may name internal hosts, and health is public.
      (err: unknown) => ({ status: 'down' as const, latency_ms: null, error: String((err as { code?: unknown }).code ?? (err instanceof Error && /no answer/.test(err.message) ? 'timeout' : 'unreachable')) }),
    );
    const migrations =
      database.status === 'ok'
        ? await withTimeout(ctx.store.migrationState()).then(
            (m) => ({ status: m.current === m.latest ? ('ok' as const) : ('behind' as const), version: m.current }),
            () => ({ status: 'down' as const, version: null }),
          )
        : { status: 'down' as const, version: null };
    const signingKey = { status: ctx.keyring.active.privateKey ? ('ok' as const) : ('down' as const) };
    const redis =
      ctx.counters.backend === 'redis'
        ? await withTimeout(ctx.counters.ping()).then(
            () => ({ status: 'ok' as const }),
            () => ({ status: 'down' as const }),
          )
        : undefined;
    const ready = database.status === 'ok' && migrations.status === 'ok' && signingKey.status === 'ok';
    return {
      ready,
      body: {
        status: !ready ? ('down' as const) : redis?.status === 'down' ? ('degraded' as const) : ('ok' as const),
        version: VERSION,
        uptime_seconds: Math.floor((ctx.clock() - started) / 1000),
        checks: { database, signing_key: signingKey, migrations, ...(redis ? { redis } : {}) },
      },
    };
  }

  return async (app) => {
    app.get(
      '/health',
      { schema: { tags: ['operations'], operationId: 'getHealth', description: 'Every check (database with its latency, signing key, migrations, rate-limit store) and the overall status. No credential needed, and no company data shown.', summary: 'Service health and each dependency', response: { 200: Health, 503: Health } } },
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
