// Independent witnesses (issue 17), with real processes: the cosignature format against the C2SP
// documents' example; a service with two `audit-ledger witness serve` processes gets every
// checkpoint cosigned by both, serves the cosigned note and bundles the verify CLI checks against a
// quorum of named witnesses; and a service whose history is rewritten behind its back is refused
// by both witnesses, visibly (integrity status, metrics). Both stores.
import { generateKeyPairSync, type KeyObject, randomUUID, sign } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { checkpointText, cosignatureKeyId, cosignatureLine, cosignedMessage, parseCosignatureLine, parseNote, parseWitnessKey, toHex, verifierKey, verifyCosignature, witnessVerifierKey } from '@audit-ledger/core';
import { rawPublicKey, signKeyTransition, signNote } from '../src/crypto/signing.js';
import { memoryCustody } from '../src/crypto/custody.js';

const tk = (k: { privateKey: KeyObject; publicKey: KeyObject }) => ({ custody: memoryCustody(k.privateKey), raw: rawPublicKey(k.publicKey) });
import { Witness } from '../src/programs/witness/witness.js';
import { BOOTSTRAP, bootstrapKey, call, killLeftovers, startService } from './fault/harness.js';
import { STORE_KINDS } from './helpers/env.js';
import { LogWatcher, runCli, spawnCli } from './helpers/process.js';
import { createTestDatabase, type TestDatabase } from './helpers/stores.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'audit-ledger-witness-'));
const REPO = path.join(import.meta.dirname, '..', '..', '..');
/** docs/compliance.md's two ```sh blocks: running a witness, and the auditor's quorum check. */
const [DOC_WITNESS, DOC_AUDITOR, ...DOC_MORE] = [...fs.readFileSync(path.join(REPO, 'docs', 'compliance.md'), 'utf8').matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((m) => m[1] as string);
/** The installed commands (`npm ci` links them), as an operator or auditor has them. */
const DOC_ENV = { ...process.env, PATH: `${path.join(REPO, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH ?? ''}` };

describe('cosignature format (C2SP tlog-cosignature, cosignature/v1)', () => {
  // The example of c2sp.org/tlog-cosignature: a checkpoint with a witness cosignature, and the message it signs.
  const example = 'example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n';
  const line = '— witness.example.com/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==';

  it("parses the documents' example line: key id, the big-endian timestamp of their example message, a 64-byte signature", () => {
    const c = parseCosignatureLine(line);
    expect(c).not.toBeNull();
    expect(c?.name).toBe('witness.example.com/w1');
    expect(toHex(c?.keyId as Uint8Array)).toBe('8d66cf3f');
    expect(c?.timestamp).toBe(1679315147);
    expect(c?.signature).toHaveLength(64);
    expect(cosignedMessage(example, 1679315147)).toBe('cosignature/v1\ntime 1679315147\nexample.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n');
  });

  it('signs and verifies: key id SHA-256(name ‖ "\\n" ‖ 0x04 ‖ key)[:4], verifier key type 0x04, tampering fails', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const raw = rawPublicKey(publicKey);
    const name = 'witness.test/w1';
    const vkey = witnessVerifierKey(name, raw);
    expect(parseWitnessKey(vkey)).toEqual({ name, raw });
    const ts = 1_795_000_000;
    const cosig = cosignatureLine(name, raw, ts, sign(null, Buffer.from(cosignedMessage(example, ts)), privateKey));
    expect(parseCosignatureLine(cosig)?.keyId).toEqual(cosignatureKeyId(name, raw));
    expect(verifyCosignature(example, cosig, { name, raw })).toEqual({ ok: true, timestamp: ts });
    expect(verifyCosignature(example.replace('20852163', '20852164'), cosig, { name, raw }).ok).toBe(false);
    expect(verifyCosignature(example, cosig, { name: 'witness.test/w2', raw }).ok).toBe(false);
    expect(() => parseWitnessKey(verifierKey(name, raw))).toThrow(/type must be 0x04/);
  });
});

