// TLS_CERT_FILE + TLS_KEY_FILE: the service serves HTTPS itself.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/kernel/config.js';
import { type RunningService, startService } from '../src/server.js';

function get(mod: typeof https | typeof http, url: string, options: https.RequestOptions = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    mod.get(url, options, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}

describe('TLS', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-tls-'));
  const cert = path.join(dir, 'cert.pem');
  const key = path.join(dir, 'key.pem');
  let service: RunningService;

  beforeAll(async () => {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
      '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', key, '-out', cert,
    ], { stdio: 'ignore' });
    const config = loadConfig({ PORT: '0', LEDGER_DATA_DIR: dir, TLS_CERT_FILE: cert, TLS_KEY_FILE: key, LOG_LEVEL: 'silent' });
    service = await startService(config);
  });
  afterAll(async () => {
    await service.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves HTTPS with the configured certificate', async () => {
    expect(service.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const res = await get(https, `${service.url}/api/v1/openapi.json`, { ca: fs.readFileSync(cert) });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).openapi).toBe('3.1.0');
  });

  it('is not reachable over plain HTTP, and an untrusted client refuses it', async () => {
    const plain = await get(http, service.url.replace('https:', 'http:') + '/api/v1/openapi.json').catch((e: Error) => e);
    expect(plain instanceof Error || plain.status === 400).toBe(true);
    await expect(get(https, `${service.url}/api/v1/openapi.json`)).rejects.toThrow(/self[- ]signed|unable to verify/i);
  });
});
