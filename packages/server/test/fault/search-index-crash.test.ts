// The search indexer killed mid-way (issue 44): the real service builds the index of a backlog
// after the commit, is killed with SIGKILL in the middle, restarted, and resumes from its durable
// position: in the end every entry with content is in the index exactly once, none skipped, and
// its words are found. Both stores.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { STORE_KINDS } from '../helpers/env.js';
import { spawnCli } from '../helpers/process.js';
import { indexedEntries } from '../helpers/search.js';
import { createTestDatabase, type TestDatabase } from '../helpers/stores.js';
import { BOOTSTRAP, bootstrapKey, call, killLeftovers, scale, startService } from './harness.js';

describe.each(STORE_KINDS)('the search indexer killed mid-way (%s)', (kind) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase(kind);
  });
  afterAll(async () => {
    killLeftovers();
    await db.drop();
  });

  it('resumes after kill -9 from its position: every entry indexed once, none skipped', async () => {
    const env = { LEDGER_DATA_DIR: db.dataDir, ...(db.databaseUrl ? { DATABASE_URL: db.databaseUrl } : {}), ...BOOTSTRAP };
    const events = scale(40_000, 200_000);
    // A backlog appended with the index off, each entry with a word of its own among others.
    const first = await startService({ ...env, SEARCH_INDEX: 'off' });
    const key = await bootstrapKey(first.url);
    const api = { 'x-api-key': key };
    const wordOf = (n: number) => `w${n}x${n % 7}`;
    const filler = 'the agent read the ticket, called the refund tool and wrote a note for the reviewer about the customer and the order '.repeat(3);
    for (let i = 0; i < events; i += 1000) {
      const logs = Array.from({ length: 1000 }, (_, j) => ({ event_type: 'note', data: { n: i + j, text: `${wordOf(i + j)} ${filler}` } }));
      const r = await call(`${first.url}/api/v1/logs/batch`, 'POST', { logs }, api);
      expect(r.status, r.body).toBe(200);
    }
    expect(await first.stop()).toBe(0);

    // Restarted with the index on: it builds the backlog's index. Killed as soon as the first
    // batch is committed, watched from outside (the service is not waited for: it starts building
    // before it listens).
    const store = db.open();
    const child = spawnCli(['serve'], { PORT: '0', ...env });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    try {
      await vi.waitFor(async () => expect((await indexedEntries(store).catch(() => [])).length).toBeGreaterThan(0), { timeout: 60_000, interval: 2 });
    } finally {
      child.kill('SIGKILL');
      await exited;
    }

    try {
      const held = (await indexedEntries(store)).length;
      expect(held, 'the kill came after the index was built: nothing to resume').toBeLessThan(events);
      expect(held).toBeGreaterThan(0);

      const third = await startService(env);
      const last = (await call(`${third.url}/api/v1/logs/search?${new URLSearchParams({ q: wordOf(events - 1), wait_for_seq: String(Number.MAX_SAFE_INTEGER) })}`, 'GET', undefined, api)).json();
      expect(last.items).toHaveLength(1);
      await vi.waitFor(async () => expect((await indexedEntries(store)).length).toBeGreaterThanOrEqual(events), { timeout: 60_000, interval: 50 });
      const entries = await indexedEntries(store);
      expect(new Set(entries).size).toBe(entries.length);
      const withContent = Number((await sql<{ n: string | number }>`SELECT count(*) AS n FROM log_entries WHERE data IS NOT NULL`.execute(store.db)).rows[0]?.n);
      expect(entries.length).toBe(withContent);
      // Words from around the kill, and from each end, found once each.
      for (const n of [0, held - 1, held, held + 1, Math.floor(events / 2), events - 1]) {
        const r = await call(`${third.url}/api/v1/logs/search?${new URLSearchParams({ q: wordOf(n) })}`, 'GET', undefined, api);
        expect(r.json().items.map((e: { data: { n: number } }) => e.data.n), `word of entry ${n}`).toEqual([n]);
      }
      expect(await third.stop()).toBe(0);
    } finally {
      await store.close();
    }
  });
});

