// The published packages, as a user gets them: `npm pack` of @audit-ledger/core,
// @audit-ledger/verify and @audit-ledger/sdk, installed in an empty directory outside the workspace, and the verify
// command run there on an evidence bundle this service made. That process never loads the server
// or a native module: the directory holds neither (asserted), and the command runs with a fresh
// node that has only what was installed.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ingestBatch } from './helpers/ledger.js';

const PACKAGES = path.join(import.meta.dirname, '..', '..');
const ROOT = path.join(PACKAGES, '..');

describe('the packed packages, installed in an empty directory', () => {
  let t: TestApp;
  let dir: string;
  beforeAll(async () => {
    // The tarballs carry dist/: build first, as the suites' global setup does.
    execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'pipe' });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-packed-'));
    t = await startTestApp('sqlite', { env: { CHECKPOINT_INTERVAL_MS: '0' } });
  }, 180_000);
  afterAll(async () => {
    await t?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('npm pack of core, verify and sdk installs with no native build; audit-ledger-verify verifies a bundle the service made, and the SDK a receipt from it', async () => {
    const tarballs = ['core', 'verify', 'sdk'].map((p) => {
      const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dir], { cwd: path.join(PACKAGES, p), encoding: 'utf8' });
      const [info] = JSON.parse(out) as Array<{ filename: string; files: Array<{ path: string }> }>;
      const files = (info as { files: Array<{ path: string }> }).files.map((f) => f.path);
      expect(files, p).toContain('dist/index.js');
      expect(files, p).toContain('dist/index.d.ts');
      expect(files, p).toContain('README.md');
      return path.join(dir, (info as { filename: string }).filename);
    });
    const app = path.join(dir, 'auditor');
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'auditor', private: true, type: 'module' }));
    // --ignore-scripts: nothing may need an install script (no native build).
    const install = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', ...tarballs], { cwd: app, encoding: 'utf8' });
    expect(install.status, install.stderr).toBe(0);
    const installed = fs.readdirSync(path.join(app, 'node_modules'));
    expect(installed).not.toContain('better-sqlite3');
    expect(installed).not.toContain('audit-ledger');
    expect(fs.readdirSync(path.join(app, 'node_modules', '@audit-ledger')).sort()).toEqual(['core', 'sdk', 'verify']);

    // A bundle made by the service, and the key the auditor pinned.
    const acct = await t.newAccount();
    const { key } = await t.createKey(acct.token, 1_000_000);
    const trace = randomUUID();
    expect((await ingestBatch(t, key, Array.from({ length: 12 }, (_, i) => ({ event_type: 'tool.called', trace_id: trace, data: { i } })))).statusCode).toBe(200);
    const bundle = (await t.inject({ method: 'GET', url: `/api/v1/exports/evidence?trace_id=${trace}`, headers: { 'x-api-key': key } })).body;
    const keys = JSON.parse((await t.inject({ method: 'GET', url: '/api/v1/integrity/keys' })).body) as { items: Array<{ public_key_pem: string }> };
    fs.writeFileSync(path.join(app, 'bundle.json'), bundle);
    fs.writeFileSync(path.join(app, 'key.pem'), keys.items.map((k) => k.public_key_pem).join(''));

    // A plain node (no source condition, no tsx), in the auditor's directory.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('NODE_OPTIONS') && !k.startsWith('VITEST')));
    const bin = path.join(app, 'node_modules', '.bin', 'audit-ledger-verify');
    const ok = spawnSync(bin, ['bundle.json', '--public-key', 'key.pem'], { cwd: app, encoding: 'utf8', env });
    expect(ok.status, `${ok.stdout}\n${ok.stderr}`).toBe(0);
    expect(ok.stdout).toContain('VERIFIED: every check holds');
    expect(ok.stdout).toContain('OK   12 entries');

    fs.writeFileSync(path.join(app, 'bundle.json'), bundle.replace('"i":7', '"i":8'));
    const bad = spawnSync(bin, ['bundle.json', '--public-key', 'key.pem'], { cwd: app, encoding: 'utf8', env });
    expect(bad.status).toBe(1);
    expect(bad.stdout).toContain('NOT VERIFIED');
    // --version answers (not an unknown option's exit 2), and the help names every kind of file it checks.
    const version = spawnSync(bin, ['--version'], { cwd: app, encoding: 'utf8', env });
    expect([version.status, version.stdout.trim()]).toEqual([0, '0.1.0']);
    const help = spawnSync(bin, ['--help'], { cwd: app, encoding: 'utf8', env });
    expect(help.status).toBe(0);
    for (const s of ['evidence bundle', 'signed period report', 'JSON Lines export', '-V, --version']) expect(help.stdout.replace(/\s+/g, ' ')).toContain(s);

    // The core as a library, in the same directory: the entry's hash recomputes.
    const lib = spawnSync(process.execPath, ['--input-type=module', '-e', "import { entryHash } from '@audit-ledger/core'; import fs from 'node:fs'; const b = JSON.parse(fs.readFileSync('bundle.json', 'utf8').replace('\"i\":8', '\"i\":7')); console.log(b.entries.every((x) => entryHash(x.entry) === x.entry.hash));"], { cwd: app, encoding: 'utf8', env });
    expect(lib.stdout.trim(), lib.stderr).toBe('true');

    // The SDK, installed from its tarball: a receipt from the bundle verifies with the pinned key.
    const sdk = spawnSync(process.execPath, ['--input-type=module', '-e', "import { verifyReceipt } from '@audit-ledger/sdk'; import fs from 'node:fs'; const b = JSON.parse(fs.readFileSync('bundle.json', 'utf8').replace('\"i\":8', '\"i\":7')); console.log(JSON.stringify(verifyReceipt(b.entries[0].entry, { publicKeys: fs.readFileSync('key.pem', 'utf8') })));"], { cwd: app, encoding: 'utf8', env });
    expect(JSON.parse(sdk.stdout || '{}'), sdk.stderr).toEqual({ ok: true, failures: [], problems: [] });
  }, 240_000);
});
