// The first hour of a new user (issue 27): an old Node stops at once with what to do, before any
// install or build work, and a second `npm start` with nothing changed does not build again.
// The old Node is the machine's own (/usr/bin/node, Node 20 here and in CI); this test fails,
// never skips, when there is none.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const REPO = path.join(import.meta.dirname, '..', '..', '..');
const MESSAGE = 'audit-ledger: Node ≥ 22.14 required';
const HINT = '`source .ci/use-node.sh` gets Node 24';

/** A Node older than 22.14 and its npm: the machine's own. */
function oldNode(): { bin: string; version: string } {
  const bin = '/usr/bin';
  const version = execFileSync(path.join(bin, 'node'), ['--version'], { encoding: 'utf8' }).trim();
  const [major, minor] = version.slice(1).split('.').map(Number) as [number, number];
  if (major > 22 || (major === 22 && minor >= 14)) throw new Error(`${bin}/node is ${version}: this test needs a Node older than 22.14 there`);
  return { bin, version };
}

/** The environment with the old Node first on PATH (as a new user's shell would have it). */
function withOldNode(bin: string): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('npm_') && k !== 'NODE_OPTIONS'));
  return { ...env, PATH: `${bin}:${process.env.PATH ?? ''}` };
}

describe('an old Node', () => {
  it('the audit-ledger command stops at once with the message, before loading anything', () => {
    const { bin, version } = oldNode();
    const r = spawnSync(path.join(bin, 'node'), [path.join(REPO, 'packages/server/bin/audit-ledger.js'), 'serve'], { encoding: 'utf8', env: { ...withOldNode(bin), LEDGER_DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'al-old-')) } });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`${MESSAGE} (this is Node ${version.slice(1)}); ${HINT}`);
    expect(r.stdout).toBe('');
  });

  it('the compiled CLI module started directly (as a systemd unit or a container does) stops at once too, and creates no ledger', () => {
    const { bin, version } = oldNode();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-old-'));
    const r = spawnSync(path.join(bin, 'node'), [path.join(REPO, 'packages/server/dist/src/cli.js'), 'serve'], { encoding: 'utf8', env: { ...withOldNode(bin), LEDGER_DATA_DIR: dataDir } });
    expect(r.signal).toBeNull();
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`${MESSAGE} (this is Node ${version.slice(1)}); ${HINT}`);
    expect(fs.readdirSync(dataDir)).toEqual([]);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('npm start stops before building anything: npm refuses by devEngines, and the build script by its own check', () => {
    const { bin, version } = oldNode();
    const r = spawnSync(path.join(bin, 'npm'), ['start'], { cwd: REPO, encoding: 'utf8', env: withOldNode(bin) });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('EBADDEVENGINES');
    expect(r.stderr).toContain(`Invalid semver version ">=22.14" does not match "${version}"`);
    expect(r.stdout + r.stderr).not.toContain('tsc');
    // An npm that does not know devEngines (before 10.9) runs the build script, which stops first.
    const build = spawnSync(path.join(bin, 'node'), [path.join(REPO, 'scripts/build.mjs')], { cwd: REPO, encoding: 'utf8', env: withOldNode(bin) });
    expect(build.status).toBe(1);
    expect(build.stderr).toContain(`${MESSAGE} (this is Node ${version.slice(1)}); ${HINT}`);
  });

  it('npm ci stops before installing anything (devEngines: node >=22.14, onFail error)', () => {
    const { bin } = oldNode();
    // A copy of what npm ci reads, so the checkout's node_modules is never touched.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-ci-'));
    try {
      for (const f of ['package.json', 'package-lock.json']) fs.copyFileSync(path.join(REPO, f), path.join(dir, f));
      for (const p of fs.readdirSync(path.join(REPO, 'packages'))) {
        fs.mkdirSync(path.join(dir, 'packages', p), { recursive: true });
        fs.copyFileSync(path.join(REPO, 'packages', p, 'package.json'), path.join(dir, 'packages', p, 'package.json'));
      }
      const r = spawnSync(path.join(bin, 'npm'), ['ci', '--no-audit', '--no-fund', '--offline'], { cwd: dir, encoding: 'utf8', env: withOldNode(bin) });
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain('EBADDEVENGINES');
      expect(r.stderr).toContain(`required: { name: 'node', version: '>=22.14', onFail: 'error' }`);
      expect(fs.existsSync(path.join(dir, 'node_modules'))).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('npm start with nothing changed', () => {
  it('does not build again: the second build says it is current', () => {
    // The first is a no-op too under the test suites, whose global setup built just before; after an edit it builds.
    const build = () => spawnSync(process.execPath, [path.join(REPO, 'scripts/build.mjs')], { cwd: REPO, encoding: 'utf8' });
    expect(build().status).toBe(0);
    const again = build();
    expect(again.status, again.stderr).toBe(0);
    expect(again.stdout).toBe('build: current (nothing it is built from changed since the last build; `npm run build -- --force` rebuilds)\n');
  });
});
