// Builds the Fastify application from its dependencies. No I/O of its own besides
// what the injected store and counters do, so tests build it against a real store
// and drive it with inject() or a real socket.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions, LogController } from 'fastify';
import { registerAuthentication } from './auth/authenticate.js';
import type { Config } from './config.js';
import { registerProblemHandlers } from './http/problems.js';
import { registerJsonBodies } from './http/body.js';
import { registerUrlTextCheck } from './http/request-text.js';
import { validatorCompiler } from './http/validation.js';
import { loggerOptions } from './logger.js';
import type { CounterStore } from './ratelimit/counter.js';
import { Appender } from './ledger/appender.js';
import { CheckpointSigner } from './ledger/checkpoints.js';
import { IntegrityVerifier } from './integrity/verifier.js';
import { Keyring } from './ledger/keyring.js';
import { WorkerSigner } from './ledger/signer.js';
import { apiKeyRoutes } from './routes/api-keys.js';
import { exportRoutes } from './routes/exports.js';
import { forensicsRoutes } from './routes/forensics.js';
import { hitlRoutes } from './routes/hitl.js';
import { Forensics } from './forensics/service.js';
import type { EventSink } from './events.js';
import { Metrics } from './ops/metrics.js';
import { UsageCounter } from './ops/usage.js';
import { WebhookStore } from './store/webhooks.js';
import { DeliveryWorker } from './webhooks/delivery.js';
import { openSecretBox, type SecretBox } from './webhooks/secrets.js';
import { type Resolver, systemResolver } from './webhooks/url-policy.js';
import { WebhookEventSink } from './webhooks/sink.js';
import { healthRoutes } from './routes/health.js';
import { metricsRoutes } from './routes/metrics.js';
import { usageRoutes } from './routes/usage.js';
import { webhookRoutes } from './routes/webhooks.js';
import { integrityRoutes } from './routes/integrity.js';
import { keyRoutes } from './routes/keys.js';
import { logRoutes } from './routes/logs.js';
import { authRoutes } from './routes/auth.js';
import type { Store } from './store/store.js';
import { isStoreUnavailable, OUTAGE_RETRY_AFTER_SECONDS, OutageReporter } from './store/unavailable.js';
import { VERSION } from './version.js';

export const API_PREFIX = '/api/v1';

/** What every route module gets. */
export interface AppContext {
  config: Config;
  store: Store;
  counters: CounterStore;
  /** Milliseconds since the epoch; injectable so tests can move time without sleeping. */
  clock: () => number;
  keyring: Keyring;
  appender: Appender;
  verifier: IntegrityVerifier;
  forensics: Forensics;
  events: EventSink;
  metrics: Metrics;
  usage: UsageCounter;
  webhooks: WebhookStore;
  secretBox: SecretBox;
  /** How webhook host names are resolved (the system resolver unless a test supplies one). */
  resolveHost: Resolver;
}

