// The search index kept after the commit (store/search-index.ts, issue 44), black-box on both
// stores: answers say how far the index has caught up (indexed_seq) and wait for a seq when asked
// (wait_for_seq); a restart resumes from the index's position, so nothing is indexed twice or
// skipped; an erasure that meets the indexer in the middle of a backlog never leaves the erased
// content in the index, not even for a moment after it answered.
import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { describe, expect, it, vi } from 'vitest';
import { problem, startTestApp, type TestApp } from './helpers/app.js';
import { STORE_KINDS } from './helpers/env.js';
import { entriesIndexedFor, EVERYTHING, indexedEntries } from './helpers/search.js';
import { createTestStore } from './helpers/stores.js';

type Shared = Awaited<ReturnType<typeof createTestStore>>;

/** Entries holding content (the index holds exactly these), over every company. */
async function entriesWithContent(shared: Shared): Promise<number> {
  const r = await sql<{ n: number | string }>`SELECT count(*) AS n FROM log_entries WHERE data IS NOT NULL`.execute(shared.store.db);
  return Number(r.rows[0]?.n ?? 0);
}

/** A company and its agent on the service `app()` answers now (the key stays valid across restarts on one store). */
async function agentOf(app: () => TestApp) {
  const t = app();
  const admin = await t.newAccount();
  const { key } = await t.createKey(admin.token, 1_000_000);
  const agent = { 'x-api-key': key };
  const login = async () => (await app().inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: admin.email, password: admin.password } })).json().access_token as string;
  const search = (q: Record<string, string>) => app().inject({ method: 'GET', url: `/api/v1/logs/search?${new URLSearchParams(q)}`, headers: agent });
  const batch = async (logs: unknown[]) => {
    const r = await app().inject({ method: 'POST', url: '/api/v1/logs/batch', headers: agent, payload: { logs } });
    expect(r.statusCode, r.body).toBe(200);
    return r.json() as { log_ids: string[] };
  };
  return { admin, agent, login, search, batch };
}

describe.each(STORE_KINDS)('search indexed after the commit on %s', (kind) => {
  it('answers say how far the index has caught up, and wait_for_seq finds what was just appended', async () => {
    const t = await startTestApp(kind);
    try {
      const c = await agentOf(() => t);
      const word = `fresh${randomUUID().slice(0, 8)}`;
      const r = await t.inject({ method: 'POST', url: '/api/v1/logs', headers: c.agent, payload: { event_type: 'note', data: { text: `the word ${word}` } } });
      expect(r.statusCode, r.body).toBe(200);
      const seq = r.json().seq as number;
      const found = await c.search({ q: word, wait_for_seq: String(seq) });
      expect(found.statusCode, found.body).toBe(200);
      expect(found.json().items.map((e: { seq: number }) => e.seq)).toEqual([seq]);
      expect(found.json().indexed_seq).toBeGreaterThanOrEqual(seq);
      // A seq past the head waits for the head, no longer.
      expect((await c.search({ q: word, wait_for_seq: EVERYTHING })).json()).toMatchObject({ indexed_seq: seq, items: [{ seq }] });
      // Conditions need no index, and the answer still says how far it got.
      const byPath = await c.search({ where: `data.text = "the word ${word}"` });
      expect(byPath.json()).toMatchObject({ indexed_seq: seq, items: [{ seq }] });
      // What a client can send wrong: a clear 400, nothing waited for.
      for (const bad of ['-1', 'abc', '1.5', String(2 ** 60)]) problem(await c.search({ q: word, wait_for_seq: bad }), 400, 'validation_failed');
    } finally {
      await t.close();
    }
  });

  it('a restart resumes from the position: every entry indexed once, none skipped, nothing rebuilt', async () => {
    const shared = await createTestStore(kind);
    try {
      let t = await startTestApp(kind, { store: shared });
      const c = await agentOf(() => t);
      const words: string[] = [];
      const logsOf = (n: number) =>
        Array.from({ length: n }, () => {
          const w = `w${randomUUID().replace(/-/g, '').slice(0, 12)}`;
          words.push(w);
          return { event_type: 'note', data: { text: w } };
        });
      for (let i = 0; i < 3; i++) await c.batch(logsOf(1000));
      expect((await c.search({ q: words[0] as string, wait_for_seq: EVERYTHING })).json().items).toHaveLength(1);
      await t.close();
      const file = (shared.store.searchIndex as { file?: string }).file;
      const inode = file ? fs.statSync(file).ino : undefined;
      const positions = kind !== 'sqlite' ? (await sql<{ indexed_seq: string }>`SELECT indexed_seq FROM search_positions WHERE company_id = ${c.admin.companyId}`.execute(shared.store.db)).rows[0]?.indexed_seq : undefined;

      t = await startTestApp(kind, { store: shared });
      await c.batch(logsOf(1000));
      // What indexed_seq claims holds at once: everything before the restart, and the entry it names is found by its word.
      const claimed = (await c.search({ where: 'data.text != ""', limit: '1' })).json().indexed_seq as number;
      expect(claimed).toBeGreaterThanOrEqual(2999);
      expect((await c.search({ q: words[claimed] as string })).json().items).toHaveLength(1);
      expect((await c.search({ q: words.at(-1) as string, wait_for_seq: EVERYTHING })).json().items).toHaveLength(1);
      // Resumed, not rebuilt: the same index file (SQLite), the position not reset (PostgreSQL).
      if (file) expect(fs.statSync(file).ino).toBe(inode);
      if (positions !== undefined) expect(Number((await sql<{ indexed_seq: string }>`SELECT indexed_seq FROM search_positions WHERE company_id = ${c.admin.companyId}`.execute(shared.store.db)).rows[0]?.indexed_seq)).toBeGreaterThan(Number(positions));
      // Once: no entry twice. None skipped: as many as hold content, and each word found once.
      await waitUntilIndexed(shared);
      const held = await indexedEntries(shared.store);
      expect(new Set(held).size).toBe(held.length);
      expect(held.length).toBe(await entriesWithContent(shared));
      for (const w of [words[0], words[1999], words[2000], words[3999]] as string[]) expect(await entriesIndexedFor(shared.store, w), w).toBe(1);
      await t.close();
    } finally {
      await shared.dispose();
    }
  });

  it('an erasure meeting the indexer in the middle of a backlog: the erased content is out of the index when it answers, and stays out', async () => {
    const shared = await createTestStore(kind);
    try {
      // A backlog: 6,000 entries appended while the index is off, the one to erase in the middle.
      let t = await startTestApp(kind, { store: shared, env: { SEARCH_INDEX: 'off' } });
      const c = await agentOf(() => t);
      const secret = `secret${randomUUID().slice(0, 8)}`;
      const neighbour = `neighbour${randomUUID().slice(0, 8)}`;
      for (let i = 0; i < 3; i++) await c.batch(Array.from({ length: 1000 }, (_, j) => ({ event_type: 'note', data: { n: i * 1000 + j } })));
      const { log_ids } = await c.batch([
        { event_type: 'note', data: { subject_id: 'person-7', text: `call ${secret}` } },
        { event_type: 'note', data: { text: neighbour } },
      ]);
      for (let i = 0; i < 3; i++) await c.batch(Array.from({ length: 1000 }, (_, j) => ({ event_type: 'note', data: { n: 3000 + i * 1000 + j } })));
      await t.close();

      // On: the indexer starts on the backlog; the erasure comes at once.
      t = await startTestApp(kind, { store: shared });
      const token = await c.login();
      const erasure = await t.inject({ method: 'POST', url: '/api/v1/compliance/erasures', headers: { authorization: `Bearer ${token}` }, payload: { log_ids: [log_ids[0]], legal_basis: 'GDPR Art. 17' } });
      expect(erasure.statusCode, erasure.body).toBe(201);
      expect(await entriesIndexedFor(shared.store, secret)).toBe(0);
      expect((await c.search({ q: neighbour, wait_for_seq: EVERYTHING })).json().items).toHaveLength(1);
      await waitUntilIndexed(shared);
      expect(await entriesIndexedFor(shared.store, secret)).toBe(0);
      expect((await c.search({ q: secret })).json().items).toEqual([]);
      expect(await entriesIndexedFor(shared.store, neighbour)).toBe(1);
      await t.close();
    } finally {
      await shared.dispose();
    }
  });
});

