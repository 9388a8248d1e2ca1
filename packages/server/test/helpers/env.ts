// Where the test suites find the local PostgreSQL and Redis. Both must be reachable;
// a developer without them may set AUDIT_LEDGER_TEST_SKIP_SERVERS=1, which CI refuses.
export const TEST_PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const SKIP_SERVERS = process.env.AUDIT_LEDGER_TEST_SKIP_SERVERS === '1' && process.env.CI !== 'true';

/** `citus`: the PostgreSQL store on a Citus coordinator with two workers (helpers/citus.ts). */
export type StoreKind = 'sqlite' | 'postgres' | 'citus';
/**
 * The stores every behavioural suite runs against: SQLite and PostgreSQL, or those named by
 * AUDIT_LEDGER_TEST_STORES (the `citus` project of vitest.config.ts runs its suites with `citus`
 * on a cluster its global setup makes).
 */
export const STORE_KINDS: StoreKind[] = process.env.AUDIT_LEDGER_TEST_STORES
  ? (process.env.AUDIT_LEDGER_TEST_STORES.split(',') as StoreKind[])
  : SKIP_SERVERS
    ? ['sqlite']
    : ['sqlite', 'postgres'];

/** The run's store with a server (several processes on one database): PostgreSQL, or Citus in the `citus` project; none when only SQLite runs. */
export const SERVER_STORE: Exclude<StoreKind, 'sqlite'> | undefined = STORE_KINDS.find((k): k is Exclude<StoreKind, 'sqlite'> => k !== 'sqlite');