export interface AppOptions {
  config: Config;
  store: Store;
  counters: CounterStore;
  clock?: () => number;
  /** Overrides how webhook host names are resolved (tests play DNS with it). */
  resolveHost?: Resolver;
  /** Overrides the logger (tests pass false). */
  logger?: FastifyServerOptions['logger'];
  /** The service's logger, when it was built before the app (server.ts). */
  log?: FastifyBaseLogger;
  /** Where database outages are reported once each (server.ts shares it with the store's connections). */
  outage?: OutageReporter;
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const clock = options.clock ?? Date.now;
  const resolveHost = options.resolveHost ?? systemResolver;
  const { config, store } = options;
  const secretBox = openSecretBox(config);
  const keyring = await Keyring.open({ config, store, box: secretBox }, clock());
  const signer = new WorkerSigner(keyring.active, config.signingWorkers);
  const metrics = new Metrics({ rateLimitFallback: () => options.counters.fallbackActive });
  // A database outage is one warn line (OutageReporter), not an error with a stack per failure.
  const outage = options.outage ?? new OutageReporter({ clock, warn: (obj, msg) => app.log.warn(obj, msg) });
  const logError = (obj: { err?: unknown }, msg: string) => (isStoreUnavailable(obj.err) ? outage.report(obj.err) : app.log.error(obj, msg));
  const appender = new Appender(store, keyring, signer, clock, {
    checkpoints: new CheckpointSigner(config.ledgerOrigin),
    checkpointIntervalMs: config.checkpointIntervalMs,
    onError: (err, message) => logError({ err }, message),
    onCommit: (entries, seconds) => {
      metrics.eventsAppended.inc(entries);
      metrics.appendBatchSize.observe(entries);
      metrics.appendDuration.observe(seconds);
    },
  });
  const webhooks = new WebhookStore(store);
  // The sink wakes the worker after recording an event (only ever called once both exist).
  const events = new WebhookEventSink(webhooks, clock, () => delivery.kick());
  const delivery = new DeliveryWorker({ repo: webhooks, box: secretBox, clock, timeoutMs: config.webhookTimeoutMs, allowPrivate: config.webhookAllowPrivate, metrics, events, logError, resolve: resolveHost });
  const usage = new UsageCounter(store, clock, logError);
  const verifier = new IntegrityVerifier(store, {
    keyName: config.ledgerOrigin,
    intervalSeconds: config.integrityVerifyIntervalSeconds,
    clock,
    logError,
    events,
    metrics,
  });
  const forensics = new Forensics(store, keyring, { maxAgeDefaults: config.stalenessMaxAge, clock, events, keyName: config.ledgerOrigin });
  const ctx: AppContext = { config, store, counters: options.counters, clock, keyring, appender, verifier, forensics, events, metrics, usage, webhooks, secretBox, resolveHost };
  const app = Fastify({
    ...(options.log ? { loggerInstance: options.log } : { logger: options.logger ?? loggerOptions(config.logLevel) }),
    bodyLimit: config.maxBodyBytes,
    genReqId: () => randomUUID(),
    // One line per request, written on completion (below), instead of two.
    logController: new LogController({ disableRequestLogging: true }),
    // Answer 503 to new requests while closing; in-flight ones finish.
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    ...(config.tls ? { https: { cert: fs.readFileSync(config.tls.certFile), key: fs.readFileSync(config.tls.keyFile) } } : {}),
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler());
  registerJsonBodies(app);
  registerUrlTextCheck(app);
  registerProblemHandlers(app, { unavailable: isStoreUnavailable, onUnavailable: (err) => outage.report(err), retryAfterSeconds: OUTAGE_RETRY_AFTER_SECONDS });
  // Shutdown order: finish every queued append (so no transaction is left open), then stop signing.
  app.addHook('onReady', async () => {
    verifier.start();
    usage.start();
    if (config.webhookDelivery) delivery.start();
  });
  app.addHook('onClose', async () => {
    await verifier.close();
    await delivery.close();
    await appender.close();
    await signer.close();
    await usage.close();
  });
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
  registerAuthentication(app, ctx);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'audit-ledger API',
        version: VERSION,
        description:
          'Tamper-evident audit log ledger for AI agents. Every error is application/problem+json (RFC 9457) with a stable `code`.',
      },
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'Access token from POST /api/v1/auth/login' },
          apiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'Company integration API key' },
        },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: `${API_PREFIX}/docs`, uiConfig: { url: `${API_PREFIX}/openapi.json` } });

  // Where to start, for a person (or a client) that opens the bare address.
  const index = async () => ({ name: 'audit-ledger', version: VERSION, docs: `${API_PREFIX}/docs`, openapi: `${API_PREFIX}/openapi.json`, health: `${API_PREFIX}/health` });
  app.get('/', { schema: { hide: true } }, index);
  await app.register(
    async (api) => {
      api.get('/', { schema: { hide: true } }, index);
      api.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
      await api.register(authRoutes(ctx));
      await api.register(apiKeyRoutes(ctx));
      await api.register(logRoutes(ctx));
      await api.register(integrityRoutes(ctx));
      await api.register(keyRoutes(ctx));
      await api.register(exportRoutes(ctx));
      await api.register(forensicsRoutes(ctx));
      await api.register(hitlRoutes(ctx));
      await api.register(healthRoutes(ctx));
      await api.register(metricsRoutes(ctx));
      await api.register(usageRoutes(ctx));
      await api.register(webhookRoutes(ctx));
    },
    { prefix: API_PREFIX },
  );

  return app;
}
