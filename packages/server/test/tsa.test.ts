// RFC 3161 timestamps of checkpoints (issue 32, part 4) against a real Time Stamping Authority:
// OpenSSL's `openssl ts -reply` behind a small HTTP endpoint, with a CA and a timestamping
// certificate made here. The service has each company's latest checkpoint timestamped, keeps the
// token, and puts the newest one in evidence bundles with a consistency proof; OpenSSL's own
// `openssl ts -verify` accepts the token for the checkpoint note's SHA-256, and
// audit-ledger-verify --tsa-ca accepts the bundle with the TSA's CA pinned, and refuses another
// CA, a changed token, and a token moved onto another checkpoint. Both stores.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseCheckpointText, parseNote } from '@audit-ledger/core';
import { STORE_KINDS } from './helpers/env.js';
import { problem, startTestApp, type TestApp } from './helpers/app.js';
import { ingestBatch } from './helpers/ledger.js';
import { runCli } from './helpers/process.js';

const run = promisify(execFile);

/** A CA, a timestamping certificate it issued, and OpenSSL's TSA configuration, in `dir`. */
async function makeTsa(dir: string, name: string): Promise<{ caFile: string; certFile: string; config: string }> {
  const f = (n: string) => path.join(dir, `${name}-${n}`);
  await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('ca.key'), '-out', f('ca.crt'), '-days', '30', '-subj', `/CN=${name} CA`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  await run('openssl', ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('tsa.key'), '-out', f('tsa.csr'), '-subj', `/CN=${name}`]);
  fs.writeFileSync(f('ext.cnf'), 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=critical,timeStamping\n');
  await run('openssl', ['x509', '-req', '-in', f('tsa.csr'), '-CA', f('ca.crt'), '-CAkey', f('ca.key'), '-CAcreateserial', '-out', f('tsa.crt'), '-days', '30', '-extfile', f('ext.cnf')]);
  fs.writeFileSync(f('serial'), '01\n');
  fs.writeFileSync(
    f('tsa.cnf'),
    [
      '[ tsa ]',
      'default_tsa = tsa_config1',
      '[ tsa_config1 ]',
      `serial = ${f('serial')}`,
      'crypto_device = builtin',
      `signer_cert = ${f('tsa.crt')}`,
      `certs = ${f('ca.crt')}`,
      `signer_key = ${f('tsa.key')}`,
      'signer_digest = sha256',
      'default_policy = 1.2.3.4.1',
      'digests = sha256, sha384, sha512',
      'accuracy = secs:1',
      'ordering = yes',
      'tsa_name = yes',
      'ess_cert_id_chain = no',
      'ess_cert_id_alg = sha256',
      '',
    ].join('\n'),
  );
  return { caFile: f('ca.crt'), certFile: f('tsa.crt'), config: f('tsa.cnf') };
}

