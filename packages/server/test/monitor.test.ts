// `audit-ledger monitor` (issue 32, part 5) against real service processes on both stores, with a
// fork made as forks happen in real life: the database is snapshotted, the service goes on, then
// the snapshot is restored and the service appends again. The monitor (the CLI, run as cron would)
// accepts the honest growth, then reports the rollback (the restored ledger is behind what it
// accepted) and the fork (the restored ledger grew past it with other entries) with exit 1, a JSON
// line and a signed webhook; a wrong key is a bad signature; a log that stopped growing is
// reported once past the stall limit; as a daemon it serves Prometheus metrics. With a real witness
// (`audit-ledger witness serve`) cosigning the log, the monitor counts its cosignature toward the
// quorum, and reports a quorum that a witness it names did not give.
import { generateKeyPairSync } from 'node:crypto';
import { verifierKey, witnessVerifierKey } from '@audit-ledger/core';
import { rawPublicKey } from '../src/crypto/signing.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BOOTSTRAP, bootstrapKey, call, killLeftovers, type Service, startService } from './fault/harness.js';
import { STORE_KINDS, TEST_PG_URL } from './helpers/env.js';
import { LogWatcher, runCli, spawnCli } from './helpers/process.js';
import { createTestDatabase, type TestDatabase } from './helpers/stores.js';
import { receiver, verifySignature } from './helpers/webhook-receiver.js';

const SECRET = `whsec_${Buffer.from('monitor test secret, 32 bytes!!').toString('base64')}`;

