// The OpenAPI document without a running service: the app built on an empty in-memory SQLite
// store, asked for its document. `audit-ledger openapi` prints it; `npm run openapi` writes it
// to docs/openapi.json, from which the SDK's types are generated (packages/sdk/src/api-types.ts).
import { buildApp } from './app.js';
import { loadConfig } from './kernel/config.js';
import { MemoryCounterStore } from './ratelimit/counter.js';
import { openSqliteStore } from './store/sqlite.js';

export async function openApiDocument(env: NodeJS.ProcessEnv = process.env): Promise<unknown> {
  const config = { ...loadConfig({ ...env, LOG_LEVEL: 'silent' }), databaseUrl: undefined };
  const store = openSqliteStore(':memory:');
  const counters = new MemoryCounterStore();
  try {
    await store.migrate();
    const app = await buildApp({ config, store, counters, logger: false });
    try {
      await app.ready();
      return app.swagger();
    } finally {
      await app.close();
    }
  } finally {
    await Promise.allSettled([store.close(), counters.close()]);
  }
}
