// SQLite appends go through a writer thread, and the appender builds the next group while
// the last one commits. Whatever happens to a write, the chain stays one and gap-free: a
// group built on a head that moved (another writer, or a write that failed before it) is
// built again, and a failed write takes nothing else with it.
import type { LightMyRequestResponse } from 'fastify';
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { buildSync } from 'esbuild';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { MemoryCounterStore } from '../src/ratelimit/counter.js';
import { verifyEntrySignature } from '@audit-ledger/core';
import { rawPublicKey } from '../src/crypto/signing.js';
import { type ChainWrite, type ChainWriter, HeadMovedError } from '../src/store/chain.js';
import { openSqliteStore } from '../src/store/sqlite.js';
import { FakeClock, problem, startTestApp, testConfig } from './helpers/app.js';
import { assertChainIntact, countEntries, ingest, ingestBatch } from './helpers/ledger.js';

const ROOT = path.resolve(import.meta.dirname, '..');

/** Puts `value` in place of the writer's write (tests hold, refuse or alter writes with it). */
function replaceWrite(writer: ChainWriter, value: (w: ChainWrite) => Promise<void>): void {
  Object.defineProperty(writer, 'write', { value, configurable: true });
}

describe('SQLite transactions beside the writer thread', () => {
  it('a transaction that reads, then writes, holds the write lock from its start: another connection\'s commit in between cannot make it fail', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-sqlite-tx-'));
    const file = path.join(dir, 'ledger.db');
    const store = openSqliteStore(file);
    await store.migrate();
    const other = new SQLite(file);
    other.pragma('busy_timeout = 0');
    const insert = other.prepare("INSERT INTO companies (company_id, name, created_at) VALUES (?, ?, '2026-03-01T00:00:00.000Z')");
    try {
      await store.db.transaction().execute(async (trx) => {
        await trx.selectFrom('companies').selectAll().execute();
        // The writer thread (here: another connection) cannot commit in the middle: it waits, or (busy_timeout 0) is told so.
        expect(() => insert.run('b0000000-0000-4000-8000-000000000001', 'other')).toThrow(/locked|busy/i);
        await trx.insertInto('companies').values({ company_id: 'a0000000-0000-4000-8000-000000000001', name: 'mine', created_at: '2026-03-01T00:00:00.000Z', tlog_public: 0 }).execute();
      });
      // Once it committed, the other connection writes.
      insert.run('b0000000-0000-4000-8000-000000000001', 'other');
      expect((await store.db.selectFrom('companies').select('name').orderBy('name').execute()).map((r) => r.name)).toEqual(['mine', 'other']);
    } finally {
      other.close();
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('SQLite writer thread', () => {
  it('two services on one SQLite file append to one company: one chain, each building on the head the other moved', async () => {
    const a = await startTestApp('sqlite');
    const storeB = a.db.open();
    const counters = new MemoryCounterStore(a.clock.now);
    const b = await buildApp({ config: testConfig(a.db), store: storeB, counters, clock: a.clock.now, logger: false });
    try {
      const acct = await a.newAccount();
      const { key } = await a.createKey(acct.token, 1_000_000);
      const viaB = (payload: Record<string, unknown>): Promise<LightMyRequestResponse> => b.inject({ method: 'POST', url: '/api/v1/logs', headers: { 'x-api-key': key }, payload });
      // In turn: each service's known head is stale when its next request comes.
      const seqs: number[] = [];
      for (let i = 0; i < 6; i++) {
        const res = i % 2 === 0 ? await ingest(a, key, { event_type: 'turn', data: { i } }) : await viaB({ event_type: 'turn', data: { i } });
        expect(res.statusCode).toBe(200);
        seqs.push(res.json().seq);
      }
      expect(seqs).toEqual([0, 1, 2, 3, 4, 5]);
      // At once, single events and batches through both.
      const requests = [];
      for (let i = 0; i < 30; i++) {
        requests.push(i % 2 === 0 ? ingest(a, key, { event_type: 'both', data: { i } }) : viaB({ event_type: 'both', data: { i } }));
        if (i % 5 === 0) requests.push(ingestBatch(i % 2 === 0 ? a : { inject: (o) => b.inject(o) }, key, Array.from({ length: 20 }, (_, j) => ({ event_type: 'batch', data: { i, j } }))));
      }
      const results = await Promise.all(requests);
      expect(results.map((r) => r.statusCode).filter((s) => s !== 200)).toEqual([]);
      expect(await assertChainIntact(a.store, acct.companyId)).toBe(6 + 30 + 6 * 20);
    } finally {
      await b.close();
      await counters.close();
      await storeB.close();
      await a.close();
    }
  });

  it('a write that fails fails its own requests alone; the group built on it meanwhile is built again and commits', async () => {
    const clock = new FakeClock();
    const t = await startTestApp('sqlite', { clock });
    try {
      const acct = await t.newAccount();
      const { key } = await t.createKey(acct.token, 1_000_000);
      expect((await ingest(t, key, { event_type: 'before', data: {} })).statusCode).toBe(200);
      // The database refuses one event type, as a full disk or a broken file would refuse a write.
      await sql`CREATE TRIGGER refuse_boom BEFORE INSERT ON log_entries WHEN NEW.event_type = 'boom' BEGIN SELECT RAISE(ABORT, 'refused'); END`.execute(t.store.db);

      // Hold writes until the second group has been built on the first (failing) one.
      const writer = t.store.chainWriter as ChainWriter;
      const write = writer.write.bind(writer);
      const held: Array<() => void> = [];
      let handedOver!: () => void;
      const firstHandedOver = new Promise<void>((r) => (handedOver = r));
      replaceWrite(writer, (w) => {
        if (held.length === 2) return write(w);
        return new Promise<void>((resolve, reject) => {
          held.push(() => void write(w).then(resolve, reject));
          if (held.length === 1) handedOver();
          if (held.length === 2) for (const release of held) release();
        });
      });
      const boom = ingest(t, key, { event_type: 'boom', data: {} });
      await firstHandedOver;
      const others = [
        ingest(t, key, { event_type: 'after', data: { i: 1 } }),
        ingestBatch(t, key, Array.from({ length: 10 }, (_, j) => ({ event_type: 'after', data: { j } }))),
        ingest(t, key, { event_type: 'after', data: { i: 2 } }),
      ];
      problem(await boom, 500, 'internal_error');
      const results = await Promise.all(others);
      expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200]);
      // Built again on the real head: seq 1 follows the entry before the failed write.
      expect(results[0]?.json().seq).toBe(1);
      expect(await assertChainIntact(t.store, acct.companyId)).toBe(1 + 12);
      const types = await t.store.db.selectFrom('log_entries').select('event_type').where('company_id', '=', acct.companyId).execute();
      expect(types.filter((r) => r.event_type === 'boom')).toEqual([]);

      // And the service goes on appending after it.
      const next = await ingest(t, key, { event_type: 'later', data: {} });
      expect(next.statusCode).toBe(200);
      expect(next.json().seq).toBe(13);
      expect(await countEntries(t.store, acct.companyId)).toBe(14);
    } finally {
      await t.close();
    }
  });

  it('a chain that keeps moving under an append answers 503 with Retry-After, appends nothing, and the next append goes on', async () => {
    const t = await startTestApp('sqlite');
    try {
      const acct = await t.newAccount();
      const { key } = await t.createKey(acct.token, 1_000_000);
      expect((await ingest(t, key, { event_type: 'before', data: {} })).statusCode).toBe(200);
      // As if another process appended first every time: each write finds the head moved.
      const writer = t.store.chainWriter as ChainWriter;
      const write = writer.write.bind(writer);
      let refusals = 0;
      replaceWrite(writer, (w) => (refusals++, Promise.reject(new HeadMovedError(w.companyId))));
      const res = await ingest(t, key, { event_type: 'contended', data: {} });
      const body = problem(res, 503, 'service_unavailable');
      expect(String(body.detail)).toMatch(/nothing was appended/);
      expect(res.headers['retry-after']).toBe('1');
      expect(refusals).toBe(4); // built again three times before giving up
      replaceWrite(writer, write);
      const next = await ingest(t, key, { event_type: 'after', data: {} });
      expect(next.statusCode).toBe(200);
      expect(next.json().seq).toBe(1);
      expect(await assertChainIntact(t.store, acct.companyId)).toBe(2);
    } finally {
      await t.close();
    }
  });

  it('small groups are handed over unsigned and signed by the writer thread, larger ones signed before; a row it has no key for fails its write alone', async () => {
    const t = await startTestApp('sqlite');
    try {
      const acct = await t.newAccount();
      const { key } = await t.createKey(acct.token, 1_000_000);
      const writer = t.store.chainWriter as ChainWriter;
      const write = writer.write.bind(writer);
      const handed: boolean[] = [];
      const intercept = (change: (w: ChainWrite) => ChainWrite) =>
        replaceWrite(writer, (w) => {
          if (w.rows.length > 0) handed.push(w.rows.every((r) => r.signature === ''));
          return write(change(w));
        });
      intercept((w) => w);
      const events = (n: number) => Array.from({ length: n }, (_, i) => ({ event_type: 'e', data: { i } }));
      expect((await ingest(t, key, { event_type: 'one', data: {} })).statusCode).toBe(200);
      expect((await ingestBatch(t, key, events(64))).statusCode).toBe(200);
      expect((await ingestBatch(t, key, events(65))).statusCode).toBe(200);
      expect(handed).toEqual([true, true, false]);
      // Every signature verifies, whichever thread made it.
      expect(await assertChainIntact(t.store, acct.companyId)).toBe(1 + 64 + 65);

      // A row naming a key the writer was never given fails its write; nothing of it is stored.
      intercept((w) => ({ ...w, rows: w.rows.map((r) => ({ ...r, key_id: 'not-a-key' })) }));
      expect((await ingest(t, key, { event_type: 'lost', data: {} })).statusCode).toBe(500);
      intercept((w) => w);
      expect((await ingest(t, key, { event_type: 'after', data: {} })).json().seq).toBe(130);
      expect(await assertChainIntact(t.store, acct.companyId)).toBe(131);

      // A key given once the writer thread is running reaches it too.
      const extra = generateKeyPairSync('ed25519');
      writer.signUnsignedWith({ keyId: 'extra-key', privateKey: extra.privateKey });
      // (The store commits only under keys it knows as active: store/keys.ts.)
      await t.store.signingKeys.register({ key_id: 'extra-key', algorithm: 'Ed25519', public_key: 'unused', active_from: '2026-01-01T00:00:00.000Z', active_to: null, private_key_encrypted: null, custody: null });
      intercept((w) => ({ ...w, rows: w.rows.map((r) => ({ ...r, key_id: 'extra-key' })) }));
      expect((await ingest(t, key, { event_type: 'extra', data: {} })).statusCode).toBe(200);
      const row = await t.store.db.selectFrom('log_entries').selectAll().where('company_id', '=', acct.companyId).where('seq', '=', 131).executeTakeFirstOrThrow();
      expect(row.key_id).toBe('extra-key');
      expect(verifyEntrySignature(rawPublicKey(extra.publicKey), row.hash, row.signature)).toBe(true);
    } finally {
      await t.close();
    }
  });

  it('a process that only appends stays alive until its appends commit (the worker threads keep it alive while they hold work)', () => {
    // Plain node, not tsx: tsx's loader thread would keep the process alive by itself.
    const script = path.join(ROOT, 'node_modules', '.cache', 'audit-ledger-test', 'append-and-exit.mjs');
    buildSync({ entryPoints: [path.join(import.meta.dirname, 'fixtures', 'append-and-exit.ts')], outfile: script, bundle: true, platform: 'node', format: 'esm', packages: 'external', logLevel: 'silent' });
    // Its worker modules beside it, as the build puts them beside their callers (kernel/threads.ts).
    for (const f of ['store/sqlite-writer-thread', 'ledger/signer-thread']) {
      const outfile = path.join(path.dirname(script), `${path.basename(f)}.js`);
      buildSync({ entryPoints: [path.join(import.meta.dirname, '..', 'src', `${f}.ts`)], outfile, bundle: true, platform: 'node', format: 'esm', packages: 'external', logLevel: 'silent' });
    }
    fs.writeFileSync(path.join(path.dirname(script), 'package.json'), '{"type":"module"}\n');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-append-exit-'));
    try {
      const r = spawnSync(process.execPath, [script, dir], { encoding: 'utf8', timeout: 60_000 });
      expect(r.stderr).toBe('');
      expect(r.stdout).toBe('appended 4000\n');
      expect(r.status).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
