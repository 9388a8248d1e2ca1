// `npm run build` (and so `npm start` and `npm test`): checks the Node version first, then builds
// the workspace (tsc --build, then the console's bundle) unless nothing it is built from changed
// since the last build. "Changed" is a SHA-256 over the contents of every source, test, bench
// and config file of the packages, the root TypeScript configs, package-lock.json and
// docs/openapi.json (about 3 MB, read in tens of milliseconds); the SDK's API types are generated
// from that document first (scripts/api-types.mjs); the digest of the last build is kept in node_modules/.cache, so a
// fresh `npm ci` always builds. `npm run build -- --force` builds regardless.
import '../packages/server/bin/check-node.js';
import { OUTPUT as API_TYPES, apiTypes } from './api-types.mjs';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const STAMP = path.join(root, 'node_modules', '.cache', 'audit-ledger', 'build-digest');
const PACKAGES = ['core', 'verify', 'sdk', 'server', 'console'];
/** What a build must leave behind: with any of them missing, it builds whatever the digest says. */
const OUTPUTS = ['packages/core/dist/index.js', 'packages/verify/dist/index.js', 'packages/sdk/dist/index.js', 'packages/server/dist/src/cli.js', 'packages/console/dist/index.html'];
const SKIP = new Set(['node_modules', 'dist']);
/** Build outputs that live beside the sources (not in git): never an input. */
const GENERATED = new Set([API_TYPES]);

function files(dir) {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (SKIP.has(e.name) || e.name.endsWith('.tsbuildinfo') || GENERATED.has(p)) continue;
    if (e.isDirectory()) out.push(...files(p));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

function digest() {
  const list = [...PACKAGES.flatMap((p) => files(path.join(root, 'packages', p))), ...['tsconfig.json', 'tsconfig.base.json', 'package.json', 'package-lock.json', 'docs/openapi.json', 'scripts/api-types.mjs'].map((f) => path.join(root, f))].sort();
  const h = createHash('sha256');
  for (const f of list) h.update(`${path.relative(root, f)}\0`).update(fs.readFileSync(f)).update('\0');
  return h.digest('hex');
}

/**
 * Removes what tsc emitted for a source that no longer exists (a moved or deleted module): tsc
 * --build never deletes outputs, and a stale module in dist would be packed by `npm run release`
 * and could still be imported. The console's dist is Vite's, emptied by Vite itself.
 */
function removeOrphans() {
  for (const pkg of PACKAGES.filter((p) => p !== 'console')) {
    const base = path.join(root, 'packages', pkg);
    const dist = path.join(base, 'dist');
    if (!fs.existsSync(dist)) continue;
    // The server compiles from its package root (src/, bench/); the others from src/.
    const sourceRoot = pkg === 'server' ? base : path.join(base, 'src');
    for (const f of files(dist)) {
      const m = /^(.*?)\.(d\.ts|js|json)(\.map)?$/.exec(path.relative(dist, f));
      if (!m) continue;
      const stem = path.join(sourceRoot, m[1]);
      const sources = m[2] === 'json' ? [`${stem}.json`] : [`${stem}.ts`, `${stem}.tsx`];
      if (!sources.some((x) => fs.existsSync(x))) fs.rmSync(f);
    }
  }
}

function run(cmd, args, env = process.env) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', shell: process.platform === 'win32', env });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const force = process.argv.includes('--force');
const before = digest();
const current = !force && fs.existsSync(API_TYPES) && OUTPUTS.every((f) => fs.existsSync(path.join(root, f))) && fs.existsSync(STAMP) && fs.readFileSync(STAMP, 'utf8') === before;
if (current) {
  console.log('build: current (nothing it is built from changed since the last build; `npm run build -- --force` rebuilds)');
} else {
  // The SDK's API types from the committed contract, docs/openapi.json (scripts/api-types.mjs).
  const types = await apiTypes();
  if (!fs.existsSync(API_TYPES) || fs.readFileSync(API_TYPES, 'utf8') !== types) fs.writeFileSync(API_TYPES, types);
  run('npx', ['tsc', '--build']);
  removeOrphans();
  // A production bundle whoever runs the build: Vite follows NODE_ENV, and a test runner sets it to
  // `test` (the console then came out unminified, 150 KB instead of 108).
  run('npm', ['run', 'build', '-w', '@audit-ledger/console'], { ...process.env, NODE_ENV: 'production' });
  fs.mkdirSync(path.dirname(STAMP), { recursive: true });
  // The digest taken before building: a file changed during the build makes the next one build again.
  fs.writeFileSync(STAMP, before);
}
