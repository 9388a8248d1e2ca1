// Issue 42 (20): on SQLite, searches inside events run off the request thread and within a time
// budget (store/sqlite-reader.ts). A search that runs past its budget is ended and answered
// search_too_slow while the request thread goes on serving; the next search works. The searches
// themselves (results, paging, both stores) are search.test.ts's, which now run through it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { SearchTooSlowError } from '../src/kernel/domain-error.js';
import { openPostgresStore } from '../src/store/postgres.js';
import { createTestDatabase } from './helpers/stores.js';
import { SqliteSearchReader } from '../src/store/sqlite-reader.js';
import { openSqliteStore } from '../src/store/sqlite.js';

describe('the SQLite search thread', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-reader-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('ends a search past its budget with search_too_slow while the request thread keeps running, then serves the next', async () => {
    const file = path.join(dir, 'ledger.db');
    const store = openSqliteStore(file);
    await store.migrate();
    await store.close();
    const reader = new SqliteSearchReader(file, path.join(dir, 'ledger.search.db'), 300);
    try {
      // A query that never ends on its own (what a full scan of a huge company is, for this purpose).
      const endless = reader.query('WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) AS n FROM c', []);
      // Meanwhile the event loop turns: on the request thread, this loop would never run until the query ended.
      let turns = 0;
      const spin = async () => {
        for (;;) {
          await new Promise((r) => setImmediate(r));
          turns++;
          if (turns > 1_000_000) return;
        }
      };
      void Promise.race([spin(), endless.catch(() => undefined)]);
      await expect(endless).rejects.toBeInstanceOf(SearchTooSlowError);
      expect(turns).toBeGreaterThan(10);
      turns = 2_000_000; // stop the spinner
      expect(await reader.query('SELECT count(*) AS n FROM log_entries', [])).toEqual([{ n: 0 }]);
      await expect(reader.query('SELECT nonsense FROM nowhere', [])).rejects.toThrow('SQLite search: no such table: nowhere');
      expect(await reader.query('SELECT ? + 1 AS v', [41])).toEqual([{ v: 42 }]);
    } finally {
      await reader.close();
    }
  });
});

describe('the PostgreSQL search budget', () => {
  it('ends a search inside data past its budget with search_too_slow (a statement_timeout), then serves the next', async () => {
    const db = await createTestDatabase('postgres');
    const store = openPostgresStore(db.databaseUrl as string);
    const locker = new pg.Client({ connectionString: db.databaseUrl });
    try {
      await store.migrate();
      store.ledger.searchBudgetMs = 300;
      await locker.connect();
      // The search waits on a lock another session holds: past its budget, however fast the machine.
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE log_entries IN ACCESS EXCLUSIVE MODE');
      const filter = { where: [{ path: ['customer_id'], op: '=' as const, value: 'nobody' }], order: 'desc' as const, limit: 10 };
      await expect(store.ledger.listEntries('00000000-0000-7000-8000-000000000001', filter)).rejects.toBeInstanceOf(SearchTooSlowError);
      await expect(store.ledger.listEntries('00000000-0000-7000-8000-000000000001', { text: ['refund'], order: 'desc', limit: 10 })).rejects.toBeInstanceOf(SearchTooSlowError);
      await locker.query('ROLLBACK');
      expect(await store.ledger.listEntries('00000000-0000-7000-8000-000000000001', filter)).toEqual([]);
    } finally {
      await locker.end().catch(() => undefined);
      await store.close();
      await db.drop();
    }
  });
});
