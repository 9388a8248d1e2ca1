// Process lifecycle: open the store, migrate, bootstrap, listen; on SIGTERM/SIGINT
// stop accepting, let in-flight requests finish, close the store, exit 0.
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { bootstrapIfEmpty } from './accounts.js';
import { buildApp } from './app.js';
import { flushLogs } from './logger.js';
import type { Config } from './config.js';
import { type CounterStore, MemoryCounterStore, RedisCounterStore } from './ratelimit/counter.js';
import { openStore } from './store/open.js';
import { iso } from './time.js';

export interface RunningService {
  app: FastifyInstance;
  url: string;
  close(): Promise<void>;
}

export function openCounters(config: Pick<Config, 'redisUrl'>): CounterStore {
  if (!config.redisUrl) return new MemoryCounterStore();
  return new RedisCounterStore(new Redis(config.redisUrl, { maxRetriesPerRequest: 2, enableOfflineQueue: true }));
}

export async function startService(config: Config): Promise<RunningService> {
  const store = openStore(config);
  const counters = openCounters(config);
  try {
    await store.migrate();
    const created = await bootstrapIfEmpty(store, config.bootstrap);
    const app = await buildApp({ config, store, counters });
    if (created) app.log.info({ company: created.company.name, email: created.user.email }, 'bootstrap: created first company and admin user');
    const url = await app.listen({ host: config.host, port: config.port });
    // Expired access tokens are useless; remove them at start and then hourly.
    const sweep = () => void store.deleteExpiredAccessTokens(iso(Date.now())).catch((err: unknown) => app.log.warn({ err }, 'token sweep failed'));
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
