// Closing the app while appends are in flight: they commit, nothing is left locked,
// close completes, and appends arriving after close get 503.
import { describe, expect, it } from 'vitest';
import { CheckpointSigner } from '../src/ledger/checkpoints.js';
import { Appender } from '../src/ledger/appender.js';
import { AppenderClosedError } from '../src/ledger/appender/errors.js';
import { Keyring } from '../src/ledger/keyring.js';
import { openSecretBox } from '../src/store/secret-box.js';
import { WorkerSigner } from '../src/ledger/signer.js';
import type { WithChain } from '../src/store/chain.js';
import { STORE_KINDS } from './helpers/env.js';
import { problem, startTestApp } from './helpers/app.js';
import { assertChainIntact, ingestBatch } from './helpers/ledger.js';

describe.each(STORE_KINDS)('shutdown with appends in flight on %s', (kind) => {
  it('commits queued appends before the signer and store close', async () => {
    const t = await startTestApp(kind);
    try {
      const acct = await t.newAccount();
      const { key } = await t.createKey(acct.token, 100_000);
      // Close exactly when the first group takes its chain lock (to append, or to read the chain).
      const original = t.store.withChain;
      let entered!: () => void;
      const inChain = new Promise<void>((r) => (entered = r));
      Object.defineProperty(t.store, 'withChain', { value: ((companyId, fn) => (entered(), original(companyId, fn))) as WithChain });
      // Large enough to be signed in worker threads.
      const batches = Array.from({ length: 4 }, (_, b) => ingestBatch(t, key, Array.from({ length: 200 }, (_, i) => ({ event_type: 'e', data: { b, i } }))));
      await inChain;
      await t.app.close();
      const results = await Promise.all(batches);
      const ok = results.filter((r) => r.statusCode === 200);
      for (const r of results.filter((r) => r.statusCode !== 200)) problem(r, 503, 'service_unavailable');
      expect(ok.length).toBeGreaterThan(0);
      expect(await assertChainIntact(t.store, acct.companyId)).toBe(ok.length * 200);
    } finally {
      await t.close();
    }
  });

  it('refuses appends after close', async () => {
    const t = await startTestApp(kind);
    try {
      const keyring = await Keyring.open({ config: t.config, signingKeys: t.store.signingKeys, secretBox: openSecretBox(t.config), clock: Date.now });
      const signer = new WorkerSigner(keyring.active, 1);
      const appender = new Appender({ store: t.store, keyring, signer, clock: Date.now, checkpoints: new CheckpointSigner('test'), checkpointIntervalMs: 0 });
      await appender.close();
      await expect(appender.append('any', [])).rejects.toBeInstanceOf(AppenderClosedError);
      await signer.close();
    } finally {
      await t.close();
    }
  });
});
