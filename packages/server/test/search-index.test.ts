// SEARCH_INDEX=off and back on (store/search-index.ts), on both stores, three services in turn on one
// database: `off` removes the index (on SQLite its file, every token with it), words are refused
// with 409 search_index_off while where conditions still answer, appends and erasures go on; `on`
// rebuilds it from what is stored, so what was appended meanwhile is found and what was erased
// meanwhile is not.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { problem, startTestApp } from './helpers/app.js';
import { entriesIndexedFor, EVERYTHING, indexedEntries } from './helpers/search.js';
import { STORE_KINDS } from './helpers/env.js';
import { createTestStore } from './helpers/stores.js';

describe.each(STORE_KINDS)('SEARCH_INDEX on %s', (kind) => {
  it('off drops the index and refuses words; on rebuilds it from what is stored, erasures included', async () => {
    const shared = await createTestStore(kind);
    const before = `before${randomUUID().slice(0, 8)}`;
    const during = `during${randomUUID().slice(0, 8)}`;
    const erased = `erased${randomUUID().slice(0, 8)}`;
    const tokens = (word: string) => entriesIndexedFor(shared.store, word);
    try {
      // On (the default): two entries, both found.
      let t = await startTestApp(kind, { store: shared });
      const admin = await t.newAccount();
      const { key } = await t.createKey(admin.token, 100_000);
      const agent = { 'x-api-key': key };
      const append = async (data: Record<string, unknown>) => {
        const r = await t.inject({ method: 'POST', url: '/api/v1/logs', headers: agent, payload: { event_type: 'note', data } });
        expect(r.statusCode, r.body).toBe(200);
        return r.json().log_id as string;
      };
      const search = (q: Record<string, string>) => t.inject({ method: 'GET', url: `/api/v1/logs/search?${new URLSearchParams({ ...q, wait_for_seq: EVERYTHING })}`, headers: agent });
      await append({ text: `said ${before}`, n: 1 });
      const toErase = await append({ subject_id: 'person-9', text: `call ${erased}`, n: 2 });
      expect((await search({ q: before })).json().items).toHaveLength(1);
      expect(shared.store.searchIndex?.running).toBe(true);
      await t.close();

      // Off: the index is gone; words are refused, conditions answer; appends and an erasure go on.
      t = await startTestApp(kind, { store: shared, env: { SEARCH_INDEX: 'off' } });
      expect(shared.store.searchIndex?.running).toBe(false);
      expect(await tokens(before)).toBe(0);
      expect(await indexedEntries(shared.store)).toEqual([]);
      await append({ text: `said ${during}`, n: 3 });
      const refused = problem(await search({ q: during }), 409, 'search_index_off');
      expect(refused.detail).toMatch(/SEARCH_INDEX=off/);
      const byCondition = await search({ where: 'data.n >= 2' });
      expect(byCondition.statusCode, byCondition.body).toBe(200);
      expect(byCondition.json().items.map((e: { data: { n: number } }) => e.data.n)).toEqual([3, 2]);
      const erasure = await t.inject({ method: 'POST', url: '/api/v1/compliance/erasures', headers: { authorization: `Bearer ${(await t.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: admin.email, password: admin.password } })).json().access_token}` }, payload: { log_ids: [toErase], legal_basis: 'GDPR Art. 17' } });
      expect(erasure.statusCode, erasure.body).toBe(201);
      await t.close();

      // On again: rebuilt from what is stored.
      t = await startTestApp(kind, { store: shared });
      expect(shared.store.searchIndex?.running).toBe(true);
      expect((await search({ q: during })).json().items).toHaveLength(1);
      expect((await search({ q: before })).json().items).toHaveLength(1);
      expect((await search({ q: erased })).json().items).toEqual([]);
      expect(await tokens(erased)).toBe(0);
      expect(await tokens(during)).toBe(1);
      await t.close();
    } finally {
      await shared.dispose();
    }
  });
});
