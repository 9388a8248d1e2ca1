// The README, followed literally: its shell examples (quick start, sending events, the online key
// rotation, investigating a trace, and the auditor's pin/collect/verify) run in bash, in order,
// against the built service, with only the address changed; then docs/integrations.md's (the
// verifier on the collected files, and the OTLP exporters configured by its environment block). A step that uses something never
// defined, or a command that is not on PATH, fails here before a reader meets it.
import { type ChildProcessWithoutNullStreams, execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogWatcher } from './helpers/process.js';

/** The repository root: the README's commands run from there. */
const ROOT = path.join(import.meta.dirname, '..', '..', '..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
/** The service starts with it, and the reader's shell has the same value (as "Verifying entries" says). */
const OPERATOR_TOKEN = 'readme-operator-token-0123456789abcdef';

/** The ```sh blocks of a document (docs/…), in order. */
function docShellBlocks(doc: string): string[] {
  return [...fs.readFileSync(path.join(ROOT, doc), 'utf8').matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((m) => m[1] as string);
}

/**
 * After `docs/integrations.md`'s OTLP block has set the environment: one span through the exporter
 * the block names, configured by nothing but that environment (as a real agent's would be).
 */
const exportOneSpan = (exporterPackage: string, name: string) => `(cd "${path.join(ROOT, 'packages', 'server')}" && node --input-type=module -e "
const { OTLPTraceExporter } = await import('${exporterPackage}');
const { SimpleSpanProcessor, TracerProvider } = await import('@opentelemetry/sdk-trace');
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: new OTLPTraceExporter() })] });
provider.getTracer('docs').startSpan('${name}').end();
await provider.forceFlush();
await provider.shutdown();
")`;

/** The ```sh blocks of a README section (indented ones too), dedented. */
function shellBlocks(section: string): string[] {
  const start = README.indexOf(`# ${section}`);
  if (start < 0) throw new Error(`README has no section ${section}`);
  const end = README.slice(start + 2).search(/\n#{2,3} /);
  const text = end < 0 ? README.slice(start) : README.slice(start, start + 2 + end);
  return [...text.matchAll(/^( *)```sh\n([\s\S]*?)^ *```/gm)].map((m) => (m[2] as string).split('\n').map((l) => l.slice((m[1] as string).length)).join('\n'));
}

describe('the README, followed literally', () => {
  let child: ChildProcessWithoutNullStreams;
  let url: string;
  let work: string;
  beforeAll(async () => {
    // `npm start` builds (npm run build), then runs the built CLI: the same here, on a fresh data directory.
    execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'pipe' });
    // Inside the project (so `npx audit-ledger` finds this package's command), outside git.
    fs.mkdirSync(path.join(ROOT, 'node_modules', '.cache'), { recursive: true });
    work = fs.mkdtempSync(path.join(ROOT, 'node_modules', '.cache', 'readme-'));
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(DATABASE_URL|REDIS_URL|LEDGER_|TLS_|PORT|HOST)/.test(k)));
    child = spawn(process.execPath, [path.join(ROOT, 'packages', 'server', 'dist', 'src', 'cli.js'), 'serve'], {
      cwd: work,
      env: { ...env, PORT: '0', LEDGER_DATA_DIR: path.join(work, 'data'), CHECKPOINT_INTERVAL_MS: '0', LOG_LEVEL: 'info', LEDGER_OPERATOR_TOKEN: OPERATOR_TOKEN },
      stdio: 'pipe',
    });
    url = String((await new LogWatcher(child).waitFor((l) => l.msg === 'audit-ledger listening')).url);
  }, 120_000);
  afterAll(async () => {
    // The service writes its last files (checkpoint marks) as it stops: wait for it before removing them.
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child?.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('runs every example of the quick start, sending events, verifying entries (an online key rotation), investigating a trace and verifying as an auditor', () => {
    const blocks = [
      ...shellBlocks('Quick start').filter((b) => !b.includes('npm start')),
      ...shellBlocks('Sending events'),
      ...shellBlocks('Verifying entries'),
      ...shellBlocks('Investigating a trace'),
      ...shellBlocks('How to verify your logs as an auditor'),
    ];
    expect(blocks.length).toBeGreaterThanOrEqual(6);
    // Then docs/integrations.md on the files the auditor collected: the installed verifier on PATH,
    // and the OTLP environment (with this service's address and the key the README created) driving
    // the real exporters, once with each header form it shows.
    const [verifyBlock, otlpBlock, ...moreBlocks] = docShellBlocks('docs/integrations.md');
    expect(moreBlocks).toEqual([]);
    const otlp = String(otlpBlock).replaceAll('https://ledger.example.com', url).replaceAll('alk_…', '$KEY');
    const bearer = otlp.replace(/^export OTEL_EXPORTER_OTLP_HEADERS=.*$/m, 'export OTEL_EXPORTER_OTLP_HEADERS="authorization=Bearer%20$KEY"');
    expect(otlp).toContain('OTEL_EXPORTER_OTLP_HEADERS="x-api-key=$KEY"');
    expect(String(otlpBlock)).toContain('# or authorization=Bearer%20alk_…');
    const docs = [
      String(verifyBlock),
      otlp,
      exportOneSpan('@opentelemetry/exporter-trace-otlp-proto', 'docs-span-protobuf-x-api-key'),
      bearer,
      exportOneSpan('@opentelemetry/exporter-trace-otlp-http', 'docs-span-json-bearer'),
      `curl -s ${url}/api/v1/exports/logs?format=jsonl -H "X-API-Key: $KEY" | grep -o '"docs-span-[a-z-]*"' | sort -u`,
    ];
    const script = ['set -euo pipefail', ...blocks].join('\n').replaceAll('http://127.0.0.1:8080', url) + `\n${docs.join('\n')}`;
    const PATH = `${path.join(ROOT, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH ?? ''}`;
    const run = spawnSync('bash', ['-c', script], { cwd: work, encoding: 'utf8', timeout: 120_000, env: { ...process.env, PATH, CI: 'true', LEDGER_OPERATOR_TOKEN: OPERATOR_TOKEN } });
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toContain('created user admin@example.com (admin) in company "acme"');
    expect(run.stdout).toMatch(/"log_id":"[0-9a-f-]{36}"/);
    // What the README shows is what a literal run answers.
    expect(run.stdout).toContain('"seq":2,');
    const shown = /# → \{"session_id":"…","trace_id":"6f1c2a4e-…",("detected":true,"root_cause_type":"STALE_CONTEXT",)\n#\s+("description":".*",)\n#\s+("confidence":0\.9,)/.exec(README);
    expect(shown, 'the root cause the README shows').not.toBeNull();
    expect(run.stdout).toContain(`${String(shown?.[1])}${String(shown?.[2])}${String(shown?.[3])}`);
    // The key was rotated online between the first events and the investigation; the auditor's
    // pinned keys file verifies entries on both sides of the rotation.
    expect(run.stdout).toMatch(/active signing key is now [0-9a-f]{16} \(was [0-9a-f]{16}, retired at /m);
    expect(run.stdout).toMatch(/OK {3}key transition [0-9a-f]{16} → [0-9a-f]{16} at /m);
    // Twice from the README, twice from docs/integrations.md.
    expect(run.stdout.match(/^VERIFIED: every check holds$/gm)).toHaveLength(4);
    // Both spans arrived, through both exporters and both header forms.
    expect(run.stdout).toContain('"docs-span-json-bearer"\n"docs-span-protobuf-x-api-key"\n');
    expect(run.stdout).toMatch(/^OK {3}4 entries: every hash, signature and inclusion proof verifies$/m);
  }, 180_000);
});
