// Node 24 and the worker threads: better-sqlite3 ≤ 12 aborted the process at start or exit on
// Node 24 (`Assertion failed: (env) != nullptr` in a Statement destructor on a worker thread).
// This starts the real service 20 times (`npm run chaos`; 3 in `npm run test:all`) on one SQLite file, with signing workers and the SQLite
// writer thread busy, appends through both paths, stops it with SIGTERM, and asserts that every
// run exits 0 without an abort and that every acknowledged event is there afterwards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.js';
import { LogWatcher, spawnCli } from '../helpers/process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/stores.js';
import { scale } from './harness.js';

const RUNS = scale(3, 20);

describe(`the service started and stopped ${RUNS} times on Node ${process.versions.node}`, () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('sqlite');
  });
  afterAll(() => db.drop());

  it('exits 0 every time, never aborts, and keeps every acknowledged event', async () => {
    const env = {
      LEDGER_DATA_DIR: db.dataDir,
      PORT: '0',
      LEDGER_SIGNING_WORKERS: '2',
      LEDGER_BOOTSTRAP_EMAIL: 'cycle@x.test',
      LEDGER_BOOTSTRAP_PASSWORD: 'cycle password 123',
    };
    let key = '';
    let acknowledged = 0;
    let lastBase = '';
    for (let run = 0; run < RUNS; run++) {
      const child = spawnCli(['serve'], env);
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      const listening = await new LogWatcher(child).waitFor((l) => l.msg === 'audit-ledger listening');
      const base = String(listening.url);
      lastBase = base;
      if (!key) {
        const login = await call(`${base}/api/v1/auth/login`, 'POST', { email: 'cycle@x.test', password: 'cycle password 123' });
        const token = login.json().access_token as string;
        const created = await call(`${base}/api/v1/auth/api_keys`, 'POST', { name: 'cycle', rate_limit_per_minute: 100000 }, { authorization: `Bearer ${token}` });
        key = created.json().key as string;
      }
      // Single events (signed by the writer thread) and a batch large enough for the workers.
      const singles = Array.from({ length: 5 }, (_, i) => call(`${base}/api/v1/logs`, 'POST', { event_type: 'cycle', data: { run, i } }, { 'x-api-key': key }));
      const batch = call(`${base}/api/v1/logs/batch`, 'POST', { logs: Array.from({ length: 100 }, (_, i) => ({ event_type: 'cycle.batch', data: { run, i } })) }, { 'x-api-key': key });
      for (const r of await Promise.all([...singles, batch])) {
        expect(r.status).toBe(200);
        acknowledged += r.body.includes('"ingested"') ? r.json().ingested : 1;
      }
      child.kill('SIGTERM');
      const code = await exited;
      expect(stderr).not.toMatch(/Assertion failed|Aborted|core dumped/);
      expect(code, `run ${run} exited ${code}: ${stderr}`).toBe(0);
    }
    // One more start: the chain holds every acknowledged event.
    const child = spawnCli(['serve'], env);
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    lastBase = String((await new LogWatcher(child).waitFor((l) => l.msg === 'audit-ledger listening')).url);
    const status = await call(`${lastBase}/api/v1/integrity/status`, 'GET', undefined, { 'x-api-key': key });
    expect(status.json().head.seq + 1).toBe(acknowledged + 2); // and the bootstrap admin's user.created and the API key's api_key.created entries
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 300_000);
});
