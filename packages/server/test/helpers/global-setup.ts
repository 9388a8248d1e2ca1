// Builds first (when anything changed), then fails the whole run, with a clear message, when
// PostgreSQL or Redis is unreachable: their tests must run, never silently skip.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { SKIP_SERVERS, TEST_PG_URL, TEST_REDIS_URL } from './env.js';
import { ensureTemplates } from './stores.js';

/** Whether the process that created a test database (al_test_<pid>_<random>) still runs; names without a pid are old leftovers. */
function creatorAlive(name: string): boolean {
  const pid = Number(/^al_test_(\d+)_/.exec(name)?.[1]);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export default async function setup(): Promise<void> {
  // The build is current before any test runs: worker threads run the built modules (kernel/threads.ts),
  // and the CLI, release and README suites run dist. A digest check when nothing changed.
  execFileSync(process.execPath, [path.join(import.meta.dirname, '..', '..', '..', '..', 'scripts', 'build.mjs')], { stdio: 'inherit' });
  if (SKIP_SERVERS) {
    console.warn('AUDIT_LEDGER_TEST_SKIP_SERVERS=1: PostgreSQL and Redis suites are skipped');
    return;
  }
  const client = new pg.Client({ connectionString: TEST_PG_URL, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    // Leftovers of interrupted runs: only databases whose creating process is gone. (Dropping
    // every al_test_ database broke any other run on the machine in the middle of its tests.)
    const { rows } = await client.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname LIKE 'al_test_%'",
    );
    for (const r of rows) if (!creatorAlive(r.datname)) await client.query(`DROP DATABASE IF EXISTS "${r.datname}" WITH (FORCE)`);
  } catch (err) {
    throw new Error(`PostgreSQL at ${TEST_PG_URL} is unreachable (${String(err)}); start it or set TEST_DATABASE_URL`);
  } finally {
    await client.end().catch(() => {});
  }
  // Migrated templates: a suite's store is copied from them instead of migrated again.
  await ensureTemplates();
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5000 });
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    throw new Error(`Redis at ${TEST_REDIS_URL} is unreachable (${String(err)}); start it or set TEST_REDIS_URL`);
  } finally {
    redis.disconnect();
  }
}
