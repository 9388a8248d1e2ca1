import path from 'node:path';
import type { Config } from '../kernel/config.js';
import { openPostgresStore } from './postgres.js';
import { openSqliteStore } from './sqlite.js';
import type { Store } from './store.js';

/** DATABASE_URL selects PostgreSQL (on Citus as LEDGER_STORE says); otherwise SQLite in the data directory. */
export function openStore(config: Pick<Config, 'databaseUrl' | 'dataDir'> & Partial<Pick<Config, 'ledgerStore'>>, onConnectionError?: (err: Error) => void): Store {
  return config.databaseUrl
    ? openPostgresStore(config.databaseUrl, undefined, onConnectionError, config.ledgerStore ?? 'auto')
    : openSqliteStore(path.join(config.dataDir, 'ledger.db'));
}