describe('audit-ledger witness serve', () => {
  it('explains itself with --help and exits 0', async () => {
    const r = await runCli(['witness', 'serve', '--help'], {});
    expect(r.code).toBe(0);
    for (const opt of ['--name', '--logs', '--key-file', '--state', '--port']) expect(r.stdout).toContain(opt);
  });

  it('refuses to start without the logs it follows, saying why', async () => {
    const r = await runCli(['witness', 'serve', '--name', 'w', '--logs', path.join(tmp, 'missing.json'), '--key-file', path.join(tmp, 'k.pem'), '--state', path.join(tmp, 's.db')], {});
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('missing.json');
  });
});

describe('a witness across key rotations', () => {
  it('follows a signed transition only from a key it trusts, then refuses the retired key and cosigns the new one', () => {
    const k1 = generateKeyPairSync('ed25519');
    const k2 = generateKeyPairSync('ed25519');
    const stranger = generateKeyPairSync('ed25519');
    const name = 'audit-ledger.local';
    const origin = `${name}/5b0c3a52-8d5e-4a47-9f0e-2a3c1d9b7e10`;
    let now = Date.parse('2026-03-01T12:00:00.000Z');
    const state = path.join(tmp, `unit-${randomUUID()}.db`);
    const w = new Witness('witness.test/unit', generateKeyPairSync('ed25519').privateKey, generateKeyPairSync('ed25519').publicKey, [{ origin_prefix: `${name}/`, verifier_keys: [verifierKey(name, rawPublicKey(k1.publicKey))] }], state, () => now);
    const root = new Uint8Array(32);
    const note = (key: typeof k1, size: number, at: string) => signNote(checkpointText({ origin, treeSize: size, rootHash: root, timestamp: at }), name, memoryCustody(key.privateKey), rawPublicKey(key.publicKey));
    const add = (old: number, n: string) => w.addCheckpoint(`old ${old}\n\n${n}`);
    expect(add(0, note(k1, 1, '2026-03-01T12:00:00.000Z')).status).toBe(200);
    // Rotation at 12:10: the new key is unknown until the transition is sent.
    const rotation = signKeyTransition(tk(k1), tk(k2), '2026-03-01T12:10:00.000Z');
    expect(add(1, note(k2, 1, '2026-03-01T12:11:00.000Z')).status).toBe(403);
    // A transition from a key it does not trust endorses nothing.
    expect(w.addKeyTransitions(JSON.stringify({ transitions: [signKeyTransition(tk(stranger), tk(k2), '2026-03-01T12:05:00.000Z')] })).body).toContain('0 new keys');
    expect(w.addKeyTransitions(JSON.stringify({ transitions: [rotation] })).body).toContain('1 new key trusted');
    now = Date.parse('2026-03-01T12:11:00.000Z');
    expect(add(1, note(k2, 1, '2026-03-01T12:11:00.000Z')).status).toBe(200);
    // The retired key signs a checkpoint dated after its retirement: refused, and recorded.
    const forged = add(1, note(k1, 1, '2026-03-01T12:20:00.000Z'));
    expect(forged.status).toBe(403);
    expect(forged.body).toContain('key_not_active');
    expect(w.refusals().at(-1)).toMatchObject({ origin, status: 403 });
    // Kept across a restart of the witness (its state file): the new key is still trusted.
    w.close();
    const again = new Witness('witness.test/unit', generateKeyPairSync('ed25519').privateKey, generateKeyPairSync('ed25519').publicKey, [{ origin_prefix: `${name}/`, verifier_keys: [verifierKey(name, rawPublicKey(k1.publicKey))] }], state, () => now);
    expect(again.addCheckpoint(`old 1\n\n${note(k2, 1, '2026-03-01T12:30:00.000Z')}`).status).toBe(200);
    again.close();
  });
});

