// `audit-ledger backup` and `restore` (issue 34) on both stores, black-box: the real service as a
// process, the real CLI. A backup taken while clients ingest restores to a ledger that verifies,
// holds every entry the manifest names exactly, and extends the manifest's checkpoint. Restoring
// that (now older) backup when a later checkpoint was seen is refused with the missing range named
// and nothing written; with the missing entries supplied from an export it is accepted, and the
// service goes on from the checkpoint the world saw. A changed manifest or file, a target that is
// not empty and a backup directory in use are refused.
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { fromHex, verifyConsistency } from '@audit-ledger/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BOOTSTRAP, bootstrapKey, call, fullVerification, killLeftovers, type Service, startService } from './fault/harness.js';
import { STORE_KINDS } from './helpers/env.js';
import { LogWatcher, runCli, spawnCli } from './helpers/process.js';
import { createTestDatabase, type TestDatabase } from './helpers/stores.js';

describe.each(STORE_KINDS)('backup and restore on %s', { timeout: 120_000 }, (kind) => {
  let db: TestDatabase;
  let tmp: string;
  let env: Record<string, string>;
  const dropLater: TestDatabase[] = [];
  beforeAll(async () => {
    db = await createTestDatabase(kind);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'al-backup-'));
    const keyFile = path.join(tmp, 'service-key.pem');
    fs.writeFileSync(keyFile, generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    const secrets = path.join(tmp, 'secrets.key');
    fs.writeFileSync(secrets, Buffer.alloc(32, 7).toString('base64'), { mode: 0o600 });
    env = { LEDGER_DATA_DIR: db.dataDir, ...(db.databaseUrl ? { DATABASE_URL: db.databaseUrl } : {}), ...BOOTSTRAP, LEDGER_SIGNING_KEY_FILE: keyFile, LEDGER_SECRETS_KEY_FILE: secrets, CHECKPOINT_INTERVAL_MS: '50' };
  });
  afterAll(async () => {
    killLeftovers();
    for (const d of [db, ...dropLater]) await d.drop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  /** An empty target: a new data directory, and on PostgreSQL a new database, with the same keys. */
  async function target(): Promise<Record<string, string>> {
    const t = await createTestDatabase(kind);
    dropLater.push(t);
    return { ...env, LEDGER_DATA_DIR: t.dataDir, ...(t.databaseUrl ? { DATABASE_URL: t.databaseUrl } : {}) };
  }

  async function entriesIn(e: Record<string, string>): Promise<number> {
    if (!e.DATABASE_URL) {
      const file = path.join(e.LEDGER_DATA_DIR as string, 'ledger.db');
      if (!fs.existsSync(file)) return 0;
      const { default: SQLite } = await import('better-sqlite3');
      const d = new SQLite(file, { readonly: true });
      try {
        return (d.prepare('SELECT count(*) AS n FROM log_entries').get() as { n: number }).n;
      } finally {
        d.close();
      }
    }
    const c = new pg.Client({ connectionString: e.DATABASE_URL });
    await c.connect();
    try {
      const t = await c.query("SELECT to_regclass('log_entries') AS t");
      if (t.rows[0].t === null) return 0;
      return Number((await c.query('SELECT count(*) AS n FROM log_entries')).rows[0].n);
    } finally {
      await c.end();
    }
  }

  /** Waits until a checkpoint covers the whole chain; returns it (JSON, with its note). */
  async function coveredCheckpoint(svc: Service, key: string): Promise<{ tree_size: number; root_hash: string; note: string }> {
    let cp = { tree_size: 0, root_hash: '', note: '' };
    await vi.waitFor(
      async () => {
        const st = (await call(`${svc.url}/api/v1/integrity/status`, 'GET', undefined, { 'x-api-key': key })).json();
        expect(st.checkpoint?.tree_size).toBe(st.head.seq + 1);
        cp = (await call(`${svc.url}/api/v1/integrity/checkpoint`, 'GET', undefined, { 'x-api-key': key })).json();
        expect(cp.tree_size).toBe(st.head.seq + 1);
      },
      { timeout: 20_000, interval: 50 },
    );
    return cp;
  }

  async function consistent(svc: Service, key: string, first: { tree_size: number; root_hash: string }, second: { tree_size: number; root_hash: string }): Promise<boolean> {
    const res = await call(`${svc.url}/api/v1/integrity/consistency?first=${first.tree_size}&second=${second.tree_size}`, 'GET', undefined, { 'x-api-key': key });
    expect(res.status, res.body).toBe(200);
    const p = res.json();
    return p.first_root === first.root_hash && p.second_root === second.root_hash && verifyConsistency(first.tree_size, second.tree_size, (p.proof as string[]).map(fromHex), fromHex(first.root_hash), fromHex(second.root_hash));
  }

  let backupDir = '';
  let manifest: { companies: Array<{ company_id: string; tree_size: number; root_hash: string; checkpoint: { tree_size: number; root_hash: string } | null }> };
  let apiKey = '';
  /** What clients were told was committed (log_ids). */
  const acked = new Set<string>();
  let later: { tree_size: number; root_hash: string; note: string };
  let exportFile = '';

  it('takes a backup while clients ingest; the restore verifies, holds every entry the manifest names, and extends its checkpoint', async () => {
    const svc = await startService(env);
    apiKey = await bootstrapKey(svc.url);
    const api = { 'x-api-key': apiKey };
    let running = true;
    const client = async (c: number) => {
      for (let i = 0; running; i++) {
        const res =
          i % 3 === 0
            ? await call(`${svc.url}/api/v1/logs/batch`, 'POST', { logs: Array.from({ length: 20 }, (_, j) => ({ event_type: 'tool.called', data: { c, i, j, note: 'x'.repeat(200) } })) }, api)
            : await call(`${svc.url}/api/v1/logs`, 'POST', { event_type: 'agent.step', source: `agent-${c}`, data: { c, i } }, api);
        expect(res.status, res.body).toBe(200);
        const body = res.json();
        for (const id of body.log_ids ?? [body.log_id]) acked.add(id);
      }
    };
    const clients = [client(0), client(1)];
    await vi.waitFor(() => expect(acked.size).toBeGreaterThan(300), { timeout: 30_000, interval: 20 });
    backupDir = path.join(tmp, 'backup-1');
    const backup = await runCli(['backup', '--to', backupDir], env);
    const duringBackup = acked.size;
    await vi.waitFor(() => expect(acked.size).toBeGreaterThan(duringBackup + 100), { timeout: 30_000, interval: 20 });
    running = false;
    await Promise.all(clients);
    expect(backup.code, backup.stdout + backup.stderr).toBe(0);
    expect(backup.stdout).toMatch(/manifest signed by key [0-9a-f]{16}/);
    manifest = JSON.parse(fs.readFileSync(path.join(backupDir, 'manifest.json'), 'utf8'));
    const company = manifest.companies[0] as (typeof manifest.companies)[0];
    expect(company.tree_size).toBeGreaterThan(300);

    // The service goes on after the backup: a later checkpoint the outside world sees, and an export that has everything.
    later = await coveredCheckpoint(svc, apiKey);
    expect(later.tree_size).toBeGreaterThan(company.tree_size);
    exportFile = path.join(tmp, 'export.jsonl');
    const exp = await call(`${svc.url}/api/v1/exports/logs?format=jsonl`, 'GET', undefined, api);
    expect(exp.status).toBe(200);
    fs.writeFileSync(exportFile, exp.body);
    await svc.stop();

    const into = await target();
    const restored = await runCli(['restore', '--from', backupDir], into);
    expect(restored.code, restored.stdout + restored.stderr).toBe(0);
    expect(await entriesIn(into)).toBe(company.tree_size);

    const back = await startService(into);
    const report = await fullVerification(back.url, apiKey, back.logs);
    expect(report).toMatchObject({ violation_count: 0, chain_status: 'valid' });
    expect(report.entries_checked).toBeGreaterThanOrEqual(company.tree_size);
    // Every entry the backup covers is there as the source had it; nothing acknowledged was lost at the source.
    const source = fs.readFileSync(exportFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    for (const id of acked) expect(source.some((e) => e.log_id === id)).toBe(true);
    const exported = (await call(`${back.url}/api/v1/exports/logs?format=jsonl`, 'GET', undefined, api)).body.trim().split('\n').map((l) => JSON.parse(l));
    const inBackup = exported.filter((e) => e.seq < company.tree_size);
    expect(inBackup).toHaveLength(company.tree_size);
    expect(inBackup.map((e) => [e.seq, e.log_id, e.hash])).toEqual(source.slice(0, company.tree_size).map((e) => [e.seq, e.log_id, e.hash]));
    // It extends the manifest's tree: new entries, a new checkpoint, consistent with the manifest's size and root.
    expect((await call(`${back.url}/api/v1/logs`, 'POST', { event_type: 'after.restore', data: {} }, api)).status).toBe(200);
    const next = await coveredCheckpoint(back, apiKey);
    expect(await consistent(back, apiKey, company, next)).toBe(true);
    if (company.checkpoint) expect(await consistent(back, apiKey, company.checkpoint, next)).toBe(true);
    await back.stop();
  });

  it('refuses to restore the older backup behind a checkpoint seen since, naming the missing entries and writing nothing; accepts it once they are supplied', async () => {
    const company = manifest.companies[0] as (typeof manifest.companies)[0];
    const seenFile = path.join(tmp, 'seen-checkpoint.json');
    fs.writeFileSync(seenFile, JSON.stringify(later));
    const into = await target();
    const refused = await runCli(['restore', '--from', backupDir, '--checkpoint', seenFile], into);
    expect(refused.code, refused.stdout + refused.stderr).toBe(1);
    expect(refused.stdout).toContain(`entries seq ${company.tree_size} to ${later.tree_size - 1} (${later.tree_size - company.tree_size}) are missing`);
    expect(refused.stdout).toContain(seenFile);
    expect(refused.stderr).toContain('nothing was written');
    expect(await entriesIn(into)).toBe(0);

    // An export that lacks the newest entries is not enough either.
    const partial = path.join(tmp, 'partial.jsonl');
    fs.writeFileSync(partial, `${fs.readFileSync(exportFile, 'utf8').trim().split('\n').slice(0, later.tree_size - 1).join('\n')}\n`);
    const still = await runCli(['restore', '--from', backupDir, '--checkpoint', seenFile, '--entries', partial], into);
    expect(still.code).toBe(1);
    expect(still.stdout).toContain(`entries seq ${later.tree_size - 1} to ${later.tree_size - 1} (1) are missing`);

    // An entry changed in the supplied export does not verify against the checkpoint seen.
    const forged = path.join(tmp, 'forged.jsonl');
    const lines = fs.readFileSync(exportFile, 'utf8').trim().split('\n');
    const at = company.tree_size + 1;
    const e = JSON.parse(lines[at] as string);
    e.data = { ...e.data, forged: true };
    lines[at] = JSON.stringify(e);
    fs.writeFileSync(forged, `${lines.join('\n')}\n`);
    const bad = await runCli(['restore', '--from', backupDir, '--checkpoint', seenFile, '--entries', forged], into);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/does not verify against the checkpoint of size/);
    expect(await entriesIn(into)).toBe(0);

    const ok = await runCli(['restore', '--from', backupDir, '--checkpoint', seenFile, '--entries', exportFile], into);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    const svc = await startService(into);
    const report = await fullVerification(svc.url, apiKey, svc.logs);
    expect(report).toMatchObject({ violation_count: 0, chain_status: 'valid' });
    expect(report.entries_checked).toBeGreaterThanOrEqual(later.tree_size);
    expect((await call(`${svc.url}/api/v1/logs`, 'POST', { event_type: 'after.restore', data: {} }, { 'x-api-key': apiKey })).status).toBe(200);
    const next = await coveredCheckpoint(svc, apiKey);
    expect(await consistent(svc, apiKey, later, next)).toBe(true);
    await svc.stop();
  });

  it('refuses a changed manifest, a changed file, a target that holds a ledger, and a backup directory in use', async () => {
    const copy = path.join(tmp, 'tampered');
    fs.cpSync(backupDir, copy, { recursive: true });
    const m = path.join(copy, 'manifest.json');
    fs.writeFileSync(m, fs.readFileSync(m, 'utf8').replace(/"tree_size": (\d+)/, (_, n) => `"tree_size": ${Number(n) - 1}`));
    const into = await target();
    let run = await runCli(['restore', '--from', copy], into);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("the manifest's signature does not hold");

    fs.rmSync(copy, { recursive: true });
    fs.cpSync(backupDir, copy, { recursive: true });
    const entries = path.join(copy, 'companies', `${manifest.companies[0]?.company_id}.jsonl`);
    fs.appendFileSync(entries, '\n');
    run = await runCli(['restore', '--from', copy], into);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/is not the file the manifest lists/);
    expect(await entriesIn(into)).toBe(0);

    // The source's own data directory: its checkpoint marks say it signed a later checkpoint than the backup has. Refused, left as it was.
    const before = await entriesIn(env);
    run = await runCli(['restore', '--from', backupDir], env);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/behind: .* a checkpoint this service signed \(.*checkpoint-marks\.json\) has seen a checkpoint of size/);
    expect(await entriesIn(env)).toBe(before);
    // With every entry supplied it would not be behind, but the target holds a ledger: refused too.
    run = await runCli(['restore', '--from', backupDir, '--entries', exportFile], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(kind === 'sqlite' ? /ledger\.db exists: stop the service and give --force/ : /already holds entries/);
    expect(await entriesIn(env)).toBe(before);
    if (kind === 'sqlite') {
      // --force replaces it, keeping the replaced database beside it.
      run = await runCli(['restore', '--from', backupDir, '--entries', exportFile, '--force'], env);
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(fs.readdirSync(env.LEDGER_DATA_DIR as string).filter((f) => /^ledger\.db\.replaced-\d{4}-\d\d-\d\dT[\d-]+Z$/.test(f))).toHaveLength(1);
      expect(await entriesIn(env)).toBe(before);
    }

    run = await runCli(['backup', '--to', backupDir], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('exists and is not empty');
  });

  it('with a witness: a backup holds no erased content; restoring it behind what the witness cosigned is refused, and the supplied restore extends it', async () => {
    const wdb = await createTestDatabase(kind);
    dropLater.push(wdb);
    const { verifierKey } = await import('@audit-ledger/core');
    const { rawPublicKey } = await import('../src/crypto/signing.js');
    const { createPublicKey } = await import('node:crypto');
    const publicKey = createPublicKey(fs.readFileSync(env.LEDGER_SIGNING_KEY_FILE as string));
    const logsFile = path.join(tmp, 'witness-logs.json');
    fs.writeFileSync(logsFile, JSON.stringify({ logs: [{ origin_prefix: 'audit-ledger.local/', verifier_keys: [verifierKey('audit-ledger.local', rawPublicKey(publicKey))] }] }));
    const witness = spawnCli(['witness', 'serve', '--name', 'witness.test/b1', '--logs', logsFile, '--key-file', path.join(tmp, `w-${kind}.pem`), '--state', path.join(tmp, `w-${kind}.db`), '--port', '0'], {});
    const up = await new LogWatcher(witness).waitFor((l) => l.msg === 'witness listening');
    const withWitness = { WITNESSES: `${String(up.url)} ${String(up.verifier_key)}`, WITNESS_QUORUM: '1', WITNESS_ALLOW_PRIVATE: 'true' };
    const wenv = { ...env, LEDGER_DATA_DIR: wdb.dataDir, ...(wdb.databaseUrl ? { DATABASE_URL: wdb.databaseUrl } : {}), ...withWitness };
    try {
      let svc = await startService(wenv);
      const key = await bootstrapKey(svc.url);
      const api = { 'x-api-key': key };
      const secret = `erase-me-${Date.now().toString(36)}`;
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push(...(await call(`${svc.url}/api/v1/logs/batch`, 'POST', { logs: Array.from({ length: 100 }, (_, j) => ({ event_type: 'step', data: i === 1 && j === 7 ? { customer: secret } : { i, j } })) }, api)).json().log_ids);
      const login = await call(`${svc.url}/api/v1/auth/login`, 'POST', { email: BOOTSTRAP.LEDGER_BOOTSTRAP_EMAIL, password: BOOTSTRAP.LEDGER_BOOTSTRAP_PASSWORD });
      const erased = await call(`${svc.url}/api/v1/compliance/erasures`, 'POST', { log_ids: [ids[107]], legal_basis: 'GDPR Art. 17, backup test' }, { authorization: `Bearer ${login.json().access_token}` });
      expect(erased.status, erased.body).toBe(201);
      const cosigned = async () => {
        let size = 0;
        await vi.waitFor(
          async () => {
            const st = (await call(`${svc.url}/api/v1/integrity/status`, 'GET', undefined, api)).json();
            expect(st.checkpoint?.tree_size).toBe(st.head.seq + 1);
            expect(st.witnesses.quorum_met).toBe(true);
            size = st.checkpoint.tree_size;
          },
          { timeout: 20_000, interval: 50 },
        );
        return size;
      };
      await cosigned();
      const dir = path.join(tmp, `backup-witness-${kind}`);
      const made = await runCli(['backup', '--to', dir], wenv);
      expect(made.code, made.stderr).toBe(0);
      // Erased content is in no file of the backup (the database copy included).
      for (const f of fs.readdirSync(dir, { recursive: true }) as string[]) {
        const file = path.join(dir, f);
        if (fs.statSync(file).isFile()) expect(fs.readFileSync(file).includes(secret), f).toBe(false);
      }
      expect((await call(`${svc.url}/api/v1/logs/batch`, 'POST', { logs: Array.from({ length: 50 }, (_, j) => ({ event_type: 'later', data: { j } })) }, api)).status).toBe(200);
      const seenByWitness = await cosigned();
      const exported = path.join(tmp, `witness-export-${kind}.jsonl`);
      fs.writeFileSync(exported, (await call(`${svc.url}/api/v1/exports/logs?format=jsonl`, 'GET', undefined, api)).body);
      await svc.stop();

      const into = { ...(await target()), ...withWitness };
      const refused = await runCli(['restore', '--from', dir], into);
      expect(refused.code, refused.stdout + refused.stderr).toBe(1);
      expect(refused.stdout).toMatch(new RegExp(`witness witness\\.test/b1 has seen a checkpoint of size ${seenByWitness}`));
      expect(await entriesIn(into)).toBe(0);
      const ok = await runCli(['restore', '--from', dir, '--entries', exported], into);
      expect(ok.code, ok.stdout + ok.stderr).toBe(0);
      svc = await startService(into);
      expect((await call(`${svc.url}/api/v1/logs`, 'POST', { event_type: 'after.restore', data: {} }, api)).status).toBe(200);
      // The witness cosigns the restored ledger's next checkpoint: it extends what the witness saw.
      expect(await cosigned()).toBeGreaterThan(seenByWitness);
      await svc.stop();
    } finally {
      witness.kill('SIGTERM');
    }
  });
});
