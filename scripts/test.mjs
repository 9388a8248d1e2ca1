// `npm test` and `npm run test:all`: the tiers of the test suite (docs/architecture.md, "Tests").
//
//   npm test           builds, then runs the linters (ESLint, Redocly on docs/openapi.json,
//                      dependency-cruiser) beside the core and service tiers of Vitest
//   npm run test:all   the same, then the process tier, the citus tier (suites run again on a
//                      Citus cluster) and the browser tier, each a Vitest run of its own (what CI
//                      runs, on Node 24; Node 22.14 runs `npm test`)
//
// Every step runs even when an earlier one failed, so one run shows every failure; the exit code
// is 1 if any failed. The linters' output is printed once each is done (Vitest's as it goes).
import '../packages/server/bin/check-node.js';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

const root = path.resolve(import.meta.dirname, '..');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const all = process.argv.includes('--all');

const LINTERS = [
  ['eslint', [bin('eslint'), '.']],
  ['openapi lint', [bin('redocly'), 'lint', 'docs/openapi.json', '--format=summary'], { REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }],
  ['dependency rules', [bin('depcruise'), 'packages', '--config', '.dependency-cruiser.cjs']],
];
const VITEST = bin('vitest');
const reports = fs.mkdtempSync(path.join(os.tmpdir(), 'audit-ledger-test-'));

/** A Vitest run that also writes a JSON report, read for the summary's list of failed tests. */
function vitest(name, projects) {
  const report = path.join(reports, `${name.replace(/\W+/g, '-')}.json`);
  const args = ['run', ...projects.flatMap((p) => ['--project', p]), '--reporter=default', '--reporter=json', `--outputFile.json=${report}`];
  return run(name, [VITEST, ...args]).then((r) => ({ ...r, report }));
}

/** The failed tests of a Vitest run's JSON report, each with the first line of its error. */
function failures(report) {
  let json;
  try {
    json = JSON.parse(fs.readFileSync(report, 'utf8'));
  } catch {
    return ['(no report: the run ended before writing one)'];
  }
  const out = [];
  for (const file of json.testResults ?? []) {
    const rel = path.relative(root, file.name);
    const failed = (file.assertionResults ?? []).filter((t) => t.status === 'failed');
    if (failed.length === 0 && file.status === 'failed') out.push(`${rel}: ${String(file.message ?? '').split('\n')[0].slice(0, 300)}`);
    for (const t of failed) out.push(`${rel} > ${t.fullName}: ${String(t.failureMessages?.[0] ?? '').split('\n')[0].slice(0, 300)}`);
  }
  return out;
}

/** Runs a command; its output goes through (`inherit`) or is kept to print at the end. */
function run(name, [command, ...args], { env = {}, quiet = false } = {}) {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env }, stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    let output = '';
    child.stdout?.on('data', (d) => (output += d));
    child.stderr?.on('data', (d) => (output += d));
    child.on('close', (code, signal) => resolve({ name, ok: code === 0, code: code ?? signal, output, seconds: (performance.now() - started) / 1000 }));
  });
}

const results = [];
const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.mjs')], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) process.exit(1);

const [unitAndService, ...linters] = await Promise.all([
  vitest('vitest: core and service tiers', ['core', 'core-browser-crypto', 'service']),
  ...LINTERS.map(([name, command, env]) => run(name, command, { env, quiet: true })),
]);
for (const l of linters) {
  console.log(`\n== ${l.name}: ${l.ok ? 'passed' : `FAILED (${l.code})`}`);
  if (!l.ok || process.env.CI) process.stdout.write(l.output);
}
results.push(...linters, unitAndService);

if (all) {
  results.push(await vitest('vitest: process tier', ['process']));
  results.push(await vitest('vitest: citus tier', ['citus']));
  results.push(await vitest('vitest: browser tier', ['browser']));
}

console.log('\n== summary');
for (const r of results) {
  console.log(`${r.ok ? 'passed' : 'FAILED'}  ${r.name} (${r.seconds.toFixed(0)} s)`);
  // The failed tests again, last, so the tail of a long CI log names them.
  if (!r.ok && r.report) for (const f of failures(r.report)) console.log(`        ${f}`);
}
fs.rmSync(reports, { recursive: true, force: true });
process.exit(results.every((r) => r.ok) ? 0 : 1);