describe.each(STORE_KINDS)('witnesses with real processes (%s)', (kind) => {
  let db: TestDatabase;
  const children: Array<{ kill: () => void }> = [];
  beforeAll(async () => {
    db = await createTestDatabase(kind);
  });
  afterAll(async () => {
    killLeftovers();
    for (const c of children) c.kill();
    await db.drop();
  });

  async function startWitness(name: string, logsFile: string): Promise<{ url: string; vkey: string }> {
    const dir = path.join(tmp, `${kind}-${name.replace(/\W/g, '_')}`);
    fs.mkdirSync(dir, { recursive: true });
    const child = spawnCli(['witness', 'serve', '--name', name, '--logs', logsFile, '--key-file', path.join(dir, 'key.pem'), '--state', path.join(dir, 'state.db'), '--port', '0'], {});
    children.push({ kill: () => child.kill('SIGKILL') });
    const up = await new LogWatcher(child).waitFor((l) => l.msg === 'witness listening');
    return { url: String(up.url), vkey: String(up.verifier_key) };
  }

  it('after an online key rotation the witness follows the signed transition by itself and cosigns the new key\'s checkpoints, without a restart', async () => {
    const keyFile = path.join(tmp, `${kind}-rot-service-key.pem`);
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    fs.writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    const logsFile = path.join(tmp, `${kind}-rot-logs.json`);
    fs.writeFileSync(logsFile, JSON.stringify({ logs: [{ origin_prefix: 'audit-ledger.local/', verifier_keys: [verifierKey('audit-ledger.local', rawPublicKey(publicKey))] }] }));
    const w = await startWitness('witness.test/rot', logsFile);
    const rotDb = await createTestDatabase(kind);
    const operator = 'operator-token-0123456789-abcdefghij';
    const env = {
      LEDGER_DATA_DIR: rotDb.dataDir,
      ...(rotDb.databaseUrl ? { DATABASE_URL: rotDb.databaseUrl } : {}),
      ...BOOTSTRAP,
      LEDGER_SIGNING_KEY_FILE: keyFile,
      LEDGER_OPERATOR_TOKEN: operator,
      CHECKPOINT_INTERVAL_MS: '100',
      WITNESSES: `${w.url} ${w.vkey}`,
      WITNESS_ALLOW_PRIVATE: 'true',
      WITNESS_QUORUM: '1',
    };
    const svc = await startService(env);
    try {
      const api = { 'x-api-key': await bootstrapKey(svc.url) };
      const status = async () => (await call(`${svc.url}/api/v1/integrity/status`, 'GET', undefined, api)).json();
      const send = async (n: number) => expect((await call(`${svc.url}/api/v1/logs/batch`, 'POST', { logs: Array.from({ length: n }, (_, j) => ({ event_type: 'step', data: { j } })) }, api)).status).toBe(200);
      await send(5);
      await vi.waitFor(async () => expect((await status()).witnesses.quorum_met).toBe(true), { timeout: 20_000, interval: 50 });
      const rotated = await call(`${svc.url}/api/v1/integrity/keys/rotate`, 'POST', undefined, { authorization: `Bearer ${operator}` });
      expect(rotated.status).toBe(200);
      const newKey = rotated.json().new_key_id as string;
      await send(5);
      // The newest checkpoint, signed by the new key, is cosigned: the witness took the transition.
      await vi.waitFor(
        async () => {
          const st = await status();
          expect(st.checkpoint.key_id).toBe(newKey);
          expect(st.witnesses.quorum_met, JSON.stringify(st.witnesses)).toBe(true);
        },
        { timeout: 20_000, interval: 50 },
      );
      expect((await status()).witnesses.items[0].refusals).toBe(0);
    } finally {
      await svc.stop();
      await rotDb.drop();
    }
  });

  /** docs/compliance.md's witness, run as written in bash: only its address changed (any free port, this machine only). */
  async function startDocWitness(noteVerifierKey: string): Promise<{ url: string; vkey: string }> {
    expect(DOC_MORE).toEqual([]);
    const dir = fs.mkdtempSync(path.join(tmp, `${kind}-doc-witness-`));
    const script = String(DOC_WITNESS)
      .replace('<note_verifier_key from GET /api/v1/integrity/keys>', noteVerifierKey)
      .replace('--host 0.0.0.0 --port 8090', '--host 127.0.0.1 --port 0');
    expect(script).toContain(noteVerifierKey);
    expect(script).toContain('--port 0');
    const child = spawn('bash', ['-c', `set -euo pipefail\n${script}`], { cwd: dir, env: { ...DOC_ENV, LOG_LEVEL: 'info' }, stdio: 'pipe', detached: true });
    children.push({ kill: () => process.kill(-(child.pid as number), 'SIGKILL') });
    const up = await new LogWatcher(child).waitFor((l) => l.msg === 'witness listening');
    return { url: String(up.url), vkey: String(up.verifier_key) };
  }

  it('two witnesses cosign every checkpoint; a rewritten history is refused by both, visibly', async () => {
    // The service's signing key first: the witnesses must know it before the service starts.
    const keyFile = path.join(tmp, `${kind}-service-key.pem`);
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    fs.writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    const logsFile = path.join(tmp, `${kind}-logs.json`);
    fs.writeFileSync(logsFile, JSON.stringify({ logs: [{ origin_prefix: 'audit-ledger.local/', verifier_keys: [verifierKey('audit-ledger.local', rawPublicKey(publicKey))] }] }));
    // The first as docs/compliance.md runs one (named witness.example.com/w1), the second by the helper.
    const w1 = await startDocWitness(verifierKey('audit-ledger.local', rawPublicKey(publicKey)));
    const w2 = await startWitness('witness.test/w2', logsFile);
    const env = {
      LEDGER_DATA_DIR: db.dataDir,
      ...(db.databaseUrl ? { DATABASE_URL: db.databaseUrl } : {}),
      ...BOOTSTRAP,
      LEDGER_SIGNING_KEY_FILE: keyFile,
      CHECKPOINT_INTERVAL_MS: '100',
      WITNESSES: `${w1.url} ${w1.vkey}, ${w2.url} ${w2.vkey}`,
      WITNESS_ALLOW_PRIVATE: 'true',
      WITNESS_QUORUM: '2',
    };
    let svc = await startService(env);
    const key = await bootstrapKey(svc.url);
    const api = { 'x-api-key': key };
    const trace = randomUUID();
    for (let i = 0; i < 3; i++) {
      const logs = Array.from({ length: 10 }, (_, j) => ({ event_type: 'tool.called', trace_id: trace, data: { i, j } }));
      expect((await call(`${svc.url}/api/v1/logs/batch`, 'POST', { logs }, api)).status).toBe(200);
    }
    const status = async (url: string) => (await call(`${url}/api/v1/integrity/status`, 'GET', undefined, api)).json();
    let cosignedSize = 0;
    await vi.waitFor(
      async () => {
        const st = await status(svc.url);
        expect(st.witnesses).toMatchObject({ quorum: 2, quorum_met: true, latest_checkpoint_cosigned_by: ['witness.example.com/w1', 'witness.test/w2'] });
        cosignedSize = st.checkpoint.tree_size;
      },
      { timeout: 20_000, interval: 50 },
    );
    // That checkpoint by its size: the service may sign a newer one meanwhile (every 100 ms), not yet cosigned.
    const cp = (await call(`${svc.url}/api/v1/integrity/checkpoint?tree_size=${cosignedSize}`, 'GET', undefined, api)).json();
    expect(cp.cosignatures).toHaveLength(2);
    const noteText = parseNote(cp.note).text;
    for (const [c, w] of [[cp.cosignatures[0], w1], [cp.cosignatures[1], w2]] as const) expect(verifyCosignature(noteText, c.line, parseWitnessKey(w.vkey)).ok).toBe(true);
    const text = await (await fetch(`${svc.url}/api/v1/integrity/checkpoint?tree_size=${cosignedSize}`, { headers: { ...api, accept: 'text/plain' } })).text();
    expect(text).toBe(cp.cosigned_note);
    expect(text.split('\n').filter((l) => l.startsWith('— '))).toHaveLength(3);

    // An evidence bundle carries the cosignatures; the verify CLI requires a quorum of named witnesses.
    // (Each bundle is recorded in the ledger, so the next checkpoint is signed and cosigned after it: ask again until the bundle's is.)
    let bundle = { checkpoint: { cosignatures: [] as unknown[] } };
    await vi.waitFor(
      async () => {
        bundle = (await call(`${svc.url}/api/v1/exports/evidence?trace_id=${trace}`, 'GET', undefined, api)).json();
        expect(bundle.checkpoint.cosignatures).toHaveLength(2);
      },
      { timeout: 20_000, interval: 1000 },
    );
    const bundleFile = path.join(tmp, `${kind}-bundle.json`);
    fs.writeFileSync(bundleFile, JSON.stringify(bundle));
    const pem = path.join(tmp, `${kind}-service.pub.pem`);
    fs.writeFileSync(pem, publicKey.export({ type: 'spki', format: 'pem' }));
    const ok = await runCli(['verify-bundle', bundleFile, '--public-key', pem, '--witness', w1.vkey, '--witness', w2.vkey], {});
    expect(ok.stdout).toContain('OK   checkpoint cosigned by 2 of the 2 named witnesses');
    expect(ok.code).toBe(0);
    // The auditor's command of docs/compliance.md, as written: its files in the auditor's directory
    // (the pinned keys, the bundle, the second witness's key in w2.vkey), the first key inline.
    const auditor = fs.mkdtempSync(path.join(tmp, `${kind}-auditor-`));
    fs.writeFileSync(path.join(auditor, 'bundle.json'), JSON.stringify(bundle));
    fs.writeFileSync(path.join(auditor, 'keys.json'), (await call(`${svc.url}/api/v1/integrity/keys`, 'GET', undefined, api)).body);
    fs.writeFileSync(path.join(auditor, 'w2.vkey'), `${w2.vkey}\n`);
    const auditorScript = String(DOC_AUDITOR).replace("'witness.example.com/w1+1a2b3c4d+BAo…'", `'${w1.vkey}'`);
    expect(auditorScript).toContain(w1.vkey);
    const docRun = spawnSync('bash', ['-c', `set -euo pipefail\n${auditorScript}`], { cwd: auditor, env: DOC_ENV, encoding: 'utf8' });
    expect(docRun.stdout).toContain('OK   checkpoint cosigned by 2 of the 2 named witnesses');
    expect(docRun.stdout).toMatch(/^VERIFIED: every check holds$/m);
    expect(docRun.status, docRun.stderr).toBe(0);
    const stranger = witnessVerifierKey('witness.test/stranger', rawPublicKey(generateKeyPairSync('ed25519').publicKey));
    const short = await runCli(['verify-bundle', bundleFile, '--public-key', pem, '--witness', w1.vkey, '--witness', stranger, '--witness-quorum', '2'], {});
    expect(short.code).toBe(1);
    expect(short.stdout).toContain('fewer than the quorum of 2');

    // Rewrite the history behind the service's back: the same company, other entries, from seq 0.
    expect(await svc.stop()).toBe(0);
    const companyId = (cp.origin as string).split('/').at(-1) as string;
    const store = db.open();
    try {
      for (const table of ['log_entries', 'merkle_hashes', 'checkpoints', 'chain_heads', 'checkpoint_cosignatures', 'integrity_state'] as const) {
        await store.db.deleteFrom(table).where('company_id', '=', companyId).execute();
      }
    } finally {
      await store.close();
    }
    svc = await startService(env);
    const logs = Array.from({ length: 40 }, (_, j) => ({ event_type: 'tool.called', data: { rewritten: j } }));
    // The service itself sees that its ledger is now behind checkpoints it signed and published
    // (its checkpoint marks, and both witnesses): it holds the company (docs/operations.md).
    const held = await call(`${svc.url}/api/v1/logs/batch`, 'POST', { logs }, api);
    expect(held.status, held.body).toBe(503);
    expect(held.json().code).toBe('ledger_behind_checkpoint');
    // An operator who accepts the loss lets it append again; the witnesses still refuse, visibly.
    const decided = await runCli(['continuity', 'resolve', '--company', companyId, '--accept-loss', '--reason', 'history rewritten by the test'], env);
    expect(decided.code, decided.stderr).toBe(0);
    await vi.waitFor(async () => expect((await call(`${svc.url}/api/v1/logs/batch`, 'POST', { logs }, api)).status).toBe(200), { timeout: 20_000, interval: 200 });
    await vi.waitFor(
      async () => {
        const w = (await status(svc.url)).witnesses;
        expect(w.quorum_met).toBe(false);
        for (const item of w.items) expect(item.refusals, JSON.stringify(item)).toBeGreaterThan(0);
      },
      { timeout: 20_000, interval: 50 },
    );
    const metrics = await (await fetch(`${svc.url}/api/v1/metrics`)).text();
    for (const name of ['witness.example.com/w1', 'witness.test/w2']) expect(metrics).toMatch(new RegExp(`audit_ledger_witness_refusals_total\\{witness="${name.replace('/', '\\/')}"\\} [1-9]`));
    expect(svc.logs.lines.some((l) => String(l.msg).startsWith('a witness refused a checkpoint'))).toBe(true);
    expect(await svc.stop()).toBe(0);
  });
});