// Each test starts the service three or four times and runs the monitor as a process between: 20–25 s
// alone here, more while other files' processes share the two cores, so beyond the default 30 s.
describe.each(STORE_KINDS)('audit-ledger monitor on %s', { timeout: 90_000 }, (kind) => {
  let db: TestDatabase;
  let tmp: string;
  let env: Record<string, string>;
  let hook: Awaited<ReturnType<typeof receiver>>;
  const extra: Array<() => Promise<void>> = [];
  /** The company's API key (one active at a time), made by the first test that starts the service. */
  let apiKey = '';
  beforeAll(async () => {
    db = await createTestDatabase(kind);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'al-monitor-'));
    const keyFile = path.join(tmp, 'service-key.pem');
    fs.writeFileSync(keyFile, generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    env = { LEDGER_DATA_DIR: db.dataDir, ...(db.databaseUrl ? { DATABASE_URL: db.databaseUrl } : {}), ...BOOTSTRAP, LEDGER_SIGNING_KEY_FILE: keyFile, CHECKPOINT_INTERVAL_MS: '50' };
    hook = await receiver();
  });
  afterAll(async () => {
    killLeftovers();
    await hook.close();
    for (const f of extra) await f();
    await db.drop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  /** Appends n entries and waits until a checkpoint covers the whole chain; returns its size. */
  async function grow(svc: Service, key: string, n: number, tag: string): Promise<number> {
    const api = { 'x-api-key': key };
    for (let done = 0; done < n; done += 200) {
      const res = await call(`${svc.url}/api/v1/logs/batch`, 'POST', { logs: Array.from({ length: Math.min(200, n - done) }, (_, i) => ({ event_type: 'tool.called', data: { tag, i: done + i } })) }, api);
      expect(res.status, res.body).toBe(200);
    }
    let size = 0;
    await vi.waitFor(
      async () => {
        const st = (await call(`${svc.url}/api/v1/integrity/status`, 'GET', undefined, api)).json();
        expect(st.checkpoint?.tree_size).toBe(st.head.seq + 1);
        size = st.checkpoint.tree_size as number;
      },
      { timeout: 20_000, interval: 50 },
    );
    return size;
  }

  /** The database as it is now, kept aside (the service is stopped), and how to start a service on the copy: a restored backup. */
  async function snapshot(): Promise<Record<string, string>> {
    const dir = fs.mkdtempSync(path.join(tmp, 'snapshot-'));
    fs.cpSync(db.dataDir, dir, { recursive: true });
    if (!db.databaseUrl) return { ...env, LEDGER_DATA_DIR: dir };
    const name = `${new URL(db.databaseUrl).pathname.slice(1)}_snap`;
    const admin = new pg.Client({ connectionString: TEST_PG_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${new URL(db.databaseUrl).pathname.slice(1)}"`);
    await admin.end();
    extra.push(async () => {
      const c = new pg.Client({ connectionString: TEST_PG_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    });
    const url = new URL(db.databaseUrl);
    url.pathname = `/${name}`;
    return { ...env, LEDGER_DATA_DIR: dir, DATABASE_URL: url.toString() };
  }

  const lines = (stdout: string) => stdout.trim().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);

  it('accepts honest growth, then reports the rollback and the fork of a restored snapshot, with exit 1, a JSON line and a signed webhook', async () => {
    let svc = await startService(env);
    const key = (apiKey ||= await bootstrapKey(svc.url));
    const keysFile = path.join(tmp, 'keys.json');
    fs.writeFileSync(keysFile, (await call(`${svc.url}/api/v1/integrity/keys`, 'GET')).body);
    const state = path.join(tmp, 'state.json');
    const monitor = (url: string, more: string[] = []) =>
      runCli(['monitor', '--log', `${url}/api/v1/tlog`, '--header', `x-api-key: ${key}`, '--public-key', keysFile, '--keys-url', `${url}/api/v1/integrity/keys`, '--state', state, '--check-entries', '--webhook', hook.url, '--webhook-secret', SECRET, ...more], {});

    const first = await grow(svc, key, 300, 'first');
    let run = await monitor(svc.url);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(lines(run.stdout).find((l) => l.msg === 'log checked')).toMatchObject({ tree_size: first, advanced: true });
    const origin = lines(run.stdout).find((l) => l.msg === 'log checked')?.origin as string;
    expect(JSON.parse(fs.readFileSync(state, 'utf8')).logs[origin]).toMatchObject({ tree_size: first });

    // The nightly backup, then the service goes on and the monitor accepts what it signs.
    await svc.stop();
    const restoredEnv = await snapshot();
    svc = await startService(env);
    const honest = await grow(svc, key, 250, 'honest');
    run = await monitor(svc.url);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(lines(run.stdout).find((l) => l.msg === 'log checked')).toMatchObject({ origin, tree_size: honest, advanced: true });
    await svc.stop();

    // The backup is restored: behind the checkpoint the monitor accepted. A rollback.
    svc = await startService(restoredEnv);
    run = await monitor(svc.url);
    expect(run.code).toBe(1);
    expect(lines(run.stdout).find((l) => l.msg === 'alert')).toMatchObject({ kind: 'rollback', origin });
    // It appends again, past the accepted size, with other entries: a fork, however large it grows.
    const forked = await grow(svc, key, 400, 'forked');
    expect(forked).toBeGreaterThan(honest);
    run = await monitor(svc.url);
    expect(run.code).toBe(1);
    const alert = lines(run.stdout).find((l) => l.msg === 'alert');
    expect(alert).toMatchObject({ kind: 'fork', origin });
    expect(String(alert?.detail)).toContain(`does not extend the tree of size ${honest}`);
    // The accepted state is kept: the fork never becomes what the monitor trusts.
    expect(JSON.parse(fs.readFileSync(state, 'utf8')).logs[origin]).toMatchObject({ tree_size: honest });
    // Each alarm was POSTed, signed as Standard Webhooks sign.
    const posted = hook.got.map((r) => ({ ok: verifySignature(SECRET, r), body: JSON.parse(r.body) as { type: string; data: { kind: string; origin: string } } }));
    expect(posted.map((p) => [p.ok, p.body.type, p.body.data.origin])).toEqual([
      [true, 'monitor.rollback', origin],
      [true, 'monitor.fork', origin],
    ]);

    // A key the log does not sign with: a bad signature, whatever the tree.
    const otherKey = path.join(tmp, 'other.pem');
    fs.writeFileSync(otherKey, generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }));
    run = await runCli(['monitor', '--log', `${svc.url}/api/v1/tlog`, '--header', `x-api-key: ${key}`, '--public-key', otherKey, '--state', path.join(tmp, 'other-state.json')], {});
    expect(run.code).toBe(1);
    expect(lines(run.stdout).find((l) => l.msg === 'alert')).toMatchObject({ kind: 'bad_signature' });
    await svc.stop();
  });

  it('reports a log that stopped growing past the stall limit, and as a daemon serves its metrics; usage errors exit 2', async () => {
    const svc = await startService(env);
    const key = (apiKey ||= await bootstrapKey(svc.url));
    const keysFile = path.join(tmp, 'keys-stall.json');
    fs.writeFileSync(keysFile, (await call(`${svc.url}/api/v1/integrity/keys`, 'GET')).body);
    const state = path.join(tmp, 'stall-state.json');
    const args = ['monitor', '--log', `${svc.url}/api/v1/tlog`, '--header', `x-api-key: ${key}`, '--public-key', keysFile, '--state', state, '--stall-seconds', '3600'];
    await grow(svc, key, 10, 'stall');
    expect((await runCli(args, {})).code).toBe(0);
    // The log does not grow; the state says it last grew two hours ago (as if the monitor had run then).
    const s = JSON.parse(fs.readFileSync(state, 'utf8')) as { logs: Record<string, { advanced_at: string }> };
    for (const l of Object.values(s.logs)) l.advanced_at = new Date(Date.now() - 2 * 3600_000).toISOString();
    fs.writeFileSync(state, JSON.stringify(s));
    const stalled = await runCli(args, {});
    expect(stalled.code).toBe(1);
    expect(lines(stalled.stdout).find((l) => l.msg === 'alert')).toMatchObject({ kind: 'stalled' });

    // As a daemon: Prometheus metrics of what it accepted.
    const daemon = spawnCli(['monitor', '--log', `${svc.url}/api/v1/tlog`, '--header', `x-api-key: ${key}`, '--public-key', keysFile, '--state', path.join(tmp, 'daemon-state.json'), '--interval', '3600', '--metrics-port', '0'], {});
    const watcher = new LogWatcher(daemon);
    const metricsUrl = String((await watcher.waitFor((l) => l.msg === 'monitor metrics listening')).url);
    await watcher.waitFor((l) => l.msg === 'log checked');
    const text = await (await fetch(metricsUrl)).text();
    expect(text).toMatch(/audit_ledger_monitor_tree_size\{origin="[^"]+"\} \d+/);
    expect(text).toContain('audit_ledger_monitor_last_check_timestamp_seconds');
    const exited = new Promise((r) => daemon.on('exit', r));
    daemon.kill('SIGTERM');
    expect(await exited).toBe(0);

    // Usage errors: exit 2 with a message, nothing checked.
    expect((await runCli(['monitor', '--public-key', keysFile], {})).code).toBe(2);
    const badHeader = await runCli(['monitor', '--log', `${svc.url}/api/v1/tlog`, '--public-key', keysFile, '--header', 'no colon'], {});
    expect([badHeader.code, badHeader.stderr]).toEqual([2, expect.stringContaining('--header')]);
    const badQuorum = await runCli(['monitor', '--log', `${svc.url}/api/v1/tlog`, '--public-key', keysFile, '--quorum', '2'], {});
    expect([badQuorum.code, badQuorum.stderr]).toEqual([2, expect.stringContaining('quorum')]);
    expect((await runCli(['monitor', '--log', `${svc.url}/api/v1/tlog`, '--public-key', path.join(tmp, 'missing.pem')], {})).code).toBe(2);
    await svc.stop();
  });
});

describe('audit-ledger monitor and a witness quorum (sqlite)', () => {
  it('counts a real witness\'s cosignature toward --quorum, and reports the quorum missing when the named witness did not cosign', async () => {
    const db = await createTestDatabase('sqlite');
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'al-monitor-w-'));
    const serviceKey = generateKeyPairSync('ed25519');
    const keyFile = path.join(tmp, 'service-key.pem');
    fs.writeFileSync(keyFile, serviceKey.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    const logsFile = path.join(tmp, 'logs.json');
    fs.writeFileSync(logsFile, JSON.stringify({ logs: [{ origin_prefix: 'audit-ledger.local/', verifier_keys: [verifierKey('audit-ledger.local', rawPublicKey(serviceKey.publicKey))] }] }));
    const witness = spawnCli(['witness', 'serve', '--name', 'witness.test/m1', '--logs', logsFile, '--key-file', path.join(tmp, 'w.pem'), '--state', path.join(tmp, 'w.db'), '--port', '0'], {});
    const up = await new LogWatcher(witness).waitFor((l) => l.msg === 'witness listening');
    const svc = await startService({ LEDGER_DATA_DIR: db.dataDir, ...BOOTSTRAP, LEDGER_SIGNING_KEY_FILE: keyFile, CHECKPOINT_INTERVAL_MS: '50', WITNESSES: `${String(up.url)} ${String(up.verifier_key)}`, WITNESS_QUORUM: '1', WITNESS_ALLOW_PRIVATE: 'true' });
    try {
      const key = await bootstrapKey(svc.url);
      const api = { 'x-api-key': key };
      expect((await call(`${svc.url}/api/v1/logs/batch`, 'POST', { logs: [{ event_type: 'step', data: { i: 1 } }] }, api)).status).toBe(200);
      await vi.waitFor(
        async () => {
          const st = (await call(`${svc.url}/api/v1/integrity/status`, 'GET', undefined, api)).json();
          expect(st.checkpoint?.tree_size).toBe(st.head.seq + 1);
          expect(st.witnesses.quorum_met).toBe(true);
        },
        { timeout: 20_000, interval: 50 },
      );
      const keysFile = path.join(tmp, 'keys.json');
      fs.writeFileSync(keysFile, (await call(`${svc.url}/api/v1/integrity/keys`, 'GET')).body);
      const args = (witnessKey: string, state: string) => ['monitor', '--log', `${svc.url}/api/v1/tlog`, '--header', `x-api-key: ${key}`, '--public-key', keysFile, '--witness', witnessKey, '--quorum', '1', '--state', path.join(tmp, state)];
      const ok = await runCli(args(String(up.verifier_key), 'ok.json'), {});
      expect(ok.code, ok.stdout + ok.stderr).toBe(0);
      // A witness the log never asked: its cosignature is not there.
      const missing = await runCli(args(witnessVerifierKey('witness.test/stranger', rawPublicKey(generateKeyPairSync('ed25519').publicKey)), 'missing.json'), {});
      expect(missing.code).toBe(1);
      expect(missing.stdout).toContain('"kind":"witness_quorum"');
    } finally {
      await svc.stop();
      witness.kill('SIGKILL');
      await db.drop();
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
