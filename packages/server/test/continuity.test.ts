// The start-up continuity check (continuity/guard.ts) when nothing is wrong, and when a witness
// is down: on both stores, a service that restarts on its own ledger holds nothing; one whose
// witness does not answer says so once and starts without waiting on every company, and holds
// nothing; a torn marks file is no hold either. (Holds themselves are tested from outside in
// backup-restore, operations-doc, failover and witness tests.)
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { witnessVerifierKey } from '@audit-ledger/core';
import { describe, expect, it, vi } from 'vitest';
import { rawPublicKey } from '../src/crypto/signing.js';
import { startTestApp } from './helpers/app.js';
import { STORE_KINDS } from './helpers/env.js';
import { ingestBatch } from './helpers/ledger.js';
import { createTestStore } from './helpers/stores.js';

describe.each(STORE_KINDS)('continuity at start on %s', (kind) => {
  it('holds nothing for a ledger that is where it was; a witness that does not answer is said once and asked no more', async () => {
    const store = await createTestStore(kind);
    try {
      const first = await startTestApp(kind, { store, env: { CHECKPOINT_INTERVAL_MS: '0' } });
      const companies: Array<{ key: string }> = [];
      for (let c = 0; c < 6; c++) {
        const acct = await first.newAccount();
        const { key } = await first.createKey(acct.token);
        expect((await ingestBatch(first, key, [{ event_type: 'step', data: { c } }])).statusCode).toBe(200);
        companies.push({ key });
      }
      await vi.waitFor(() => expect(fs.existsSync(path.join(store.db.dataDir, 'checkpoint-marks.json'))).toBe(true), { timeout: 10_000, interval: 20 });
      await first.close();
      const marks = JSON.parse(fs.readFileSync(path.join(store.db.dataDir, 'checkpoint-marks.json'), 'utf8'));
      expect(Object.keys(marks.companies)).toHaveLength(6);

      // A witness nobody listens for (port 9 on loopback refuses at once).
      const vkey = witnessVerifierKey('witness.test/down', rawPublicKey(generateKeyPairSync('ed25519').publicKey));
      const lines: string[] = [];
      const second = await startTestApp(kind, { store, env: { WITNESSES: `http://127.0.0.1:9 ${vkey}`, WITNESS_QUORUM: '0', WITNESS_ALLOW_PRIVATE: 'true' }, logLines: lines });
      try {
        const said = lines.map((l) => JSON.parse(l) as { msg: string; witness?: string }).filter((l) => l.msg.startsWith('continuity:'));
        expect(said).toHaveLength(1);
        expect(said[0]).toMatchObject({ witness: 'witness.test/down' });
        expect(await store.store.continuityHolds.all()).toEqual([]);
        for (const { key } of companies) expect((await ingestBatch(second, key, [{ event_type: 'after', data: {} }])).statusCode).toBe(200);
      } finally {
        await second.close();
      }

      // A torn marks file (a crash mid-write before the rename existed) is read as none.
      fs.writeFileSync(path.join(store.db.dataDir, 'checkpoint-marks.json'), '{"origin":"audit-ledger.local","compan');
      const third = await startTestApp(kind, { store });
      try {
        expect((await ingestBatch(third, companies[0]?.key as string, [{ event_type: 'after', data: {} }])).statusCode).toBe(200);
      } finally {
        await third.close();
      }
    } finally {
      await store.dispose();
    }
  });
});
