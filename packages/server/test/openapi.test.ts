// The OpenAPI document is generated from the route schemas and the docs page is served.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';

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
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['apiKeyAuth', 'apiKeyBearer', 'bearerAuth']);
    const paths = doc.paths as Record<string, Record<string, { security?: unknown; requestBody?: unknown; responses: Record<string, unknown> }>>;
    expect(Object.keys(paths).every((p) => p.startsWith('/api/v1/'))).toBe(true);
    expect(paths['/api/v1/auth/login']?.post?.security).toBeUndefined();
    expect(paths['/api/v1/auth/login']?.post?.requestBody).toBeDefined();
    expect(paths['/api/v1/auth/api_keys']?.post?.security).toEqual([{ bearerAuth: [] }]);
    expect(paths['/api/v1/auth/me']?.get?.security).toEqual([{ bearerAuth: [] }, { apiKeyAuth: [] }, { apiKeyBearer: [] }]);
    expect(Object.keys(paths['/api/v1/auth/api_keys']?.post?.responses ?? {})).toEqual(expect.arrayContaining(['201', '400', '401', '403', '409']));
    expect(paths['/api/v1/auth/api_keys/{id}']?.delete).toBeDefined();
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
