// Restores under attack (issue 42, 12–14), black-box on both stores with the real service and CLI:
// a forged backup (a key added to service.json, files changed, digests fixed, the manifest signed
// again with the added key) is refused, and so is a database file whose rows differ from what the
// signed manifest and the verified entries say; a backup is never its own trust anchor; a rollback
// over a ledger whose marks file was deleted is refused by the replaced ledger's own checkpoints;
// a restore killed (SIGKILL) at random points leaves the old ledger or the complete new one
// (SQLite), or a held one that the next restore completes (PostgreSQL), never a partial ledger the
// service appends to. Short here; CHAOS=1 kills at more points.
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomInt, sign } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { keyIdOf, toBase64 } from '@audit-ledger/core';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signManifest } from '../src/continuity/manifest.js';
import { BOOTSTRAP, bootstrapKey, call, CHAOS, killLeftovers, startService } from './fault/harness.js';
import { STORE_KINDS } from './helpers/env.js';
import { runCli, spawnCli } from './helpers/process.js';
import { createTestDatabase, type TestDatabase } from './helpers/stores.js';

const KILLS = CHAOS ? 12 : 2;

describe.each(STORE_KINDS)('restore under attack on %s', { timeout: 180_000 }, (kind) => {
  let db: TestDatabase;
  let tmp: string;
  let env: Record<string, string>;
  let keyFile: string;
  let backupDir: string;
  let apiKey = '';
  const dropLater: TestDatabase[] = [];
  beforeAll(async () => {
    db = await createTestDatabase(kind);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'al-restore-attack-'));
    keyFile = path.join(tmp, 'service-key.pem');
    fs.writeFileSync(keyFile, generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    const secrets = path.join(tmp, 'secrets.key');
    fs.writeFileSync(secrets, Buffer.alloc(32, 9).toString('base64'), { mode: 0o600 });
    env = { LEDGER_DATA_DIR: db.dataDir, ...(db.databaseUrl ? { DATABASE_URL: db.databaseUrl } : {}), ...BOOTSTRAP, LEDGER_SIGNING_KEY_FILE: keyFile, LEDGER_SECRETS_KEY_FILE: secrets, CHECKPOINT_INTERVAL_MS: '50' };
    // A ledger of a few thousand entries, a backup of it, then more entries and a later checkpoint.
    const svc = await startService(env);
    apiKey = await bootstrapKey(svc.url);
    for (let i = 0; i < 15; i++) expect((await call(`${svc.url}/api/v1/logs/batch`, 'POST', { logs: Array.from({ length: 200 }, (_, j) => ({ event_type: 'tool.called', data: { i, j, pad: 'x'.repeat(100) } })) }, { 'x-api-key': apiKey })).status).toBe(200);
    backupDir = path.join(tmp, 'backup');
    const b = await runCli(['backup', '--to', backupDir], env);
    expect(b.code, b.stdout + b.stderr).toBe(0);
    for (let i = 0; i < 3; i++) expect((await call(`${svc.url}/api/v1/logs/batch`, 'POST', { logs: Array.from({ length: 100 }, (_, j) => ({ event_type: 'later', data: { i, j } })) }, { 'x-api-key': apiKey })).status).toBe(200);
    // Let a checkpoint cover the later entries.
    for (let n = 0; n < 200; n++) {
      const st = (await call(`${svc.url}/api/v1/integrity/status`, 'GET', undefined, { 'x-api-key': apiKey })).json();
      if (st.checkpoint?.tree_size === st.head.seq + 1) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await svc.stop();
  });
  afterAll(async () => {
    killLeftovers();
    for (const d of [db, ...dropLater]) await d.drop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  async function target(extra: Record<string, string> = {}): Promise<Record<string, string>> {
    const t = await createTestDatabase(kind);
    dropLater.push(t);
    return { ...env, LEDGER_DATA_DIR: t.dataDir, ...(t.databaseUrl ? { DATABASE_URL: t.databaseUrl } : {}), ...extra };
  }

  /** Rewrites a backup's manifest digests and signs it with `key` (what an attacker who changed files does). */
  function resign(dir: string, key: { raw: Uint8Array; sign(m: Uint8Array): Uint8Array }): void {
    const m = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    for (const f of m.files) {
      const bytes = fs.readFileSync(path.join(dir, f.path));
      f.sha256 = createHash('sha256').update(bytes).digest('hex');
      f.bytes = bytes.length;
    }
    const bytes = Buffer.from(`${JSON.stringify(m, null, 2)}\n`);
    fs.writeFileSync(path.join(dir, 'manifest.json'), bytes);
    fs.writeFileSync(path.join(dir, 'manifest.sig'), `${JSON.stringify(signManifest(bytes, key), null, 2)}\n`);
  }

  function attackerKey() {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const raw = new Uint8Array(publicKey.export({ format: 'der', type: 'spki' }).subarray(12));
    return { raw, sign: (msg: Uint8Array) => new Uint8Array(sign(null, msg, privateKey)) };
  }

  it('12: a forged backup (a key added to service.json, a reviewer made admin, digests fixed, the manifest signed with the added key) is refused, naming the key; nothing is written', async () => {
    const forged = path.join(tmp, 'forged');
    fs.cpSync(backupDir, forged, { recursive: true });
    const evil = attackerKey();
    const service = JSON.parse(fs.readFileSync(path.join(forged, 'service.json'), 'utf8'));
    service.signing_keys.push({ ...service.signing_keys[0], key_id: keyIdOf(evil.raw), public_key: toBase64(evil.raw), private_key_encrypted: null });
    for (const u of service.users) u.role = 'admin';
    fs.writeFileSync(path.join(forged, 'service.json'), JSON.stringify(service, null, 2));
    resign(forged, evil);
    const into = await target();
    const run = await runCli(['restore', '--from', forged], into);
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.stderr).toContain(`signed by key ${keyIdOf(evil.raw)}, which neither this service's own signing key`);
    expect(fs.existsSync(path.join(into.LEDGER_DATA_DIR as string, 'ledger.db'))).toBe(false);

    // With no key of its own and no --keys, a restore has nothing to trust: refused (the real backup too).
    const bare = await target({ LEDGER_SIGNING_KEY_FILE: '' });
    delete bare.LEDGER_SIGNING_KEY_FILE;
    const none = await runCli(['restore', '--from', backupDir], bare);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('a backup cannot vouch for itself');
    // The operator's kept keys are an anchor; the restore says which key it trusted.
    const keysFile = path.join(tmp, 'kept-keys.pem');
    fs.writeFileSync(keysFile, createPublicKey(fs.readFileSync(keyFile)).export({ type: 'spki', format: 'pem' }) as string);
    const ok = await runCli(['restore', '--from', backupDir, '--keys', keysFile], bare);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(new RegExp(`trusting key [0-9a-f]{16} \\(--keys ${keysFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  });

  it.runIf(kind === 'sqlite')('12: a database file whose security rows or entries differ from the signed service rows and the verified export is never installed, even under a valid signature', async () => {
    const changed = path.join(tmp, 'changed-db');
    fs.cpSync(backupDir, changed, { recursive: true });
    const { default: SQLite } = await import('better-sqlite3');
    const d = new SQLite(path.join(changed, 'ledger.db'));
    d.prepare("UPDATE users SET role = 'admin', password_hash = 'swapped'").run();
    d.close();
    // Signed with the service's real key: only the rows themselves can tell.
    const priv = createPrivateKey(fs.readFileSync(keyFile));
    const raw = new Uint8Array(createPublicKey(priv).export({ format: 'der', type: 'spki' }).subarray(12));
    resign(changed, { raw, sign: (m) => new Uint8Array(sign(null, m, priv)) });
    const into = await target();
    const run = await runCli(['restore', '--from', changed], into);
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.stderr).toContain("the backup's ledger.db differs from its signed service.json in table users");
    expect(fs.existsSync(path.join(into.LEDGER_DATA_DIR as string, 'ledger.db'))).toBe(false);

    // An entry's content changed in the file, its hash kept (the export and the manifest untouched but re-signed).
    const entries = path.join(tmp, 'changed-entry');
    fs.cpSync(backupDir, entries, { recursive: true });
    const e = new SQLite(path.join(entries, 'ledger.db'));
    e.prepare(`UPDATE log_entries SET data = '{"i":99}' WHERE seq = 5`).run();
    e.close();
    resign(entries, { raw, sign: (m) => new Uint8Array(sign(null, m, priv)) });
    const into2 = await target();
    const run2 = await runCli(['restore', '--from', entries], into2);
    expect(run2.code, run2.stdout + run2.stderr).toBe(1);
    expect(run2.stderr).toContain("the backup's ledger.db holds another entry at seq 5");
    expect(fs.existsSync(path.join(into2.LEDGER_DATA_DIR as string, 'ledger.db'))).toBe(false);
  });

  it('a truncated backup (any file cut short, as it is or with its digests fixed and re-signed with the real key) is refused and writes nothing', async () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(backupDir, 'manifest.json'), 'utf8')) as { files: Array<{ path: string }>; companies: Array<{ company_id: string }> };
    const companyId = manifest.companies[0]?.company_id as string;
    const priv = createPrivateKey(fs.readFileSync(keyFile));
    const raw = new Uint8Array(createPublicKey(priv).export({ format: 'der', type: 'spki' }).subarray(12));
    const cases = [...manifest.files.map((f) => ({ file: f.path, resigned: false })), ...manifest.files.filter((f) => f.path.endsWith('.jsonl')).map((f) => ({ file: f.path, resigned: true })), { file: 'manifest.json', resigned: false }];
    expect(cases.length).toBeGreaterThanOrEqual(4);
    for (const c of cases) {
      const cut = path.join(tmp, `cut-${cases.indexOf(c)}`);
      fs.cpSync(backupDir, cut, { recursive: true });
      const file = path.join(cut, c.file);
      const bytes = fs.readFileSync(file);
      // Cut at a line boundary for JSON Lines (a clean-looking shorter file), mid-way otherwise.
      const half = c.file.endsWith('.jsonl') ? bytes.subarray(0, bytes.indexOf(10, Math.floor(bytes.length / 2)) + 1) : bytes.subarray(0, Math.floor(bytes.length / 2));
      fs.writeFileSync(file, half);
      if (c.resigned) resign(cut, { raw, sign: (m) => new Uint8Array(sign(null, m, priv)) });
      const into = await target();
      const run = await runCli(['restore', '--from', cut], into);
      expect(run.code, `${c.file}${c.resigned ? ' (re-signed)' : ''}: ${run.stdout}${run.stderr}`).toBe(1);
      expect(fs.existsSync(path.join(into.LEDGER_DATA_DIR as string, 'ledger.db')), c.file).toBe(false);
      expect((await stateOf(into, companyId)).entries, c.file).toBe(0);
      fs.rmSync(cut, { recursive: true, force: true });
    }
  });

  it('13: with the marks file deleted, restoring the older backup over the ledger is refused by that ledger\'s own newest checkpoint', async () => {
    const marks = path.join(env.LEDGER_DATA_DIR as string, 'checkpoint-marks.json');
    fs.rmSync(marks, { force: true });
    const run = await runCli(['restore', '--from', backupDir, '--force'], env);
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.stdout).toMatch(kind === 'sqlite' ? /behind: .* the newest checkpoint of the ledger being replaced .* has seen a checkpoint of size \d+/ : /behind: .* the newest checkpoint of the ledger being replaced \(the target database\) has seen a checkpoint of size \d+/);
  });

  it('13: a rollback restored into a fresh directory, whose service then streams a different history into the same directory stream, is caught by the stream verifier (stream_fork), which certified the single history before', async () => {
    const streams = path.join(tmp, `fork-streams-${kind}`);
    const first = await target({ STREAM_DIRECTORY: streams });
    const svc = await startService(first);
    const login = (url: string) => call(`${url}/api/v1/auth/login`, 'POST', { email: BOOTSTRAP.LEDGER_BOOTSTRAP_EMAIL, password: BOOTSTRAP.LEDGER_BOOTSTRAP_PASSWORD }).then((r) => ({ authorization: `Bearer ${r.json().access_token}` }));
    const admin = await login(svc.url);
    const key = await bootstrapKey(svc.url);
    const append = async (url: string, tag: string) => expect((await call(`${url}/api/v1/logs/batch`, 'POST', { logs: Array.from({ length: 20 }, (_, j) => ({ event_type: 'tool.called', data: { tag, j } })) }, { 'x-api-key': key })).status).toBe(200);
    const stream = await call(`${svc.url}/api/v1/streams`, 'POST', { name: 'archive', destination: { type: 'directory', folder: 'archive' }, format: 'ledger', start: 'beginning' }, admin);
    expect(stream.status, stream.body).toBe(201);
    const caughtUp = async (url: string, headers: Record<string, string>, id = stream.json().id as string) => {
      let last = '';
      for (let n = 0; n < 400; n++) {
        const res = await call(`${url}/api/v1/streams/${id}`, 'GET', undefined, headers);
        if (res.json().lag?.entries === 0) return;
        last = res.body;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`the stream did not catch up: ${last}`);
    };
    await append(svc.url, 'before');
    await caughtUp(svc.url, admin);
    const backup = path.join(tmp, `fork-backup-${kind}`);
    const b = await runCli(['backup', '--to', backup], first);
    expect(b.code, b.stdout + b.stderr).toBe(0);
    await append(svc.url, 'history A');
    await caughtUp(svc.url, admin);
    const keys = path.join(tmp, `fork-keys-${kind}.json`);
    fs.writeFileSync(keys, (await call(`${svc.url}/api/v1/integrity/keys`, 'GET', undefined, { 'x-api-key': key })).body);
    await svc.stop();
    const companyId = JSON.parse(fs.readFileSync(path.join(backup, 'manifest.json'), 'utf8')).companies[0].company_id as string;
    const dir = path.join(streams, companyId, 'archive');
    const verify = () => runCli(['verify-bundle', dir, '--stream', '--public-key', keys], first);
    const single = await verify();
    expect(single.code, single.stdout + single.stderr).toBe(0);
    expect(single.stdout).toContain('VERIFIED');

    // The rollback: the older backup restored into a fresh directory (nothing there has seen the
    // later checkpoints), its service started on the same stream directory, a different history.
    const second = await target({ STREAM_DIRECTORY: streams });
    const restored = await runCli(['restore', '--from', backup], second);
    expect(restored.code, restored.stdout + restored.stderr).toBe(0);
    const svc2 = await startService(second);
    try {
      // A SQLite restore brings the stream back; a PostgreSQL one does not carry configuration
      // rows (docs/operations.md), so the operator makes it again, on the same folder.
      const admin2 = await login(svc2.url);
      let id = stream.json().id as string;
      if ((await call(`${svc2.url}/api/v1/streams/${id}`, 'GET', undefined, admin2)).status === 404) {
        const again = await call(`${svc2.url}/api/v1/streams`, 'POST', { name: 'archive', destination: { type: 'directory', folder: 'archive' }, format: 'ledger', start: 'beginning' }, admin2);
        expect(again.status, again.body).toBe(201);
        id = again.json().id as string;
      }
      await append(svc2.url, 'history B');
      await caughtUp(svc2.url, admin2, id);
    } finally {
      await svc2.stop();
    }
    const forked = await verify();
    expect(forked.code, forked.stdout).toBe(1);
    expect(forked.stdout).toMatch(/stream_fork|two histories/);
    expect(forked.stdout).not.toMatch(/^VERIFIED/m);
  });

  /** The target's entries of the backup's company, and its open restore holds (PostgreSQL). */
  async function stateOf(into: Record<string, string>, companyId: string): Promise<{ entries: number; held: number }> {
    if (!into.DATABASE_URL) {
      const file = path.join(into.LEDGER_DATA_DIR as string, 'ledger.db');
      if (!fs.existsSync(file)) return { entries: 0, held: 0 };
      const { default: SQLite } = await import('better-sqlite3');
      const d = new SQLite(file, { readonly: true });
      try {
        return { entries: (d.prepare('SELECT count(*) AS n FROM log_entries WHERE company_id = ?').get(companyId) as { n: number }).n, held: 0 };
      } finally {
        d.close();
      }
    }
    const c = new pg.Client({ connectionString: into.DATABASE_URL });
    await c.connect();
    try {
      const has = async (t: string) => (await c.query('SELECT to_regclass($1) AS t', [t])).rows[0].t !== null;
      const entries = (await has('log_entries')) ? Number((await c.query('SELECT count(*) AS n FROM log_entries WHERE company_id = $1', [companyId])).rows[0].n) : 0;
      const held = (await has('continuity_holds')) ? Number((await c.query('SELECT count(*) AS n FROM continuity_holds WHERE company_id = $1 AND decision IS NULL', [companyId])).rows[0].n) : 0;
      return { entries, held };
    } finally {
      await c.end();
    }
  }

  it(`14: a restore killed at random points leaves the old ledger or the complete new one (SQLite), or one held until the next restore completes it (PostgreSQL) (${KILLS} kills)`, async () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(backupDir, 'manifest.json'), 'utf8'));
    const { company_id: companyId, tree_size: size } = manifest.companies[0] as { company_id: string; tree_size: number };
    for (let k = 0; k < KILLS; k++) {
      const into = await target();
      const child = spawnCli(['restore', '--from', backupDir], into);
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
      // Kill after it has said which key it trusts (verification, then writing, follow), at a random point.
      const delay = randomInt(0, 2500);
      const timer = setInterval(() => {
        if (out.includes('trusting key')) {
          clearInterval(timer);
          setTimeout(() => child.kill('SIGKILL'), delay);
        }
      }, 5);
      await exited;
      clearInterval(timer);
      const after = await stateOf(into, companyId);
      if (kind === 'sqlite') expect([0, size], `killed after ${delay} ms`).toContain(after.entries);
      else expect(after.held > 0 || (after.entries === 0 || after.entries === size), `killed after ${delay} ms: ${JSON.stringify(after)}`).toBe(true);
      // Run again: it completes, whatever the kill left.
      const again = await runCli(['restore', '--from', backupDir, ...(kind === 'sqlite' && after.entries > 0 ? ['--force'] : [])], into);
      if (after.entries === size && after.held === 0) {
        // Complete already: a second restore of the same backup changes nothing it would need to.
        expect(await stateOf(into, companyId)).toEqual({ entries: size, held: 0 });
        continue;
      }
      expect(again.code, again.stdout + again.stderr).toBe(0);
      expect(await stateOf(into, companyId)).toEqual({ entries: size, held: 0 });
    }
  });

  it.runIf(kind !== 'sqlite')('14: a company held by an interrupted restore is refused appends (503) by the service until the restore completes', async () => {
    const into = await target();
    const manifest = JSON.parse(fs.readFileSync(path.join(backupDir, 'manifest.json'), 'utf8'));
    const companyId = manifest.companies[0].company_id as string;
    // The state an interruption after the holds leaves: a complete restore, then its hold put back open.
    expect((await runCli(['restore', '--from', backupDir], into)).code).toBe(0);
    const c = new pg.Client({ connectionString: into.DATABASE_URL });
    await c.connect();
    await c.query('UPDATE continuity_holds SET decision = NULL WHERE company_id = $1', [companyId]);
    await c.end();
    const svc = await startService(into);
    try {
      const res = await call(`${svc.url}/api/v1/logs`, 'POST', { event_type: 'during.restore', data: {} }, { 'x-api-key': apiKey });
      expect([res.status, res.json().code], res.body).toEqual([503, 'ledger_behind_checkpoint']);
    } finally {
      await svc.stop();
    }
    expect((await runCli(['restore', '--from', backupDir], into)).code).toBe(0);
    expect(await stateOf(into, companyId)).toEqual({ entries: manifest.companies[0].tree_size, held: 0 });
  });
});
