// docs/operations.md, run as written (issue 34): every `sh` block, line by line with bash and the
// variables the doc names, against a real service on SQLite, in the order an operator meets them:
// a backup under load, a key rotation, collecting what the outside world saw, metrics, a full
// verification, the restore of a lost data directory, a rebuild from exports alone, an upgrade,
// and the two continuity decisions after a careless restore. The `sh postgres` blocks are run by
// test/fault/failover.test.ts and the `sh citus` ones by test/citus-cluster.test.ts; this file
// checks that no block is left unrun.
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BOOTSTRAP, bootstrapKey, call, fullVerification, killLeftovers, type Service, startService } from './fault/harness.js';
import { cliOnPath, type DocBlock, runLine, shellBlocks } from './helpers/doc-blocks.js';
import { runCli } from './helpers/process.js';

const DOC = 'docs/operations.md';
const RUN_HERE = ['backup', 'rotate', 'collect', 'metrics', 'verify', 'restore', 'rebuild', 'upgrade', 'continuity', 'supply', 'accept'];

describe('docs/operations.md, every command as written', { timeout: 240_000 }, () => {
  let dir: string;
  let bin: string;
  let env: Record<string, string>;
  const blocks = shellBlocks(DOC);
  const block = (name: string): DocBlock => {
    const b = blocks.find((x) => x.name === name);
    if (!b) throw new Error(`${DOC} has no sh block named ${name}`);
    return b;
  };
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-ops-doc-'));
    bin = cliOnPath(dir);
    const keyFile = path.join(dir, 'service-key.pem');
    fs.writeFileSync(keyFile, generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    env = {
      ...BOOTSTRAP,
      LEDGER_DATA_DIR: path.join(dir, 'data'),
      LEDGER_SIGNING_KEY_FILE: keyFile,
      LEDGER_SECRETS_KEY_FILE: path.join(dir, 'secrets.key'),
      LEDGER_OPERATOR_TOKEN: 'operator-token-of-the-operations-doc-test-0123456789',
      CHECKPOINT_INTERVAL_MS: '50',
      BACKUP_DIR: path.join(dir, 'backups'),
      LOG_LEVEL: 'info',
    };
    fs.writeFileSync(env.LEDGER_SECRETS_KEY_FILE as string, `${Buffer.alloc(32, 3).toString('base64')}\n`, { mode: 0o600 });
  });
  afterAll(() => {
    killLeftovers();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Runs a block's lines in order; each must exit 0. Returns their output. */
  async function runBlock(name: string, more: Record<string, string> = {}, after?: (line: string) => Promise<void>): Promise<string> {
    let out = '';
    for (const line of block(name).lines) {
      const r = await runLine(line, { cwd: dir, env: { ...env, ...more }, bin });
      expect(r.code, `${name}: ${line}\n${r.stdout}\n${r.stderr}`).toBe(0);
      out += r.stdout;
      await after?.(line);
    }
    return out;
  }

  it('has a test for every sh block', () => {
    const names = blocks.map((b) => b.name);
    expect(names.filter((n) => n !== 'postgres' && n !== 'citus').sort()).toEqual([...RUN_HERE].sort());
    expect(names.filter((n) => n === 'postgres')).toHaveLength(2);
    expect(names.filter((n) => n === 'citus')).toHaveLength(3);
    for (const b of blocks) expect(b.lines.length, b.name).toBeGreaterThan(0);
  });

  let svc: Service;
  let apiKey = '';
  let companyId = '';
  const vars = () => ({ URL: svc.url, API_KEY: apiKey, COMPANY_ID: companyId });
  async function grow(n: number, tag: string): Promise<number> {
    for (let i = 0; i < n; i += 100) expect((await call(`${svc.url}/api/v1/logs/batch`, 'POST', { logs: Array.from({ length: Math.min(100, n - i) }, (_, j) => ({ event_type: 'tool.called', data: { tag, i: i + j } })) }, { 'x-api-key': apiKey })).status).toBe(200);
    let size = 0;
    await vi.waitFor(
      async () => {
        const st = (await call(`${svc.url}/api/v1/integrity/status`, 'GET', undefined, { 'x-api-key': apiKey })).json();
        expect(st.checkpoint?.tree_size).toBe(st.head.seq + 1);
        size = st.checkpoint.tree_size;
      },
      { timeout: 20_000, interval: 50 },
    );
    return size;
  }
  const verified = async () => expect(await fullVerification(svc.url, apiKey, svc.logs)).toMatchObject({ violation_count: 0, chain_status: 'valid' });

  it('backs up under load, rotates the key, collects what was seen, reads metrics and verifies, as written', async () => {
    svc = await startService(env);
    apiKey = await bootstrapKey(svc.url);
    await grow(300, 'before rotation');
    const rotated = await runBlock('rotate', vars());
    expect(rotated).toMatch(/rotated|active/i);
    await grow(300, 'before backup');
    const load = grow(300, 'during backup');
    const out = await runBlock('backup', vars());
    await load;
    expect(out).toMatch(/manifest signed by key/);
    expect(fs.existsSync(path.join(env.BACKUP_DIR as string, 'nightly', 'manifest.sig'))).toBe(true);
    await grow(200, 'after backup');
    await runBlock('collect', vars());
    expect(fs.readFileSync(path.join(dir, 'seen-checkpoint.txt'), 'utf8')).toMatch(/^audit-ledger\.local\/[0-9a-f-]+\n\d+\n/);
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'keys.json'), 'utf8')).transitions).toHaveLength(1);
    companyId = /^audit-ledger\.local\/(\S+)\n/.exec(fs.readFileSync(path.join(dir, 'seen-checkpoint.txt'), 'utf8'))?.[1] as string;
    expect(await runBlock('metrics', vars())).toMatch(/^audit_ledger_continuity_holds 0$/m);
    const report = await runBlock('verify', vars(), async (line) => {
      if (!line.includes('-X POST')) return;
      await vi.waitFor(async () => expect((await call(`${svc.url}/api/v1/integrity/report`, 'GET', undefined, { 'x-api-key': apiKey })).status).toBe(200), { timeout: 60_000, interval: 100 });
    });
    expect(report).toContain('"violation_count":0');
    await svc.stop();
  });

  it('restores the lost data directory and rebuilds from exports alone, as written; upgrades', async () => {
    // The disk is gone: the data directory (and its checkpoint marks) with it.
    fs.renameSync(env.LEDGER_DATA_DIR as string, path.join(dir, 'lost-data'));
    const restored = await runBlock('restore', vars());
    expect(restored).toMatch(/\d+ supplied/);
    svc = await startService(env);
    await verified();
    await svc.stop();

    // Rebuilt from exports alone: the active key's private half was sealed in the lost database, so
    // the rebuilt service starts with a key file of its own (docs/operations.md says so).
    const rebuiltDir = path.join(dir, 'rebuilt');
    const out = await runBlock('rebuild', { ...vars(), LEDGER_DATA_DIR: rebuiltDir });
    expect(out).toContain('rebuilt');
    const { LEDGER_SIGNING_KEY_FILE: _old, ...withoutKey } = env;
    const rebuiltEnv = { ...withoutKey, LEDGER_DATA_DIR: rebuiltDir };
    // Users do not come back from exports: the first admin is created as the doc says.
    const created = await runCli(['users', 'create', '--company', companyId, '--email', BOOTSTRAP.LEDGER_BOOTSTRAP_EMAIL, '--password-stdin'], rebuiltEnv, BOOTSTRAP.LEDGER_BOOTSTRAP_PASSWORD);
    expect(created.code, created.stderr).toBe(0);
    svc = await startService(rebuiltEnv);
    const rebuiltKey = await bootstrapKey(svc.url);
    const first = (await call(`${svc.url}/api/v1/logs?limit=1&order=asc`, 'GET', undefined, { 'x-api-key': rebuiltKey })).json();
    expect(first.items[0].seq).toBe(0);
    const report = await fullVerification(svc.url, rebuiltKey, svc.logs);
    expect(report).toMatchObject({ violation_count: 0, chain_status: 'valid' });
    expect((await call(`${svc.url}/api/v1/health/ready`, 'GET')).status).toBe(200);
    await svc.stop();

    const upgrade = await runBlock('upgrade', vars());
    expect(upgrade).toContain('nothing to apply');
  });

  it('after a careless restore, holds the company until the operator supplies the entries or accepts the loss, as written', async () => {
    svc = await startService(env);
    await grow(50, 'before the careless restore');
    await runBlock('collect', vars());
    await svc.stop();
    const careless = async () => {
      // The backup's database copied over the live one by hand: behind the service's own marks.
      fs.copyFileSync(path.join(env.BACKUP_DIR as string, 'nightly', 'ledger.db'), path.join(env.LEDGER_DATA_DIR as string, 'ledger.db'));
      for (const f of ['-wal', '-shm']) fs.rmSync(path.join(env.LEDGER_DATA_DIR as string, `ledger.db${f}`), { force: true });
      svc = await startService(env);
      const refused = await call(`${svc.url}/api/v1/logs`, 'POST', { event_type: 'x', data: {} }, { 'x-api-key': apiKey });
      expect(refused.status, refused.body).toBe(503);
      expect(refused.json().code).toBe('ledger_behind_checkpoint');
    };
    await careless();
    expect(await runBlock('continuity', vars())).toContain('HOLDING');
    expect(await runBlock('supply', vars())).toContain('the hold is lifted');
    await vi.waitFor(async () => expect((await call(`${svc.url}/api/v1/logs`, 'POST', { event_type: 'x', data: {} }, { 'x-api-key': apiKey })).status).toBe(200), { timeout: 20_000, interval: 200 });
    await verified();
    await grow(50, 'after supply');
    await svc.stop();

    await careless();
    await runBlock('accept', vars());
    await vi.waitFor(async () => expect((await call(`${svc.url}/api/v1/logs`, 'POST', { event_type: 'x', data: {} }, { 'x-api-key': apiKey })).status).toBe(200), { timeout: 20_000, interval: 200 });
    const trail = (await call(`${svc.url}/api/v1/logs?event_type=ledger.continuity_loss_accepted`, 'GET', undefined, { 'x-api-key': apiKey })).json();
    expect(trail.items).toHaveLength(1);
    await verified();
    expect(await runBlock('continuity', vars())).toMatch(/loss_accepted .*asynchronous standby promoted/);
    await svc.stop();
  });
});
