// The OpenAPI document is generated from the route schemas and the docs page is served. The
// committed docs/openapi.json is exactly what the service serves (`npm run openapi` rewrites it),
// and the SDK's types are what openapi-typescript makes of it, without its examples, at build time
// (scripts/api-types.mjs); every operation has an operationId, a description, explicit security
// and examples that match its own schemas; every problem answer is one shared Problem schema.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';

const ROOT = path.join(import.meta.dirname, '..', '..', '..');

describe('OpenAPI document and API reference', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite');
  });
  afterAll(() => t.close());

  it('serves an OpenAPI 3.1 document describing every route with its credentials', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['apiKeyAuth', 'apiKeyBearer', 'bearerAuth', 'metricsToken', 'operatorToken']);
    const paths = doc.paths as Record<string, Record<string, { security?: unknown; requestBody?: unknown; responses: Record<string, unknown> }>>;
    expect(Object.keys(paths).every((p) => p.startsWith('/api/v1/'))).toBe(true);
    expect(paths['/api/v1/auth/login']?.post?.security).toEqual([]);
    expect(paths['/api/v1/auth/login']?.post?.requestBody).toBeDefined();
    expect(paths['/api/v1/auth/api_keys']?.post?.security).toEqual([{ bearerAuth: [] }]);
    expect(paths['/api/v1/auth/me']?.get?.security).toEqual([{ bearerAuth: [] }, { apiKeyAuth: [] }, { apiKeyBearer: [] }]);
    expect(Object.keys(paths['/api/v1/auth/api_keys']?.post?.responses ?? {})).toEqual(expect.arrayContaining(['201', '400', '401', '403', '409']));
    expect(paths['/api/v1/auth/api_keys/{id}']?.delete).toBeDefined();
  });

  it('every route\'s validators and serializers compile (the service compiles each on its first use, so a broken schema would otherwise fail only its first request)', async () => {
    const doc = (await t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const operations = Object.values(doc.paths as Record<string, object>).reduce((n, methods) => n + Object.keys(methods).length, 0);
    // Each operation has at least one schema (a body, parameters or an answer); most have several.
    expect(t.app.compileRouteSchemas()).toBeGreaterThan(operations);
  });

  it('is the committed docs/openapi.json, and the SDK types are generated from it (run `npm run openapi` after changing a route)', async () => {
    const served = (await t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const committed = JSON.parse(fs.readFileSync(path.join(ROOT, 'docs', 'openapi.json'), 'utf8'));
    expect(served, 'docs/openapi.json is stale: run npm run openapi').toEqual(committed);
    // The build generated the SDK's types from it (exit 1 when they are not what it gives), leaving
    // out the examples: one type per schema, a few hundred KB, not the document's 1.8 MB of old
    // (405 KB with the governance operations of issue 29, whose shapes are shared components).
    execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'api-types.mjs'), '--check'], { stdio: 'pipe' });
    const types = fs.readFileSync(path.join(ROOT, 'packages', 'sdk', 'src', 'api-types.ts'), 'utf8');
    expect(types).not.toContain('@example');
    expect(types).toContain('appendLog: {');
    // (455 KB with the log stream operations of issue 31, their shapes shared components too; 471 KB with the tlog-tiles ones of issue 32, 492 KB with its agent keys.)
    expect(Buffer.byteLength(types)).toBeLessThan(500_000);
    expect(execFileSync('git', ['ls-files', 'packages/sdk/src/api-types.ts'], { cwd: ROOT, encoding: 'utf8' }), 'a build output, not in git').toBe('');
  });

  it('describes every problem answer as what the service sends: application/problem+json, one shared Problem schema', async () => {
    const doc = (await t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(doc.components.schemas.Problem.properties.code.enum).toContain('validation_failed');
    let problems = 0;
    for (const [p, item] of Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema?: unknown }> }> }>>)) {
      for (const [m, op] of Object.entries(item)) {
        for (const [status, answer] of Object.entries(op.responses)) {
          // Health and readiness answer 503 with the health report itself (what orchestrators read).
          if (!/^[45]/.test(status) || (p.startsWith('/api/v1/health') && status === '503')) continue;
          problems++;
          expect(answer.content, `${m} ${p} ${status}`).toEqual({ 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } });
        }
      }
    }
    expect(problems).toBeGreaterThan(200);
    // And it is what a problem answer is.
    const res = await t.inject({ method: 'POST', url: '/api/v1/logs', headers: { 'content-type': 'application/json' }, payload: '{' });
    expect(res.statusCode).toBe(401);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('gives every operation an operationId, a description, explicit security, and examples that match its schemas', async () => {
    const doc = (await t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats.default(ajv);
    interface Media {
      schema?: object;
      example?: unknown;
    }
    interface Op {
      operationId: string;
      description?: string;
      security?: unknown;
      requestBody?: { content?: Record<string, Media> };
      responses: Record<string, { content?: Record<string, Media> }>;
    }
    const ids = new Set<string>();
    let examples = 0;
    for (const [p, item] of Object.entries(doc.paths as Record<string, Record<string, Op>>)) {
      for (const [method, op] of Object.entries(item)) {
        const where = `${method.toUpperCase()} ${p}`;
        expect(op.operationId, where).toMatch(/^[a-z][A-Za-z]+$/);
        expect(ids.has(op.operationId), `${where}: operationId repeats`).toBe(false);
        ids.add(op.operationId);
        expect(op.description?.length ?? 0, `${where}: description`).toBeGreaterThan(20);
        expect(Array.isArray(op.security), `${where}: security`).toBe(true);
        const checkExample = (media: Media | undefined, what: string) => {
          if (media?.example === undefined || media.schema === undefined) return;
          examples++;
          // Shared shapes are references into the document's components (http/openapi.ts shareNamedSchemas).
          const validate = ajv.compile({ allOf: [media.schema], components: doc.components });
          expect(validate(media.example), `${where} ${what} example: ${ajv.errorsText(validate.errors)}`).toBe(true);
        };
        checkExample(op.requestBody?.content?.['application/json'], 'request');
        for (const [status, r] of Object.entries(op.responses)) if (status.startsWith('2')) checkExample(r.content?.['application/json'], `response ${status}`);
        const hasExample = Object.values(op.responses).some((r) => Object.values(r.content ?? {}).some((m) => m.example !== undefined));
        // An answer with no body (204) or a redirect (302: single sign-on) has nothing to show.
        expect(hasExample || op.responses['204'] !== undefined || op.responses['302'] !== undefined, `${where}: a response example`).toBe(true);
      }
    }
    expect(ids.size).toBeGreaterThanOrEqual(45);
    expect(examples).toBeGreaterThan(45);
    expect(doc.paths['/api/v1/health'].get.security).toEqual([]);
    expect(doc.paths['/api/v1/metrics'].get.security).toEqual([{}, { metricsToken: [] }]);
    expect(doc.paths['/api/v1/integrity/keys/rotate'].post.security).toEqual([{ operatorToken: [] }]);
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
    expect(Object.keys(doc.webhooks).sort()).toEqual([
      'api_key.created', 'api_key.revoked', 'approval.decided', 'approval.escalated', 'approval.requested', 'approval.violated', 'forensics.anomaly_detected', 'hitl.rejected',
      'incident.opened', 'incident.updated', 'integrity.verification_completed', 'integrity.violation_detected', 'log_stream.failed', 'policy.version_created', 'webhook_endpoint.disabled',
    ]);
    expect(doc.paths['/api/v1/logs'].post.requestBody.content['application/json'].schema.anyOf).toEqual([{ required: ['data'] }, { required: ['payload'] }]);
  });

  it('points GET / and GET /api/v1 to the docs', async () => {
    for (const url of ['/', '/api/v1', '/api/v1/']) {
      const res = await t.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.json()).toMatchObject({ name: 'audit-ledger', docs: '/api/v1/docs', openapi: '/api/v1/openapi.json', health: '/api/v1/health' });
    }
  });

  it('serves a browsable API reference page', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/v1/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).toContain('swagger-ui');
  });
});
