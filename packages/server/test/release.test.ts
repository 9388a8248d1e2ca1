// `npm run release`, as a user gets it: the tarballs, their checksums and the SBOM, each tarball
// complete (LICENSE, README, source maps whose sources it ships, every export target), installed
// into an empty directory with nothing but those files and their public dependencies; then the
// service runs from there (console included), the SDK logs to it and verifies what it logged with
// the pinned keys, and audit-ledger-verify verifies an evidence bundle it made.
import { type ChildProcessWithoutNullStreams, execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogWatcher } from './helpers/process.js';

const ROOT = path.join(import.meta.dirname, '..', '..', '..');

/** The export targets of a package.json `exports` (every condition). */
function targets(exports: unknown): string[] {
  if (typeof exports === 'string') return [exports];
  if (exports && typeof exports === 'object') return Object.values(exports).flatMap(targets);
  return [];
}

describe('npm run release', () => {
  let out: string;
  let app: string;
  let service: ChildProcessWithoutNullStreams | undefined;
  beforeAll(() => {
    out = fs.mkdtempSync(path.join(os.tmpdir(), 'al-release-'));
    app = fs.mkdtempSync(path.join(os.tmpdir(), 'al-installed-'));
    execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'release.mjs'), '--out', out], { cwd: ROOT, stdio: 'pipe' });
  }, 240_000);
  afterAll(async () => {
    // The service writes its last files (checkpoint marks) as it stops: wait for it before removing them.
    if (service && service.exitCode === null) {
      const exited = new Promise((resolve) => service?.once('exit', resolve));
      service.kill('SIGTERM');
      await exited;
    }
    for (const d of [out, app]) if (d) fs.rmSync(d, { recursive: true, force: true });
  });

  it('gives four tarballs with checksums that verify, an SBOM, and install instructions', () => {
    const sums = fs.readFileSync(path.join(out, 'SHA256SUMS'), 'utf8').trim().split('\n');
    expect(sums.map((l) => l.split('  ')[1])).toEqual(['audit-ledger-core-0.1.0.tgz', 'audit-ledger-verify-0.1.0.tgz', 'audit-ledger-sdk-0.1.0.tgz', 'audit-ledger-0.1.0.tgz']);
    for (const line of sums) {
      const [hash, file] = line.split('  ') as [string, string];
      expect(createHash('sha256').update(fs.readFileSync(path.join(out, file))).digest('hex'), file).toBe(hash);
    }
    const sbom = JSON.parse(fs.readFileSync(path.join(out, 'sbom.cdx.json'), 'utf8')) as { bomFormat: string; components: Array<{ name: string }> };
    expect(sbom.bomFormat).toBe('CycloneDX');
    const names = sbom.components.map((c) => c.name);
    for (const dep of ['better-sqlite3', 'fastify', '@noble/hashes']) expect(names).toContain(dep);
    expect(fs.readFileSync(path.join(out, 'INSTALL.txt'), 'utf8')).toContain('sha256sum -c SHA256SUMS');
  });

  it('each tarball ships LICENSE, its README, source maps that resolve, and every file its exports name', () => {
    for (const tgz of fs.readdirSync(out).filter((f) => f.endsWith('.tgz'))) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-tgz-'));
      try {
        execFileSync('tar', ['-xzf', path.join(out, tgz), '-C', dir]);
        const pkg = path.join(dir, 'package');
        expect(fs.readFileSync(path.join(pkg, 'LICENSE'), 'utf8'), tgz).toContain('Apache License');
        expect(fs.existsSync(path.join(pkg, 'README.md')), tgz).toBe(true);
        const manifest = JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8')) as { exports?: unknown; bin?: Record<string, string> };
        for (const t of [...targets(manifest.exports), ...Object.values(manifest.bin ?? {})]) expect(fs.existsSync(path.join(pkg, t)), `${tgz}: ${t}`).toBe(true);
        const maps = (execFileSync('find', [pkg, '-name', '*.map'], { encoding: 'utf8' }).trim().split('\n')).filter(Boolean);
        expect(maps.length, tgz).toBeGreaterThan(0);
        for (const m of maps) {
          const map = JSON.parse(fs.readFileSync(m, 'utf8')) as { sources: string[]; sourcesContent?: Array<string | null> };
          map.sources.forEach((s, i) => expect(typeof map.sourcesContent?.[i] === 'string' || fs.existsSync(path.resolve(path.dirname(m), s)), `${tgz}: ${path.relative(pkg, m)} → ${s}`).toBe(true));
        }
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
  });

  it('installs into an empty directory; the service runs from there with its console, the SDK logs to it and verifies, and audit-ledger-verify checks its bundle', async () => {
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'installed', private: true, type: 'module' }));
    const tarballs = fs.readdirSync(out).filter((f) => f.endsWith('.tgz')).map((f) => path.join(out, f));
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(NODE_OPTIONS|VITEST|DATABASE_URL|REDIS_URL|LEDGER_|PORT|HOST)/.test(k)));
    const install = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...tarballs], { cwd: app, encoding: 'utf8', env });
    expect(install.status, install.stderr).toBe(0);
    const bin = (name: string) => path.join(app, 'node_modules', '.bin', name);

    service = spawn(bin('audit-ledger'), ['serve'], {
      cwd: app,
      env: { ...env, PORT: '0', LEDGER_DATA_DIR: path.join(app, 'data'), CHECKPOINT_INTERVAL_MS: '0', LOG_LEVEL: 'info', LEDGER_BOOTSTRAP_EMAIL: 'admin@example.com', LEDGER_BOOTSTRAP_PASSWORD: 'correct horse battery' },
      stdio: 'pipe',
    });
    const url = String((await new LogWatcher(service).waitFor((l) => l.msg === 'audit-ledger listening')).url);
    const page = await fetch(`${url}/console/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const script = /src="(\/console\/assets\/index-[^"]+\.js)"/.exec(html)?.[1];
    expect((await fetch(`${url}${String(script)}`)).status).toBe(200);

    const login = (await (await fetch(`${url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'admin@example.com', password: 'correct horse battery' }) })).json()) as { access_token: string };
    const key = ((await (await fetch(`${url}/api/v1/auth/api_keys`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${login.access_token}` }, body: JSON.stringify({ name: 'agents', rate_limit_per_minute: 6000 }) })).json()) as { key: string }).key;
    expect(key).toMatch(/^alk_/);
    fs.writeFileSync(path.join(app, 'keys.json'), await (await fetch(`${url}/api/v1/integrity/keys`)).text());

    // The SDK, from the installed tarball: log, close, read back, verify with the pinned keys.
    const agent = `
      import fs from 'node:fs';
      import { createClient, verifyReceipt } from '@audit-ledger/sdk';
      const ledger = createClient({ baseUrl: '${url}/api/v1', apiKey: '${key}' });
      const trace_id = '6f1c2a4e-3b5d-4c7e-9f10-2a3b4c5d6e7f';
      await ledger.log({ event_type: 'tool.called', trace_id, data: { tool: 'refund' } });
      await ledger.close({ deadlineMs: 30000 });
      const publicKeys = fs.readFileSync('keys.json', 'utf8');
      let n = 0;
      for await (const entry of ledger.exportEntries({ trace_id })) { if (!verifyReceipt(entry, { publicKeys }).ok) process.exit(1); n++; }
      console.log('verified', n);`;
    const sdk = spawnSync(process.execPath, ['--input-type=module', '-e', agent], { cwd: app, encoding: 'utf8', env });
    expect(sdk.stdout.trim(), sdk.stderr).toBe('verified 1');

    // The auditor's verifier, from the installed tarball, on a bundle from the installed service.
    fs.writeFileSync(path.join(app, 'evidence.json'), await (await fetch(`${url}/api/v1/exports/evidence?trace_id=6f1c2a4e-3b5d-4c7e-9f10-2a3b4c5d6e7f`, { headers: { 'x-api-key': key } })).text());
    const verify = spawnSync(bin('audit-ledger-verify'), ['evidence.json', '--public-key', 'keys.json'], { cwd: app, encoding: 'utf8', env });
    expect(verify.status, verify.stdout + verify.stderr).toBe(0);
    expect(verify.stdout).toContain('VERIFIED: every check holds');
  }, 240_000);
});