/** Waits until the index holds as many entries as hold content (the indexer's batches are in flight). */
async function waitUntilIndexed(shared: Shared): Promise<void> {
  await vi.waitFor(async () => expect((await indexedEntries(shared.store)).length).toBe(await entriesWithContent(shared)), { timeout: 20_000, interval: 50 });
}

describe('the search index in /health', () => {
  it('ok while kept, off under SEARCH_INDEX=off, failing (degraded, still ready) while its batches fail', async () => {
    const shared = await createTestStore('sqlite');
    try {
      let t = await startTestApp('sqlite', { store: shared });
      const health = async () => (await t.inject({ method: 'GET', url: '/api/v1/health' })).json();
      expect(await health()).toMatchObject({ status: 'ok', checks: { search_index: { status: 'ok' } } });
      // The index file broken under the indexer: its batches fail, and say so.
      const file = (shared.store.searchIndex as unknown as { file: string }).file;
      const db = new SQLite(file);
      db.exec('DROP TABLE search_progress');
      db.close();
      const c = await agentOf(() => t);
      await c.batch([{ event_type: 'note', data: { text: 'after the damage' } }]);
      await vi.waitFor(async () => expect(await health()).toMatchObject({ status: 'degraded', checks: { search_index: { status: 'failing' } } }), { timeout: 10_000, interval: 50 });
      expect((await t.inject({ method: 'GET', url: '/api/v1/health/ready' })).statusCode).toBe(200);
      await t.close();
      // The next start finds no position that matches and builds the index anew.
      t = await startTestApp('sqlite', { store: shared });
      expect((await c.search({ q: 'damage', wait_for_seq: EVERYTHING })).json().items).toHaveLength(1);
      expect(await health()).toMatchObject({ status: 'ok', checks: { search_index: { status: 'ok' } } });
      await t.close();
      t = await startTestApp('sqlite', { store: shared, env: { SEARCH_INDEX: 'off' } });
      expect(await health()).toMatchObject({ status: 'ok', checks: { search_index: { status: 'off' } } });
      await t.close();
    } finally {
      await shared.dispose();
    }
  });
});

