// Witnesses and the Time Stamping Authority are under the one address policy of every outbound
// call (egress/address-policy.ts, issue 42 item 21): a private, loopback or link-local address,
// given literally or reached through a name, is refused before any byte is sent unless
// WITNESS_ALLOW_PRIVATE=true, and the refusal names the setting. On a service started as an
// operator would (the integrity status shows the witness's refusal), and on the TSA's pass.
import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { witnessVerifierKey } from '@audit-ledger/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { rawPublicKey } from '../src/crypto/signing.js';
import { operatorFetch, type Resolver } from '../src/egress/address-policy.js';
import { Timestamper } from '../src/witness/timestamper.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ingestBatch } from './helpers/ledger.js';

/** A name that resolves to a private address, as a rebinding or misconfigured DNS would. */
const privateDns: Resolver = async (host) => (host.endsWith('.internal.example') ? [{ address: '10.20.30.40', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]);

describe('witnesses and the TSA are under the one address policy', () => {
  let server: http.Server;
  let port = 0;
  let requests = 0;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      requests++;
      req.resume();
      res.writeHead(500).end('should not be reached');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('a witness on a loopback address is refused by a running service, no request sent, the refusal in the integrity status', async () => {
    const vkey = witnessVerifierKey('witness.test/local', rawPublicKey(generateKeyPairSync('ed25519').publicKey));
    const t: TestApp = await startTestApp('sqlite', { env: { WITNESSES: `http://127.0.0.1:${port} ${vkey}`, WITNESS_QUORUM: '0', CHECKPOINT_INTERVAL_MS: '0' } });
    try {
      const acct = await t.newAccount();
      const { key } = await t.createKey(acct.token);
      const before = requests;
      expect((await ingestBatch(t, key, [{ event_type: 'step', data: {} }])).statusCode).toBe(200);
      const status = async () => (await t.app.inject({ method: 'GET', url: '/api/v1/integrity/status', headers: { authorization: `Bearer ${acct.token}` } })).json();
      await vi.waitFor(async () => expect((await status()).witnesses.items[0]?.last_error ?? '').toContain('WITNESS_ALLOW_PRIVATE=true'), { timeout: 15_000, interval: 50 });
      const item = (await status()).witnesses.items[0];
      expect(item.last_error).toContain('refused');
      expect(item.last_error).toContain('127.0.0.1');
      expect(requests).toBe(before);
    } finally {
      await t.close();
    }
  });

  it('the TSA: a literal private address and a name resolving to one are refused before any request; WITNESS_ALLOW_PRIVATE=true reaches it', async () => {
    const t: TestApp = await startTestApp('sqlite', { env: { CHECKPOINT_INTERVAL_MS: '0' } });
    try {
      const acct = await t.newAccount();
      const { key } = await t.createKey(acct.token);
      expect((await ingestBatch(t, key, [{ event_type: 'step', data: {} }])).statusCode).toBe(200);
      await vi.waitFor(async () => expect(await t.store.ledger.latestCheckpoint(acct.companyId)).toBeTruthy(), { timeout: 10_000, interval: 20 });
      const pass = async (tsaUrl: string, allowPrivate: boolean) => {
        const warnings: string[] = [];
        const stamper = new Timestamper({ tsaUrl, send: operatorFetch(allowPrivate, privateDns), witnessStore: t.store.witnessStore, ledger: t.store.ledger, accounts: t.store.accounts, clock: t.clock.now, warn: (obj) => warnings.push(String(obj.err)) });
        await stamper.pass();
        return warnings;
      };
      const before = requests;
      for (const url of [`http://127.0.0.1:${port}/tsa`, `http://[::ffff:127.0.0.1]:${port}/tsa`, `http://tsa.internal.example:${port}/tsa`]) {
        const warnings = await pass(url, false);
        expect(warnings.length, url).toBeGreaterThan(0);
        for (const w of warnings) expect(w, url).toMatch(/refused: .*WITNESS_ALLOW_PRIVATE=true/);
      }
      expect(requests).toBe(before);
      // Lifted: the request reaches the (loopback) TSA, which answers 500 here.
      const lifted = await pass(`http://127.0.0.1:${port}/tsa`, true);
      expect(requests).toBeGreaterThan(before);
      expect(lifted.join('\n')).toContain('HTTP 500');
      expect(await t.store.witnessStore.latestTimestamp(acct.companyId, `http://127.0.0.1:${port}/tsa`)).toBeFalsy();
    } finally {
      await t.close();
    }
  });
});
