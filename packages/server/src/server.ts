// Process lifecycle: open the store, migrate, bootstrap, listen; on SIGTERM/SIGINT
// stop accepting, let in-flight requests finish, close the store, exit 0.
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { bootstrapIfEmpty } from './users/accounts.js';
import { buildApp } from './app.js';
import { createLogger, flushLogs } from './logger.js';
import type { Config } from './kernel/config.js';
import { type CounterLog, type CounterStore, MemoryCounterStore, RedisCounterStore } from './ratelimit/counter.js';
import { openStore } from './store/open.js';
import { OutageReporter } from './store/unavailable.js';
import { iso } from './kernel/time.js';

export interface RunningService {
  app: FastifyInstance;
  url: string;
  close(): Promise<void>;
}

export function openCounters(config: Pick<Config, 'redisUrl'>, log?: CounterLog): CounterStore {
  if (!config.redisUrl) return new MemoryCounterStore();
  // A command waits at most 1 s for an answer; then this request counts in memory (counter.ts).
  return new RedisCounterStore({ redis: new Redis(config.redisUrl, { maxRetriesPerRequest: 1, commandTimeout: 1000, enableOfflineQueue: true }), log });
}

/** Starts the service; `clock` (milliseconds since the epoch) is Date.now unless a test moves time. */
export async function startService(config: Config, clock: () => number = Date.now): Promise<RunningService> {
  const log = createLogger(config.logLevel);
  // Failures of the database's connections outside a query are part of an outage too: one warn line per outage.
  const outage = new OutageReporter({ clock, warn: (obj, msg) => log.warn(obj, msg) });
  const store = openStore(config, (err) => outage.report(err));
  const counters = openCounters(config, log);
  let built: FastifyInstance | undefined;
  try {
    await store.migrate();
    if (await store.onCitus()) log.info({ store: 'citus' }, 'store: PostgreSQL on a Citus coordinator, the schema distributed by company (docs/scaling.md)');
    const created = await bootstrapIfEmpty(store, config.bootstrap, clock);
    const app = await buildApp({ config, store, counters, log, outage, clock });
    built = app;
    if (created) app.log.info({ company: created.company.name, email: created.user.email }, 'bootstrap: created first company and admin user');
    else if ((await store.accounts.countUsers()) === 0) {
      // Nobody can log in yet: say exactly how to fix that, once, at start.
      app.log.warn(
        {
          create_admin: "echo 'a password of 12+ characters' | npx audit-ledger users create --company acme --email admin@example.com --password-stdin",
          or_restart_with: "LEDGER_BOOTSTRAP_EMAIL=admin@example.com LEDGER_BOOTSTRAP_PASSWORD='a password of 12+ characters' npm start",
        },
        'no user exists yet, so nobody can log in: create the first admin with create_admin (while the service runs), or restart with or_restart_with',
      );
    }
    const url = await app.listen({ host: config.host, port: config.port });
    // Expired access tokens are useless; remove them at start and then hourly.
    const sweep = () => void store.accounts.deleteExpiredAccessTokens(iso(clock())).catch((err: unknown) => app.log.warn({ err }, 'token sweep failed'));
    sweep();
    const sweeper = setInterval(sweep, 3_600_000).unref();
    let closing: Promise<void> | undefined;
    const close = () =>
      (closing ??= (async () => {
        clearInterval(sweeper);
        await app.close(); // stops accepting; waits for in-flight requests
        await Promise.allSettled([store.close(), counters.close()]);
      })());
    return { app, url, close };
  } catch (err) {
    // A failed start (port taken, say) stops what it started, background work included, so the
    // caller can exit and a supervisor start it again.
    await built?.close().catch(() => undefined);
    await Promise.allSettled([store.close(), counters.close()]);
    throw err;
  }
}

/** Installs SIGTERM/SIGINT handlers that shut the service down cleanly and exit 0. */
export function handleSignals(service: RunningService): void {
  const onSignal = (signal: NodeJS.Signals) => {
    service.app.log.info({ signal }, 'shutting down');
    service.close().then(
      () => {
        flushLogs();
        process.exit(0);
      },
      (err: unknown) => {
        service.app.log.error({ err }, 'error during shutdown');
        flushLogs();
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
}
