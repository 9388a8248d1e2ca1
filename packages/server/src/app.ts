// Builds the Fastify application from its dependencies. No I/O of its own besides
// what the injected store and counters do, so tests build it against a real store
// and drive it with inject() or a real socket.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import cookie from '@fastify/cookie';
import swagger, { type SwaggerTransformObject } from '@fastify/swagger';
import { registerConsole, wantsPage } from './console.js';
import { completeDocument, EXTRA_SECURITY_SCHEMES } from './http/openapi.js';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import pino from 'pino';
import { registerAuthentication } from './auth/authenticate.js';
import type { Config } from './kernel/config.js';
import { domainProblem } from './http/domain-problems.js';
import { registerProblemHandlers } from './http/problems.js';
import { registerJsonBodies } from './http/body.js';
import { registerUrlTextCheck } from './http/request-text.js';
import { routeCompilers } from './http/validation.js';
import { createLogger } from './logger.js';
import type { CounterStore } from './ratelimit/counter.js';
import { ROUTES } from './routes/index.js';
import { buildServices } from './services.js';
import type { Store } from './store/store.js';
import { isStoreUnavailable, OUTAGE_RETRY_AFTER_SECONDS, type OutageReporter } from './store/unavailable.js';
import type { Resolver } from './egress/address-policy.js';
import { VERSION } from './kernel/version.js';

export const API_PREFIX = '/api/v1';

declare module 'fastify' {
  interface FastifyInstance {
    /** Compiles every route's validators and serializers now (they are otherwise compiled on first use); answers how many. */
    compileRouteSchemas(): number;
  }
}

export interface AppOptions {
  config: Config;
  store: Store;
  counters: CounterStore;
  clock?: () => number;
  /** Overrides how webhook host names are resolved (tests play DNS with it). */
  resolveHost?: Resolver;
  /** false: log nothing (tests). */
  logger?: false;
  /** The service's logger, when it was built before the app (server.ts). */
  log?: FastifyBaseLogger;
  /** Where database outages are reported once each (server.ts shares it with the store's connections). */
  outage?: OutageReporter;
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config } = options;
  // The logger comes first, so no service closes over the app (services.ts).
  const log = options.log ?? (options.logger === false ? pino({ level: 'silent' }) : createLogger(config.logLevel));
  const { services, start, close } = await buildServices({ ...options, log });
  const { metrics, usage, outage } = services;
  const app = Fastify({
    loggerInstance: log,
    bodyLimit: config.maxBodyBytes,
    genReqId: () => randomUUID(),
    // One line per request, written on completion (below), instead of two.
    logController: new LogController({ disableRequestLogging: true }),
    // Answer 503 to new requests while closing; in-flight ones finish.
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    ...(config.tls ? { https: { cert: fs.readFileSync(config.tls.certFile), key: fs.readFileSync(config.tls.keyFile) } } : {}),
  }).withTypeProvider<TypeBoxTypeProvider>();

  const compilers = routeCompilers();
  app.setValidatorCompiler(compilers.validator);
  app.setSerializerCompiler(compilers.serializer);
  app.decorate('compileRouteSchemas', compilers.compileAll);
  registerJsonBodies(app);
  registerUrlTextCheck(app);
  registerProblemHandlers(app, { unavailable: isStoreUnavailable, onUnavailable: (err) => outage.report(err), retryAfterSeconds: OUTAGE_RETRY_AFTER_SECONDS, domainProblem });
  // Shutdown order: finish every queued append (so no transaction is left open), then stop signing.
  app.addHook('onReady', async () => start());
  app.addHook('onClose', async () => close());
  // The hooks every request runs take callbacks: an async hook costs a promise each time.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    request.log.debug({ method: request.method, url: request.url }, 'request received');
    done();
  });
  // The request log line: never a credential or an event payload.
  app.addHook('onResponse', (request, reply, done) => {
    metrics.observeRequest(request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode, reply.elapsedTime / 1000);
    const p = request.principal;
    if (p) {
      const limited = reply.statusCode === 429 && p.kind === 'api_key';
      if (limited) metrics.rateLimited.inc();
      usage.request(p.companyId, p.kind === 'api_key' ? p.keyId : null, limited);
    }
    request.log.info(
      {
        method: request.method,
        route: request.routeOptions.url ?? null,
        status: reply.statusCode,
        latency_ms: Math.round(reply.elapsedTime * 100) / 100,
        company_id: request.principal?.companyId ?? null,
      },
      'request completed',
    );
    done();
  });
  // While shutting down, close each connection once its in-flight answer is sent,
  // instead of waiting for keep-alive timeouts.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('Connection', 'close');
    done(null, payload);
  });
  await app.register(cookie);
  registerAuthentication(app, services.authentication);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'audit-ledger API',
        version: VERSION,
        description:
          'Tamper-evident audit log ledger for AI agents. Every error is application/problem+json (RFC 9457) with a stable `code`.',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'Access token from POST /api/v1/auth/login' },
          apiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'Company integration API key' },
          apiKeyBearer: { type: 'http', scheme: 'bearer', description: 'The company integration API key (alk_…) sent as Authorization: Bearer, as agent SDKs do: accepted wherever X-API-Key is' },
          ...EXTRA_SECURITY_SCHEMES,
        },
      },
    },
    // The document is completed in place (http/openapi.ts); swagger's own type for it is the OpenAPI 3 object.
    transformObject: (documents) => completeDocument((documents as { openapiObject: Parameters<typeof completeDocument>[0] }).openapiObject) as unknown as ReturnType<SwaggerTransformObject>,
  });
  await app.register(swaggerUi, { routePrefix: `${API_PREFIX}/docs`, uiConfig: { url: `${API_PREFIX}/openapi.json` } });

  // Where to start, for a person (or a client) that opens the bare address.
  const index = async () => ({ name: 'audit-ledger', version: VERSION, docs: `${API_PREFIX}/docs`, openapi: `${API_PREFIX}/openapi.json`, health: `${API_PREFIX}/health` });
  // A browser opening the bare address gets the console; an API client, the index.
  app.get('/', { schema: { hide: true } }, async (request, reply) => (wantsPage(request.headers.accept) ? reply.redirect('/console/', 302) : index()));
  await registerConsole(app);
  await app.register(
    async (api) => {
      api.get('/', { schema: { hide: true } }, index);
      api.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
      for (const routes of ROUTES) await api.register(routes(services));
    },
    { prefix: API_PREFIX },
  );

  return app;
}
