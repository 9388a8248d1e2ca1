// Where the test suites find the local PostgreSQL and Redis. Both must be reachable;
// a developer without them may set AUDIT_LEDGER_TEST_SKIP_SERVERS=1, which CI refuses.
export const TEST_PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const SKIP_SERVERS = process.env.AUDIT_LEDGER_TEST_SKIP_SERVERS === '1' && process.env.CI !== 'true';

export type StoreKind = 'sqlite' | 'postgres';
/** The stores every behavioural suite runs against. */
export const STORE_KINDS: StoreKind[] = SKIP_SERVERS ? ['sqlite'] : ['sqlite', 'postgres'];
