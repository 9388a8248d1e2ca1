// Webhook URLs and the address policy: loopback, private and link-local targets refused when
// they are registered and again when a delivery connects (DNS rebinding), IPv4-mapped and NAT64
// addresses judged by what they reach, and the pinned connection to the address the lookup gave.
import { describe, expect, it, vi } from 'vitest';
import { isPrivateAddress } from '../src/egress/address-policy.js';
import { problem, startTestApp } from './helpers/app.js';
import { receiver } from './helpers/webhook-receiver.js';

describe('webhook URLs without WEBHOOK_ALLOW_PRIVATE', () => {
  it('refuses loopback, private and link-local addresses', async () => {
    const t = await startTestApp('sqlite');
    try {
      const acct = await t.newAccount();
      for (const url of ['http://127.0.0.1:9/x', 'http://10.0.0.5/x', 'https://192.168.1.1/x', 'http://169.254.169.254/latest', 'http://[::1]/x', 'http://localhost/x']) {
        const p = problem(await t.inject({ method: 'POST', url: '/api/v1/webhooks/endpoints', headers: { authorization: `Bearer ${acct.token}` }, payload: { url, event_types: ['hitl.rejected'] } }), 400, 'validation_failed');
        expect(p.detail, url).toMatch(/private, loopback or link-local/);
      }
    } finally {
      await t.close();
    }
  });
});

describe('the address rules and the pinned connection', () => {
  it('classifies IPv4, IPv6, IPv4-mapped and NAT64 addresses by the address they reach', () => {
    for (const ip of ['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700::1111', '::ffff:8.8.8.8', '::ffff:808:808', '64:ff9b::8.8.8.8', '2002:808:808::1']) expect(isPrivateAddress(ip), ip).toBe(false);
    for (const ip of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.0.1', '169.254.169.254', '0.0.0.0', '::1', '::', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a00:1', '64:ff9b::10.0.0.1',
      // Issue 42 (21): IPv4-compatible, IPv4-translated, local-use NAT64, 6to4 of loopback, site-local, Teredo of a private client, documentation.
      '::127.0.0.1', '::ffff:0:7f00:1', '64:ff9b:1::7f00:1', '2002:7f00:1::1', '2002:a00:1::1', 'fec0::1', '2001:0:4136:e378:8000:63bf:f5ff:fffe', '2001:db8::1'])
      expect(isPrivateAddress(ip), ip).toBe(true);
  });

  it('accepts public IPv4 webhook URLs, refuses mapped private ones', async () => {
    const t = await startTestApp('sqlite');
    try {
      const acct = await t.newAccount();
      const create = (url: string) => t.inject({ method: 'POST', url: '/api/v1/webhooks/endpoints', headers: { authorization: `Bearer ${acct.token}` }, payload: { url, event_types: ['hitl.rejected'] } });
      for (const url of ['https://8.8.8.8/hook', 'https://[::ffff:8.8.8.8]/hook', 'https://[2606:4700::1111]/hook']) expect((await create(url)).statusCode, url).toBe(201);
      for (const url of ['http://[::ffff:127.0.0.1]/x', 'http://[::ffff:a00:1]/x', 'http://[::127.0.0.1]/x', 'http://[::ffff:0:7f00:1]/x', 'http://[64:ff9b:1::7f00:1]/x', 'http://[2002:7f00:1::1]/x', 'http://[fec0::1]/x']) problem(await create(url), 400, 'validation_failed');
    } finally {
      await t.close();
    }
  });

  it('DNS rebinding: a name that was public when registered and private when connecting is never connected to', async () => {
    const rx = await receiver();
    const port = new URL(rx.url).port;
    let calls = 0;
    // Public for the registration check, loopback ever after.
    const resolveHost = async () => (calls++ === 0 ? [{ address: '93.184.216.34', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]);
    const t = await startTestApp('sqlite', { resolveHost, env: { CHECKPOINT_INTERVAL_MS: '0' } });
    try {
      const acct = await t.newAccount();
      const created = await t.inject({ method: 'POST', url: '/api/v1/webhooks/endpoints', headers: { authorization: `Bearer ${acct.token}` }, payload: { url: `http://rebind.example:${port}/hook`, event_types: ['hitl.rejected'] } });
      expect(created.statusCode, created.body).toBe(201);
      expect((await t.inject({ method: 'POST', url: '/api/v1/hitl/reject', headers: { authorization: `Bearer ${acct.token}` }, payload: { reviewer: 'r', rejection_reason: 'x' } })).statusCode).toBe(201);
      const deliveries = () => t.inject({ method: 'GET', url: `/api/v1/webhooks/endpoints/${created.json().id}/deliveries`, headers: { authorization: `Bearer ${acct.token}` } });
      await vi.waitFor(async () => expect(JSON.stringify((await deliveries()).json())).toContain('refused'), { timeout: 5000, interval: 20 });
      expect(JSON.stringify((await deliveries()).json())).toContain('127.0.0.1 at connection time');
      expect(rx.got).toHaveLength(0);
      expect(calls).toBeGreaterThanOrEqual(2);
    } finally {
      await t.close();
      await rx.close();
    }
  });

  it('connects to the address its own lookup gave (a name resolved by the injected resolver reaches the receiver)', async () => {
    const rx = await receiver();
    const port = new URL(rx.url).port;
    const t = await startTestApp('sqlite', { resolveHost: async () => [{ address: '127.0.0.1', family: 4 }], env: { WEBHOOK_ALLOW_PRIVATE: 'true', CHECKPOINT_INTERVAL_MS: '0' } });
    try {
      const acct = await t.newAccount();
      const created = await t.inject({ method: 'POST', url: '/api/v1/webhooks/endpoints', headers: { authorization: `Bearer ${acct.token}` }, payload: { url: `http://receiver.invalid:${port}/hook`, event_types: ['hitl.rejected'] } });
      expect(created.statusCode, created.body).toBe(201);
      await t.inject({ method: 'POST', url: '/api/v1/hitl/reject', headers: { authorization: `Bearer ${acct.token}` }, payload: { reviewer: 'r', rejection_reason: 'x' } });
      await vi.waitFor(() => expect(rx.got).toHaveLength(1), { timeout: 5000, interval: 20 });
      expect(rx.got[0]?.headers.host).toBe(`receiver.invalid:${port}`);
    } finally {
      await t.close();
      await rx.close();
    }
  });
});
