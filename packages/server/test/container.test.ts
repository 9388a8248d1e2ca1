// The container files: the Dockerfile (linted with dockerfile-utils, the validator of the VS Code
// Docker language server, plus the rules this project promises: multi-stage, production
// dependencies only, a non-root user, a health check on /health/ready), compose.yaml (valid
// against the Compose Specification's JSON schema, with the service, PostgreSQL and Redis, and
// only variables the config module knows), and .env.example (exactly what the config module
// generates). Where a container engine runs, the image is built and started; this machine has
// none (no Docker daemon), so that test is reported as skipped, not passed.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import { validate } from 'dockerfile-utils';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, envExample } from '../src/kernel/config.js';

const ROOT = path.join(import.meta.dirname, '..', '..', '..');
const read = (f: string) => fs.readFileSync(path.join(ROOT, f), 'utf8');
const KNOWN = new Set(CONFIG_VARIABLES.map((v) => v.name));
const engine = spawnSync('docker', ['info'], { stdio: 'ignore' }).status === 0;

describe('container files', () => {
  it('the Dockerfile lints clean and keeps its promises', () => {
    const text = read('Dockerfile');
    // LSP severities: 1 error, 2 warning (3 information, 4 hint).
    const problems = validate(text).filter((d) => d.severity === 1 || d.severity === 2);
    expect(problems.map((d) => `line ${d.range.start.line + 1}: ${d.message}`)).toEqual([]);
    const stages = text.split(/^FROM /m).slice(1);
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const final = stages.at(-1) as string;
    expect(final).toMatch(/^USER node$/m);
    expect(final).not.toMatch(/^RUN npm (ci|install)(?!.*--omit=dev)/m);
    expect(stages[0]).toMatch(/npm prune --omit=dev/);
    expect(final).toMatch(/^HEALTHCHECK .*\n?.*\/api\/v1\/health\/ready/m);
    expect(final).toMatch(/^CMD \["node", "packages\/server\/bin\/audit-ledger.js", "serve"\]$/m);
    // Every variable it sets is one the service reads.
    for (const name of [...final.matchAll(/^\s*([A-Z_]+)=/gm)].map((m) => m[1] as string)) if (name !== 'NODE_ENV') expect(KNOWN, name).toContain(name);
    expect(read('.dockerignore')).toMatch(/node_modules/);
  });

  it('compose.yaml is a valid Compose file with the service, PostgreSQL and Redis', () => {
    const doc = parse(read('compose.yaml')) as { services: Record<string, { environment?: Record<string, string>; depends_on?: Record<string, unknown>; healthcheck?: unknown; image?: string; build?: string }> };
    // The Compose Specification's own schema (test/fixtures/compose-spec/README.md says where from).
    const schema = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, 'fixtures', 'compose-spec', 'compose-spec.json'), 'utf8'));
    delete schema.$schema; // draft-07, Ajv's default
    const ajv = new Ajv({ strict: false, allErrors: true });
    const ok = ajv.validate(schema, doc);
    expect(ok, ajv.errorsText(ajv.errors)).toBe(true);
    expect(Object.keys(doc.services).sort()).toEqual(['audit-ledger', 'postgres', 'redis']);
    const svc = doc.services['audit-ledger'] as NonNullable<(typeof doc.services)[string]>;
    expect(svc.build).toBe('.');
    expect(Object.keys(svc.depends_on ?? {}).sort()).toEqual(['postgres', 'redis']);
    for (const name of Object.keys(svc.environment ?? {})) expect(KNOWN, name).toContain(name);
    expect(svc.environment?.DATABASE_URL).toMatch(/^postgres:\/\/.*@postgres:5432\//);
    expect(svc.environment?.REDIS_URL).toBe('redis://redis:6379');
    expect(doc.services.postgres?.healthcheck).toBeDefined();
    expect(doc.services.redis?.healthcheck).toBeDefined();
  });

  it('.env.example lists every variable, exactly as the config module generates it (audit-ledger env-example > .env.example)', () => {
    expect(read('.env.example')).toBe(envExample());
    const listed = [...read('.env.example').matchAll(/^# ([A-Z0-9_]+)=/gm)].map((m) => m[1]);
    expect(listed).toEqual(CONFIG_VARIABLES.map((v) => v.name));
  });

  it.skipIf(!engine)('builds the image and answers /api/v1/health/ready from a container (needs a container engine)', () => {
    execFileSync('docker', ['build', '-t', 'audit-ledger:test', ROOT], { stdio: 'inherit', timeout: 900_000 });
    const id = execFileSync('docker', ['run', '-d', '-p', '127.0.0.1::8080', 'audit-ledger:test'], { encoding: 'utf8' }).trim();
    try {
      const port = execFileSync('docker', ['port', id, '8080'], { encoding: 'utf8' }).trim().split(':').at(-1);
      execFileSync('sh', ['-c', `for i in $(seq 1 60); do curl -fsS http://127.0.0.1:${port}/api/v1/health/ready && exit 0; sleep 1; done; exit 1`], { stdio: 'inherit' });
    } finally {
      execFileSync('docker', ['rm', '-f', id]);
    }
  }, 1_000_000);
});