describe.each(STORE_KINDS)('RFC 3161 timestamps of checkpoints on %s', (kind) => {
  let tmp: string;
  let tsa: Awaited<ReturnType<typeof makeTsa>>;
  let other: Awaited<ReturnType<typeof makeTsa>>;
  let server: http.Server;
  let requests = 0;
  /** Set false, the TSA answers 503 (down): no newer token comes, so what the bundles carry is known. */
  let tsaUp = true;
  let t: TestApp;
  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'al-tsa-'));
    [tsa, other] = await Promise.all([makeTsa(tmp, 'tsa'), makeTsa(tmp, 'other')]);
    // The TSA: each request answered by `openssl ts -reply`, as RFC 3161 §3.4 (HTTP) carries it.
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        if (!tsaUp) return void res.writeHead(503).end('down');
        const n = ++requests;
        const query = path.join(tmp, `q${n}.tsq`);
        const reply = path.join(tmp, `r${n}.tsr`);
        fs.writeFileSync(query, Buffer.concat(chunks));
        try {
          await run('openssl', ['ts', '-reply', '-config', tsa.config, '-queryfile', query, '-out', reply]);
          res.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end(fs.readFileSync(reply));
        } catch (err) {
          res.writeHead(500).end(String(err));
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    t = await startTestApp(kind, { env: { TSA_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/tsa`, WITNESS_ALLOW_PRIVATE: 'true', TSA_INTERVAL_SECONDS: '1', CHECKPOINT_INTERVAL_MS: '0' } });
  });
  afterAll(async () => {
    await t.close();
    await new Promise<void>((r) => server.close(() => r()));
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('timestamps the latest checkpoint at a real TSA; bundles carry the token, OpenSSL and audit-ledger-verify --tsa-ca accept it, and refuse it moved or changed', async () => {
    const acct = await t.newAccount();
    const key = (await t.createKey(acct.token, 100_000)).key;
    const api = { 'x-api-key': key };
    const trace = '0b9e3c52-8d5e-4a47-9f0e-2a3c1d9b7e10';
    expect((await ingestBatch(t, key, Array.from({ length: 20 }, (_, i) => ({ event_type: 'tool.called', trace_id: trace, data: { i } })))).statusCode).toBe(200);
    // The background pass (every TSA_INTERVAL_SECONDS) timestamps the checkpoint of size 20.
    let stamped: { tree_size: number; token: string; tsa: string; gen_time: string } | undefined;
    await vi.waitFor(
      async () => {
        const res = await t.inject({ method: 'GET', url: '/api/v1/integrity/timestamps', headers: api });
        stamped = (res.json().items as Array<typeof stamped>)[0];
        expect(stamped?.tree_size).toBe(20);
      },
      { timeout: 20_000, interval: 50 },
    );
    tsaUp = false;
    const note = (await t.inject({ method: 'GET', url: '/api/v1/integrity/checkpoint?tree_size=20', headers: api })).json().note as string;
    // OpenSSL's own verifier: the token is for SHA-256 of the checkpoint note, signed by the TSA of this CA.
    const tokenFile = path.join(tmp, `${kind}-token.der`);
    fs.writeFileSync(tokenFile, Buffer.from(stamped?.token as string, 'base64'));
    const digest = createHash('sha256').update(note).digest('hex');
    const verified = await run('openssl', ['ts', '-verify', '-token_in', '-in', tokenFile, '-digest', digest, '-CAfile', tsa.caFile, '-untrusted', tsa.certFile]);
    expect(verified.stdout).toContain('Verification: OK');

    // More entries: the bundle's checkpoint is newer than the timestamped one, and proves it extends it.
    expect((await ingestBatch(t, key, Array.from({ length: 5 }, (_, i) => ({ event_type: 'tool.called', trace_id: trace, data: { more: i } })))).statusCode).toBe(200);
    const bundle = (await t.inject({ method: 'GET', url: `/api/v1/exports/evidence?trace_id=${trace}`, headers: api })).json();
    expect(bundle.checkpoint.tree_size).toBeGreaterThanOrEqual(25);
    expect(bundle.timestamp).toMatchObject({ tree_size: stamped?.tree_size ?? -1, token: stamped?.token, checkpoint_note: note, gen_time: stamped?.gen_time });
    if (bundle.timestamp.tree_size < bundle.checkpoint.tree_size) expect(bundle.timestamp.consistency_proof.length).toBeGreaterThan(0);
    const keysFile = path.join(tmp, `${kind}-keys.json`);
    fs.writeFileSync(keysFile, (await t.inject({ method: 'GET', url: '/api/v1/integrity/keys' })).body);
    const verify = async (doc: unknown, more: string[]) => {
      const file = path.join(tmp, `${kind}-bundle-${Math.random().toString(36).slice(2)}.json`);
      fs.writeFileSync(file, JSON.stringify(doc));
      return runCli(['verify-bundle', file, '--public-key', keysFile, ...more], {});
    };
    // The checkpoints signed after the token name it in an extension line (§19), read by the core's parser and by the tiles checkpoint.
    const tokenSha256 = createHash('sha256').update(Buffer.from(stamped?.token as string, 'base64')).digest('hex');
    expect(bundle.checkpoint.note).toContain(`\nrfc3161 20 ${tokenSha256}\n\n`);
    expect(parseCheckpointText(parseNote(bundle.checkpoint.note).text).timestampToken).toEqual({ treeSize: 20, sha256: tokenSha256 });
    expect((await t.inject({ method: 'GET', url: '/api/v1/tlog/checkpoint', headers: api })).body).toContain(`rfc3161 20 ${tokenSha256}\n`);
    const ok = await verify(bundle, ['--tsa-ca', tsa.caFile]);
    expect([ok.code, ok.stdout]).toEqual([0, expect.stringContaining('timestamp: signed at')]);
    expect(ok.stdout).toContain('and its signed checkpoint names this token');
    expect(ok.stdout).toContain(`checkpoint tree size 20 was timestamped at ${stamped?.gen_time}`);
    // Without --tsa-ca the rest verifies, and a note says who signed the timestamp was not checked.
    const unpinned = await verify(bundle, []);
    expect([unpinned.code, unpinned.stdout]).toEqual([0, expect.stringContaining('NOTE timestamp: the document carries an RFC 3161 timestamp')]);
    // Another TSA's CA: refused.
    const wrongCa = await verify(bundle, ['--tsa-ca', other.caFile]);
    expect([wrongCa.code, wrongCa.stdout]).toEqual([1, expect.stringContaining('does not chain to the pinned TSA certificate')]);
    // A changed signature byte: no certificate verifies it.
    const token = Buffer.from(bundle.timestamp.token, 'base64');
    token[token.length - 3] = (token[token.length - 3] as number) ^ 0x01;
    const changed = await verify({ ...bundle, timestamp: { ...bundle.timestamp, token: token.toString('base64') } }, ['--tsa-ca', tsa.caFile]);
    expect([changed.code, changed.stdout]).toEqual([1, expect.stringContaining('no certificate in the token verifies its signature')]);
    // The token moved onto the bundle's own checkpoint: its imprint is another note's.
    const moved = await verify({ ...bundle, timestamp: { ...bundle.timestamp, checkpoint_note: bundle.checkpoint.note, consistency_proof: [] } }, ['--tsa-ca', tsa.caFile]);
    expect([moved.code, moved.stdout]).toEqual([1, expect.stringContaining('its imprint is not SHA-256 of the checkpoint note')]);
    // A timestamped checkpoint the bundle's tree does not extend (no proof): refused.
    const unproven = await verify({ ...bundle, timestamp: { ...bundle.timestamp, consistency_proof: [] } }, ['--tsa-ca', tsa.caFile]);
    expect(unproven.code).toBe(bundle.timestamp.tree_size === bundle.checkpoint.tree_size ? 0 : 1);
    // A period report carries the same timestamp, inside what the service signed, and verifies the same way.
    const admin = { authorization: `Bearer ${acct.token}` };
    const now = t.clock.now();
    const report = await t.inject({ method: 'POST', url: '/api/v1/compliance/reports', headers: admin, payload: { from: new Date(now - 86_400_000).toISOString(), to: new Date(now + 60_000).toISOString() } });
    expect(report.statusCode, report.body).toBe(201);
    const doc = (await t.inject({ method: 'GET', url: `/api/v1/compliance/reports/${report.json().id}`, headers: admin })).json();
    expect(doc.report.checkpoints.timestamp).toMatchObject({ tree_size: 20, token: stamped?.token });
    const reportOk = await verify(doc, ['--tsa-ca', tsa.caFile]);
    expect([reportOk.code, reportOk.stdout]).toEqual([0, expect.stringContaining('timestamp: signed at')]);
    expect((await verify(doc, ['--tsa-ca', other.caFile])).code).toBe(1);
    // The TSA stayed down: the service kept the one token, and retries on the next pass.
    expect((await t.inject({ method: 'GET', url: '/api/v1/integrity/timestamps', headers: api })).json().items).toHaveLength(1);
    // The listing is bounded and validated like any other.
    problem(await t.inject({ method: 'GET', url: '/api/v1/integrity/timestamps?limit=0', headers: api }), 400, 'validation_failed');
  });
});
