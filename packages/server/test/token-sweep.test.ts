// The service removes expired access tokens when it starts (and hourly after).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../src/users/accounts.js';
import { loadConfig } from '../src/kernel/config.js';
import { type RunningService, startService } from '../src/server.js';
import { STORE_KINDS } from './helpers/env.js';
import { createTestDatabase, type TestDatabase } from './helpers/stores.js';

describe.each(STORE_KINDS)('expired token sweep on %s', (kind) => {
  let db: TestDatabase;
  let service: RunningService | undefined;
  beforeAll(async () => {
    db = await createTestDatabase(kind);
  });
  afterAll(async () => {
    await service?.close();
    await db.drop();
  });

  it('deletes expired tokens at start and keeps live ones', async () => {
    const store = db.open();
    await store.migrate();
    const { user } = await createUser(store, { company: 'acme', email: 'sweep@acme.test', password: 'a long enough password' }, Date.now, null);
    const base = { company_id: user.company_id, user_id: user.user_id, created_at: '2020-01-01T00:00:00.000Z' };
    await store.accounts.insertAccessToken({ ...base, token_hash: 'expired', expires_at: '2020-01-01T01:00:00.000Z' });
    await store.accounts.insertAccessToken({ ...base, token_hash: 'live', expires_at: '2999-01-01T00:00:00.000Z' });
    await store.close();

    service = await startService({ ...loadConfig({ PORT: '0', LOG_LEVEL: 'silent' }), dataDir: db.dataDir, databaseUrl: db.databaseUrl });
    const check = db.open();
    try {
      // The sweep starts with the service; wait for it by polling the store a bounded number of turns.
      let expired = await check.accounts.findAccessToken('expired');
      for (let turn = 0; expired && turn < 200; turn++) {
        await new Promise((r) => setImmediate(r));
        expired = await check.accounts.findAccessToken('expired');
      }
      expect(expired).toBeUndefined();
      expect(await check.accounts.findAccessToken('live')).toBeDefined();
    } finally {
      await check.close();
    }
  });
});
