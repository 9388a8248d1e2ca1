import path from 'node:path';
import type { Config } from '../kernel/config.js';
import { openPostgresStore } from './postgres.js';
import { openSqliteStore } from './sqlite.js';
import type { Store } from './store.js';

/** DATABASE_URL selects PostgreSQL; otherwise SQLite in the data directory. */
export function openStore(config: Pick<Config, 'databaseUrl' | 'dataDir'>, onConnectionError?: (err: Error) => void): Store {
  return config.databaseUrl ? openPostgresStore(config.databaseUrl, undefined, onConnectionError) : openSqliteStore(path.join(config.dataDir, 'ledger.db'));
}
