// A time range is found on the primary key (store/time-bounds.ts; the created_at index was dropped
// by migration 0018): on both stores, for instants before, between, on and after entries (many
// sharing one millisecond), the seq bound, a filtered page and a report period's range are what a
// scan of every entry by its instant gives.
import { describe, expect, it } from 'vitest';
import { prepareEvent } from '../src/ingestion/input.js';
import { Appender } from '../src/ledger/appender.js';
import type { PreparedEvent } from '../src/ledger/appender/types.js';
import { CheckpointSigner } from '../src/ledger/checkpoints.js';
import { Keyring } from '../src/ledger/keyring.js';
import { WorkerSigner } from '../src/ledger/signer.js';
import { openSecretBox } from '../src/store/secret-box.js';
import { firstSeqAtOrAfter } from '../src/store/time-bounds.js';
import { createUser } from '../src/users/accounts.js';
import { FakeClock, testConfig } from './helpers/app.js';
import { STORE_KINDS } from './helpers/env.js';
import { createTestStore } from './helpers/stores.js';

describe.each(STORE_KINDS)('time ranges as seq ranges on %s', (kind) => {
  it('match a scan of every entry by its instant, at every boundary', async () => {
    const { store, db, dispose } = await createTestStore(kind);
    const clock = new FakeClock();
    const config = testConfig(db);
    const { company } = await createUser(store, { company: 'times', email: 'times@example.com', password: 'a long enough password', role: 'admin' }, Date.now, null);
    const id = company.company_id;
    const keyring = await Keyring.open({ config, signingKeys: store.signingKeys, secretBox: openSecretBox(config), clock: clock.now });
    const signer = new WorkerSigner(keyring.active, 1);
    const appender = new Appender({ store, keyring, signer, clock: clock.now, checkpoints: new CheckpointSigner(config.ledgerOrigin), checkpointIntervalMs: 60_000 });
    try {
      expect(await firstSeqAtOrAfter(store, id, '2026-01-01T00:00:00Z')).toBe(0); // an empty chain
      // 23 groups of 1 to 17 entries, each group one millisecond, the gaps between them 1 ms to 1 h.
      let n = 0;
      for (let g = 0; g < 23; g++) {
        const size = 1 + ((g * 7) % 17);
        await appender.append(id, Array.from({ length: size }, (_, i) => prepareEvent({ event_type: g % 2 ? 'odd' : 'even', data: { g, i } }, '/body') as PreparedEvent));
        n += size;
        clock.advance([1, 999, 3_600_000, 42][g % 4] as number);
      }
      const rows = await store.ledger.listEntries(id, { order: 'asc', limit: 10_000 });
      expect(rows).toHaveLength(n);
      const times = rows.map((r) => Date.parse(r.created_at));
      const scan = (at: number) => {
        const i = times.findIndex((t) => t >= at);
        return i === -1 ? n : i;
      };
      // Each entry's own instant, a millisecond either side, before the first and after the last.
      const instants = [...new Set(times.flatMap((t) => [t - 1, t, t + 1])), (times[0] as number) - 86_400_000, (times.at(-1) as number) + 86_400_000];
      for (const at of instants) expect([at, await firstSeqAtOrAfter(store, id, new Date(at).toISOString())]).toEqual([at, scan(at)]);
      // The same instant written with an offset is the same instant.
      const mid = times[Math.floor(n / 2)] as number;
      expect(await firstSeqAtOrAfter(store, id, new Date(mid).toISOString().replace('Z', '+00:00'))).toBe(scan(mid));
      await expect(firstSeqAtOrAfter(store, id, 'yesterday')).rejects.toThrow(/not an instant/);

      for (const [from, to] of [[times[5], times[40]], [mid, mid + 1], [mid + 1, mid + 1], [(times[0] as number) - 5, (times.at(-1) as number) + 5]] as Array<[number, number]>) {
        const want = rows.filter((_, i) => (times[i] as number) >= from && (times[i] as number) < to);
        const f = new Date(from).toISOString();
        const t = new Date(to).toISOString();
        const page = await store.ledger.listEntries(id, { from: f, to: t, order: 'asc', limit: 10_000 });
        expect(page.map((r) => r.seq)).toEqual(want.map((r) => r.seq));
        const desc = await store.ledger.listEntries(id, { from: f, to: t, event_type: 'odd', order: 'desc', limit: 5 });
        expect(desc.map((r) => r.seq)).toEqual(want.filter((r) => r.event_type === 'odd').map((r) => r.seq).reverse().slice(0, 5));
        const range = await store.reportStore.seqRange(id, { from: f, to: t });
        expect(range).toEqual(want.length === 0 ? null : { first: want[0]?.seq, last: want.at(-1)?.seq });
      }
    } finally {
      await appender.close();
      await signer.close();
      await dispose();
    }
  });
});
