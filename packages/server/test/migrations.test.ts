// Upgrades (issue 34): from every earlier schema version, with a ledger in it as that version
// wrote it (helpers/schema-fixtures.ts), to the current one, on both stores. `migrate --dry-run`
// names what would apply and changes nothing; the migration keeps every entry verifiable (a full
// verification with entry signatures), the service appends after the old entries, and its new
// checkpoint is consistent with the one the old version signed. A database a newer version
// migrated is refused, at start and by `migrate`, with a clear message.
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fromHex, verifyConsistency } from '@audit-ledger/core';
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadOrCreateKeyFile, type SigningKey } from '../src/ledger/keyring.js';
import { MIGRATION_SUMMARIES } from '../src/store/migrate.js';
import { LATEST_MIGRATION, MIGRATION_NAMES } from '../src/store/migrations.js';
import { startTestApp } from './helpers/app.js';
import { STORE_KINDS } from './helpers/env.js';
import { ingestBatch } from './helpers/ledger.js';
import { runCli } from './helpers/process.js';
import { writeFixture } from './helpers/schema-fixtures.js';
import { createTestDatabase } from './helpers/stores.js';

const EARLIER = MIGRATION_NAMES.filter((m) => m !== LATEST_MIGRATION);

describe('every migration', () => {
  it('has a line saying what it changes (migrate --dry-run prints it)', () => {
    expect(Object.keys(MIGRATION_SUMMARIES).sort()).toEqual([...MIGRATION_NAMES]);
  });
});

describe.each(STORE_KINDS)('upgrades on %s', { timeout: 60_000 }, (kind) => {
  let tmp: string;
  let keyFile: string;
  let key: SigningKey;
  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'al-migrations-'));
    keyFile = path.join(tmp, 'service-key.pem');
    fs.writeFileSync(keyFile, generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    key = loadOrCreateKeyFile(keyFile, false);
  });
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it.each(EARLIER)('from %s, with a ledger in it, every entry stays verifiable and the service goes on from its checkpoint', async (version) => {
    const db = await createTestDatabase(kind);
    const store = db.open();
    let t: Awaited<ReturnType<typeof startTestAppAfter>> | undefined;
    async function startTestAppAfter(v: string) {
      const fixture = await writeFixture(store.db as Kysely<unknown>, v, key, 'audit-ledger.local');
      const plan = await store.migrationPlan();
      expect(plan).toEqual({ current: v, latest: LATEST_MIGRATION, pending: MIGRATION_NAMES.filter((m) => m > v), unknown: [] });
      const applied = await store.migrate();
      expect(applied).toEqual(plan.pending);
      const app = await startTestApp(kind, { store: { store, db, dispose: async () => {} }, env: { LEDGER_SIGNING_KEY_FILE: keyFile } });
      return { app, fixture };
    }
    try {
      t = await startTestAppAfter(version);
      const { app, fixture } = t;
      const acct = await app.newAccount({ company: fixture.companyName });
      expect(acct.companyId).toBe(fixture.companyId);
      const { key: apiKey } = await app.createKey(acct.token, 1_000_000);
      const req = (method: 'GET' | 'POST', url: string, payload?: object) => app.inject({ method, url, headers: { 'x-api-key': apiKey }, ...(payload ? { payload } : {}) });
      if (fixture.entries > 0) {
        const old = await req('GET', '/api/v1/logs?limit=5&order=asc');
        expect(old.statusCode, old.body).toBe(200);
        expect(old.json().items[0]).toMatchObject({ seq: 0, source: 'fixture-agent' });
      }
      expect((await ingestBatch(app, apiKey, [{ event_type: 'after.upgrade', data: { version } }, { event_type: 'after.upgrade', data: { n: 2 } }])).statusCode).toBe(200);
      const started = await req('POST', '/api/v1/integrity/verify', { entry_signatures: true });
      expect(started.statusCode, started.body).toBe(202);
      let job = started.json();
      await vi.waitFor(
        async () => {
          job = (await req('GET', `/api/v1/integrity/jobs/${job.job_id}`)).json();
          expect(job.status, JSON.stringify(job)).toBe('completed');
        },
        { timeout: 20_000, interval: 20 },
      );
      expect(job.report).toMatchObject({ violation_count: 0, chain_status: 'valid', entries_checked: fixture.entries + 2 });
      if (fixture.checkpoint) {
        const cp = fixture.checkpoint;
        await vi.waitFor(async () => expect((await req('GET', '/api/v1/integrity/checkpoint')).json().tree_size).toBe(cp.tree_size + 2), { timeout: 10_000, interval: 20 });
        const next = (await req('GET', '/api/v1/integrity/checkpoint')).json();
        const proof = (await req('GET', `/api/v1/integrity/consistency?first=${cp.tree_size}&second=${next.tree_size}`)).json();
        expect(proof.first_root).toBe(cp.root_hash);
        expect(verifyConsistency(cp.tree_size, next.tree_size, (proof.proof as string[]).map(fromHex), fromHex(cp.root_hash), fromHex(next.root_hash))).toBe(true);
      }
    } finally {
      await t?.app.close();
      await store.close();
      await db.drop();
    }
  });

  it('migrate --dry-run says what would apply and changes nothing; a database a newer version migrated is refused, by migrate and at start', async () => {
    const db = await createTestDatabase(kind);
    const env = { LEDGER_DATA_DIR: db.dataDir, ...(db.databaseUrl ? { DATABASE_URL: db.databaseUrl } : {}), LEDGER_SIGNING_KEY_FILE: keyFile };
    try {
      const store = db.open();
      await writeFixture(store.db as Kysely<unknown>, '0015_checkpoint_timestamps', key, 'audit-ledger.local');
      await store.close();
      const dry = await runCli(['migrate', '--dry-run'], env);
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.stdout).toContain('schema at 0015_checkpoint_timestamps');
      for (const m of MIGRATION_NAMES.filter((x) => x > '0015_checkpoint_timestamps')) expect(dry.stdout).toContain(`would apply ${m}: ${MIGRATION_SUMMARIES[m]}`);
      expect(dry.stdout).toContain('nothing was changed');
      const again = db.open();
      expect((await again.migrationPlan()).current).toBe('0015_checkpoint_timestamps');

      // A newer version's migration in the database: a downgrade.
      await again.migrate();
      await sql`INSERT INTO schema_migrations (name, timestamp) VALUES ('0999_from_the_future', '2027-01-01T00:00:00.000Z')`.execute(again.db);
      await again.close();
      for (const args of [['migrate'], ['migrate', '--dry-run']]) {
        const run = await runCli(args, env);
        expect(run.code).toBe(1);
        expect(run.stderr).toContain('the database was migrated by a newer audit-ledger: its schema has 0999_from_the_future');
        expect(run.stderr).toContain('A downgrade is refused');
      }
      const serve = await runCli(['serve'], { ...env, PORT: '0' });
      expect(serve.code).toBe(1);
      expect(serve.stderr).toContain('A downgrade is refused');
    } finally {
      await db.drop();
    }
  });
});
