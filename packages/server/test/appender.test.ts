// Two appenders (two processes' worth) on one database: each keeps the chain as it last left
// it, so each must cope with what the other did in between: entries (the head moved) and
// checkpoints of the same tree (the head did not move).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createUser } from '../src/users/accounts.js';
import { Appender } from '../src/ledger/appender.js';
import { CheckpointSigner } from '../src/ledger/checkpoints.js';
import { prepareEvent } from '../src/ingestion/input.js';
import type { PreparedEvent } from '../src/ledger/appender/types.js';
import { Keyring } from '../src/ledger/keyring.js';
import { openSecretBox } from '../src/store/secret-box.js';
import { WorkerSigner } from '../src/ledger/signer.js';
import { readEdge, storedHashIndex, toHex } from '@audit-ledger/core';
import { treeReader } from '../src/ledger/proofs.js';
import { openSqliteStore } from '../src/store/sqlite.js';
import type { Store } from '../src/store/store.js';
import { FakeClock, testConfig } from './helpers/app.js';
import { STORE_KINDS } from './helpers/env.js';
import { assertChainIntact } from './helpers/ledger.js';
import { createTestStore } from './helpers/stores.js';

const events = (n: number, tag: string) => Array.from({ length: n }, (_, i) => prepareEvent({ event_type: tag, data: { i } }, '/body') as PreparedEvent);

describe.each(STORE_KINDS)('two appenders on one %s database', (kind) => {
  it('a checkpoint the other signed of the same tree meanwhile is no conflict; entries the other appended are built on', async () => {
    const { store, db, dispose } = await createTestStore(kind);
    const other = db.open();
    const clock = new FakeClock();
    const config = testConfig(db);
    const { company } = await createUser(store, { company: 'two', email: 'two@example.com', password: 'a long enough password', role: 'admin' }, Date.now, null);
    const open = async (s: Store) => {
      const keyring = await Keyring.open({ config, signingKeys: s.signingKeys, secretBox: openSecretBox(config), clock: clock.now });
      const signer = new WorkerSigner(keyring.active, 1);
      const appender = new Appender({ store: s, keyring, signer, clock: clock.now, checkpoints: new CheckpointSigner(config.ledgerOrigin), checkpointIntervalMs: 60_000 });
      return { appender, close: async () => (await appender.close(), await signer.close()) };
    };
    const a = await open(store);
    const b = await open(other);
    try {
      const id = company.company_id;
      await a.appender.append(id, events(3, 'a')); // signs the first checkpoint (size 3)
      await a.appender.append(id, events(2, 'a')); // within the interval: none
      await b.appender.checkpoint(id); // the other signs size 5; the head does not move
      await a.appender.checkpoint(id); // a still knows size 3 as the last: signs size 5 again, stores nothing
      await b.appender.append(id, events(4, 'b')); // the head moves under a
      const [last] = await a.appender.append(id, events(1, 'a')).then((r) => r.slice(-1));
      expect(last?.seq).toBe(9);
      await a.appender.checkpoint(id);
      const sizes = (await store.ledger.listCheckpoints(id, 0, Number.MAX_SAFE_INTEGER)).map((c) => c.tree_size).sort((x, y) => x - y);
      expect(sizes).toEqual([3, 5, 10]);
      expect(await assertChainIntact(store, id)).toBe(10);
    } finally {
      await a.close();
      await b.close();
      await other.close();
      await dispose();
    }
  });
});

describe('an in-memory SQLite database', () => {
  it('appends on the request thread (no writer thread can open it): one valid chain with its tree and checkpoints', async () => {
    const store = openSqliteStore(':memory:');
    expect(store.chainWriter).toBeUndefined();
    await store.migrate();
    const clock = new FakeClock();
    const config = testConfig({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'al-memory-')), databaseUrl: undefined });
    const { company } = await createUser(store, { company: 'mem', email: 'mem@example.com', password: 'a long enough password', role: 'admin' }, Date.now, null);
    const keyring = await Keyring.open({ config, signingKeys: store.signingKeys, secretBox: openSecretBox(config), clock: clock.now });
    const signer = new WorkerSigner(keyring.active, 1);
    const appender = new Appender({ store, keyring, signer, clock: clock.now, checkpoints: new CheckpointSigner(config.ledgerOrigin), checkpointIntervalMs: 0 });
    try {
      const id = company.company_id;
      const results = await Promise.all([appender.append(id, events(40, 'm')), appender.append(id, events(3, 'm'))]);
      expect(results.flat().map((r) => r.seq)).toEqual(Array.from({ length: 43 }, (_, i) => i));
      await appender.append(id, events(7, 'm'));
      expect(await assertChainIntact(store, id)).toBe(50);
      const latest = await store.db.selectFrom('checkpoints').selectAll().where('company_id', '=', id).orderBy('tree_size', 'desc').executeTakeFirstOrThrow();
      expect(latest.tree_size).toBe(50);
      const edge = await readEdge(treeReader(store.ledger, id), 50);
      expect(toHex(edge.root())).toBe(latest.root_hash);
      // Only the stored levels are kept: the level-4 nodes over entries 0–15, 16–31 and 32–47.
      const stored = await store.db.selectFrom('merkle_hashes').select('idx').where('company_id', '=', id).orderBy('idx').execute();
      expect(stored.map((r) => r.idx)).toEqual([0, 1, 2].map((i) => storedHashIndex(4, i)));
    } finally {
      await appender.close();
      await signer.close();
      await store.close();
      fs.rmSync(config.dataDir, { recursive: true, force: true });
    }
  });
});
