// Production store: PostgreSQL through a pg pool; several service processes may share one database.
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';
import { Store } from './store.js';

function uniqueViolation(err: unknown): string | undefined {
  const e = err as { code?: unknown; constraint?: unknown };
  return e.code === '23505' && typeof e.constraint === 'string' ? e.constraint : undefined;
}

export function openPostgresStore(connectionString: string, poolSize = 10): Store {
  const pool = new pg.Pool({ connectionString, max: poolSize });
  // An idle client that loses its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return new Store('postgres', db, uniqueViolation);
}
