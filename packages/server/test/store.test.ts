// One behavioural suite, run against SQLite and the local PostgreSQL.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LATEST_MIGRATION } from '../src/store/migrations.js';
import { ActiveKeyExistsError, EmailTakenError, type NewApiKey, type Store } from '../src/store/store.js';
import { STORE_KINDS } from './helpers/env.js';
import { createTestStore } from './helpers/stores.js';

const NOW = '2026-03-01T12:00:00.000Z';

function newKey(companyId: string, over: Partial<NewApiKey> = {}): NewApiKey {
  const id = randomUUID();
  return {
    company_id: companyId,
    key_id: id,
    name: 'k',
    key_prefix: 'alk_xxxxxxxx',
    key_hash: `hash-${id}`,
    rate_limit_per_minute: 60,
    created_at: NOW,
    created_by: 'u',
    ...over,
  };
}

describe.each(STORE_KINDS)('store on %s', (kind) => {
  let store: Store;
  let dispose: () => Promise<void>;
  let companyA: string;
  let companyB: string;

  beforeAll(async () => {
    ({ store, dispose } = await createTestStore(kind));
    const a = await store.accounts.createUser({ companyName: 'A', newCompanyId: randomUUID(), userId: randomUUID(), email: 'A@Example.com', passwordHash: 'h', role: 'admin', now: NOW });
    const b = await store.accounts.createUser({ companyName: 'B', newCompanyId: randomUUID(), userId: randomUUID(), email: 'b@example.com', passwordHash: 'h', role: 'reviewer', now: NOW });
    companyA = a.company.company_id;
    companyB = b.company.company_id;
  });
  afterAll(() => dispose());

  it('is at the latest migration, and migrating again applies nothing', async () => {
    expect(await store.migrationState()).toEqual({ current: LATEST_MIGRATION, latest: LATEST_MIGRATION });
    expect(await store.migrate()).toEqual([]);
  });

  it('stores emails lower-cased and finds users case-insensitively', async () => {
    const u = await store.accounts.findUserByEmail('a@EXAMPLE.com');
    expect(u?.company_id).toBe(companyA);
    expect(u?.email).toBe('a@example.com');
    expect(await store.accounts.countUsers()).toBe(2);
  });

  it('adds a user to an existing company by name, and refuses a taken email', async () => {
    const { company } = await store.accounts.createUser({ companyName: 'A', newCompanyId: randomUUID(), userId: randomUUID(), email: 'a2@example.com', passwordHash: 'h', role: 'reviewer', now: NOW });
    expect(company.company_id).toBe(companyA);
    await expect(
      store.accounts.createUser({ companyName: 'C', newCompanyId: randomUUID(), userId: randomUUID(), email: 'B@example.com', passwordHash: 'h', role: 'admin', now: NOW }),
    ).rejects.toBeInstanceOf(EmailTakenError);
    // The failed create rolled back: company C was not left behind.
    expect(await store.accounts.findCompanyByName('C')).toBeUndefined();
  });

  it('stores access tokens by hash and revokes them', async () => {
    const user = await store.accounts.findUserByEmail('a@example.com');
    await store.accounts.insertAccessToken({ company_id: companyA, token_hash: 'th1', user_id: user!.user_id, created_at: NOW, expires_at: '2026-03-01T13:00:00.000Z' });
    expect(await store.accounts.findAccessToken('th1')).toMatchObject({ company_id: companyA, role: 'admin', revoked_at: null });
    // Revoking with the wrong company changes nothing.
    await store.accounts.revokeAccessToken(companyB, 'th1', NOW);
    expect((await store.accounts.findAccessToken('th1'))?.revoked_at).toBeNull();
    await store.accounts.revokeAccessToken(companyA, 'th1', NOW);
    expect((await store.accounts.findAccessToken('th1'))?.revoked_at).toBe(NOW);
    expect(await store.accounts.deleteExpiredAccessTokens('2026-03-01T13:00:00.001Z')).toBe(1);
    expect(await store.accounts.findAccessToken('th1')).toBeUndefined();
  });

  it('allows one active key per company and exactly one winner among concurrent inserts', async () => {
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => store.accounts.insertApiKey(newKey(companyA))));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results.filter((r) => r.status === 'rejected')) expect((r as PromiseRejectedResult).reason).toBeInstanceOf(ActiveKeyExistsError);
    const active = (await store.accounts.listApiKeys(companyA)).filter((k) => k.status === 'active');
    expect(active).toHaveLength(1);
    // Another company is not affected.
    await expect(store.accounts.insertApiKey(newKey(companyB))).resolves.toMatchObject({ status: 'active' });
  });

  it('revokes only within the company, then allows a new key', async () => {
    const [active] = (await store.accounts.listApiKeys(companyA)).filter((k) => k.status === 'active');
    expect(await store.accounts.revokeApiKey(companyB, active!.key_id, NOW)).toBeUndefined();
    expect((await store.accounts.getApiKey(companyA, active!.key_id))?.status).toBe('active');
    const revoked = await store.accounts.revokeApiKey(companyA, active!.key_id, NOW);
    expect(revoked).toMatchObject({ status: 'revoked', revoked_at: NOW });
    const fresh = await store.accounts.insertApiKey(newKey(companyA));
    expect((await store.accounts.findApiKeyByHash(fresh.key_hash))?.key_id).toBe(fresh.key_id);
    expect((await store.accounts.listApiKeys(companyA)).every((k) => k.company_id === companyA)).toBe(true);
  });
});
