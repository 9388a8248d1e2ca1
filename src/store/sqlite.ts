// The embedded default: one SQLite file in the data directory, WAL mode.
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database } from './schema.js';
import { Store } from './store.js';

// SQLite names the violated columns, not the index; map them back to index names.
const UNIQUE_INDEX_BY_COLUMNS: Record<string, string> = {
  'users.email': 'users_email_uq',
  'api_keys.company_id': 'api_keys_one_active_uq',
  'api_keys.key_hash': 'api_keys_hash_uq',
  'access_tokens.token_hash': 'access_tokens_hash_uq',
  'companies.name': 'companies_name_key',
};

function uniqueViolation(err: unknown): string | undefined {
  if (!(err instanceof SQLite.SqliteError) || !err.code.startsWith('SQLITE_CONSTRAINT')) return undefined;
  const m = /UNIQUE constraint failed: (.+)$/.exec(err.message);
  return m?.[1] ? (UNIQUE_INDEX_BY_COLUMNS[m[1]] ?? m[1]) : undefined;
}

export function openSqliteStore(file: string): Store {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const database = new SQLite(file);
  database.pragma('journal_mode = WAL');
  // FULL: a commit is on disk before we acknowledge it, even across power loss.
  database.pragma('synchronous = FULL');
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
  return new Store('sqlite', db, uniqueViolation);
}
