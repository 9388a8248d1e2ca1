// Online key rotation: two service instances on one store keep appending while one of them
// rotates. Afterwards no entry or checkpoint was committed under the old key after its
// retirement (the instance that did not rotate switches when the store refuses its old key),
// the old key endorses the new one in a signed statement, and an auditor who pinned only the
// first key follows that statement with verify-bundle.
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../src/users/accounts.js';
import { buildApp } from '../src/app.js';
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { checkpointText, fromHex, parseCheckpointText, parseNote, rawKeyFromBase64, trustedKey, verifyKeyTransition, verifyReport } from '@audit-ledger/core';
import { checkpointProblems as sdkCheckpointProblems, verifyReceipt } from '@audit-ledger/sdk';
import { rawPublicKey, signEntryHash, signNote } from '../src/crypto/signing.js';
import { memoryCustody } from '../src/crypto/custody.js';
import { MemoryCounterStore } from '../src/ratelimit/counter.js';
import type { Store } from '../src/store/store.js';
import { STORE_KINDS } from './helpers/env.js';
import { problem, testConfig } from './helpers/app.js';
import { assertChainIntact } from './helpers/ledger.js';
import { runCli } from './helpers/process.js';
import { createTestDatabase, type TestDatabase } from './helpers/stores.js';

const OPERATOR = 'operator-token-0123456789-abcdefghij';

describe.each(STORE_KINDS)('online key rotation on %s', (kind) => {
  let db: TestDatabase;
  const stores: Store[] = [];
  const apps: FastifyInstance[] = [];
  let companyId: string;
  let key: string;
  let adminToken: string;
  beforeAll(async () => {
    db = await createTestDatabase(kind);
    const config = testConfig(db, { LEDGER_OPERATOR_TOKEN: OPERATOR, CHECKPOINT_INTERVAL_MS: '0' });
    for (let i = 0; i < 2; i++) {
      const store = db.open();
      if (i === 0) await store.migrate();
      stores.push(store);
      const app = await buildApp({ config, store, counters: new MemoryCounterStore(), logger: false });
      await app.ready();
      apps.push(app);
    }
    const { company } = await createUser(stores[0] as Store, { company: 'rot', email: `rot-${kind}@example.com`, password: 'rotation password', role: 'admin' }, Date.now, null);
    companyId = company.company_id;
    const a = apps[0] as FastifyInstance;
    const token = (await a.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: `rot-${kind}@example.com`, password: 'rotation password' } })).json().access_token;
    adminToken = token;
    key = (await a.inject({ method: 'POST', url: '/api/v1/auth/api_keys', headers: { authorization: `Bearer ${token}` }, payload: { name: 'k', rate_limit_per_minute: 1_000_000 } })).json().key;
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    for (const s of stores) await s.close();
    await db.drop();
  });

  const send = (app: FastifyInstance, i: number) => app.inject({ method: 'POST', url: '/api/v1/logs', headers: { 'x-api-key': key }, payload: { event_type: 'rot', data: { i } } });
  const batch = (app: FastifyInstance, i: number) =>
    app.inject({ method: 'POST', url: '/api/v1/logs/batch', headers: { 'x-api-key': key }, payload: { logs: Array.from({ length: 80 }, (_, j) => ({ event_type: 'rot.batch', data: { i, j } })) } });

  it('refuses without the operator token, and with a wrong one', async () => {
    const a = apps[0] as FastifyInstance;
    problem(await a.inject({ method: 'POST', url: '/api/v1/integrity/keys/rotate' }), 401, 'missing_credential');
    problem(await a.inject({ method: 'POST', url: '/api/v1/integrity/keys/rotate', headers: { authorization: 'Bearer operator-token-0123456789-abcdefghiX' } }), 401, 'invalid_credential');
    expect((await a.inject({ method: 'GET', url: '/api/v1/integrity/keys' })).json().items).toHaveLength(1);
  });

  it('switches every instance at once: nothing is committed under the retired key after it is retired', async () => {
    const [a, b] = apps as [FastifyInstance, FastifyInstance];
    const before = (await a.inject({ method: 'GET', url: '/api/v1/integrity/keys' })).json().items[0].key_id as string;
    for (const r of await Promise.all([send(a, -1), send(b, -2), batch(a, -3)])) expect(r.statusCode).toBe(200);
    // Appends on both instances before, during and after the rotation.
    const load: Array<Promise<{ statusCode: number }>> = [];
    for (let i = 0; i < 30; i++) load.push(send(i % 2 ? a : b, i), ...(i % 10 === 0 ? [batch(i % 20 ? a : b, i)] : []));
    const rotated = await a.inject({ method: 'POST', url: '/api/v1/integrity/keys/rotate', headers: { authorization: `Bearer ${OPERATOR}` } });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const transition = rotated.json();
    expect(transition).toMatchObject({ old_key_id: before, new_key_id: expect.stringMatching(/^[0-9a-f]{16}$/) });
    for (let i = 30; i < 60; i++) load.push(send(i % 2 ? a : b, i), ...(i % 10 === 0 ? [batch(i % 20 ? a : b, i)] : []));
    for (const r of await Promise.all(load)) expect(r.statusCode).toBe(200);
    // Instance b never rotated: its appends after the rotation are signed with the new key too.
    const late = await send(b, 999);
    expect(late.statusCode).toBe(200);
    const lateEntry = (await b.inject({ method: 'GET', url: `/api/v1/logs/${late.json().log_id}`, headers: { 'x-api-key': key } })).json();
    expect(lateEntry.key_id).toBe(transition.new_key_id);

    // The chain holds and every signature verifies; the old key signs nothing after the new one first appears.
    const store = stores[0] as Store;
    await assertChainIntact(store, companyId);
    const rows = await store.db.selectFrom('log_entries').select(['seq', 'key_id', 'created_at']).where('company_id', '=', companyId).orderBy('seq').execute();
    const firstNew = rows.findIndex((r) => r.key_id === transition.new_key_id);
    expect(firstNew).toBeGreaterThan(0);
    expect(rows.slice(firstNew).every((r) => r.key_id === transition.new_key_id)).toBe(true);
    // Strictly before: at the transition's instant the new key signs (ledger-format.md §12).
    expect(rows.filter((r) => r.key_id === before).every((r) => Date.parse(r.created_at) < Date.parse(transition.created_at))).toBe(true);
    expect(rows.filter((r) => r.key_id === transition.new_key_id).every((r) => Date.parse(r.created_at) >= Date.parse(transition.created_at))).toBe(true);
    const checkpoints = await store.db.selectFrom('checkpoints').select(['key_id', 'timestamp']).where('company_id', '=', companyId).execute();
    expect(checkpoints.filter((c) => c.key_id === before).every((c) => Date.parse(c.timestamp) < Date.parse(transition.created_at))).toBe(true);
    expect(checkpoints.some((c) => c.key_id === transition.new_key_id)).toBe(true);

    // Both keys listed, the old one retired at the transition; the statement verifies against the old key.
    const keys = (await b.inject({ method: 'GET', url: '/api/v1/integrity/keys' })).json();
    expect(keys.items.map((k: { key_id: string; active: boolean }) => [k.key_id, k.active])).toEqual([
      [before, false],
      [transition.new_key_id, true],
    ]);
    expect(keys.items[0].active_to).toBe(transition.created_at);
    expect(keys.transitions).toEqual([transition]);
    expect('newKey' in verifyKeyTransition(transition, rawKeyFromBase64(keys.items[0].public_key))).toBe(true);
    const forged = { ...transition, new_key_id: '0123456789abcdef' };
    expect(verifyKeyTransition(forged, rawKeyFromBase64(keys.items[0].public_key))).toMatchObject({ failure: expect.any(String) });

    // /verify holds for entries under either key.
    for (const seq of [0, rows.length - 1]) {
      const id = (await store.db.selectFrom('log_entries').select('log_id').where('company_id', '=', companyId).where('seq', '=', seq).executeTakeFirstOrThrow()).log_id;
      const v = (await a.inject({ method: 'GET', url: `/api/v1/logs/${id}/verify`, headers: { 'x-api-key': key } })).json();
      expect(v).toMatchObject({ chain_valid: true, signature_valid: true });
    }

    // An auditor who pinned only the first key: verify-bundle follows the endorsed transition.
    const dir = fs.mkdtempSync(path.join(db.dataDir, 'audit-'));
    const bundle = (await a.inject({ method: 'GET', url: `/api/v1/exports/evidence?from_seq=0&to_seq=${rows.length - 1}`, headers: { 'x-api-key': key } })).json();
    expect(bundle.key_transitions).toEqual([transition]);
    fs.writeFileSync(path.join(dir, 'bundle.json'), JSON.stringify(bundle));
    fs.writeFileSync(path.join(dir, 'first.pem'), keys.items[0].public_key_pem);
    const run = await runCli(['verify-bundle', path.join(dir, 'bundle.json'), '--public-key', path.join(dir, 'first.pem')], {});
    expect(run.stdout).toContain(`OK   key transition ${before} → ${transition.new_key_id}`);
    expect(run.stdout).toContain('VERIFIED: every check holds');
    expect(run.code).toBe(0);
    // A bundle whose transition was tampered with does not verify.
    const tampered = structuredClone(bundle);
    tampered.key_transitions[0].new_signature = tampered.key_transitions[0].old_signature;
    fs.writeFileSync(path.join(dir, 'bundle.json'), JSON.stringify(tampered));
    const bad = await runCli(['verify-bundle', path.join(dir, 'bundle.json'), '--public-key', path.join(dir, 'first.pem')], {});
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain('FAIL key transition');

    // A second rotation by the other instance chains on: the rotated key endorses the next one.
    const again = await b.inject({ method: 'POST', url: '/api/v1/integrity/keys/rotate', headers: { authorization: `Bearer ${OPERATOR}` } });
    expect(again.json().old_key_id).toBe(transition.new_key_id);
    expect((await send(a, 1000)).statusCode).toBe(200);

    // Issue 42 (18): a signed period report made after both rotations verifies against the first
    // key alone, offline with audit-ledger-verify and with the core's verifyReport (as the
    // console's "Verify in this browser" does): the report carries the signed transitions.
    const admin = { authorization: `Bearer ${adminToken}` };
    const made = await a.inject({ method: 'POST', url: '/api/v1/compliance/reports', headers: admin, payload: { from: new Date(Date.now() - 86_400_000).toISOString(), to: new Date(Date.now() + 86_400_000).toISOString() } });
    expect(made.statusCode, made.body).toBe(201);
    const doc = (await a.inject({ method: 'GET', url: `/api/v1/compliance/reports/${made.json().id}`, headers: admin })).json();
    expect(doc.signature.key_id).toBe(again.json().new_key_id);
    expect(doc.key_transitions.map((t: { new_key_id: string }) => t.new_key_id)).toEqual([transition.new_key_id, again.json().new_key_id]);
    fs.writeFileSync(path.join(dir, 'report.json'), JSON.stringify(doc));
    const reportRun = await runCli(['verify-bundle', path.join(dir, 'report.json'), '--public-key', path.join(dir, 'first.pem')], {});
    expect(reportRun.code, reportRun.stdout).toBe(0);
    expect(verifyReport(doc, [trustedKey(rawKeyFromBase64(keys.items[0].public_key))]).ok).toBe(true);
    // A transition tampered with endorses nothing: the report's key is then not trusted.
    const bent = structuredClone(doc);
    bent.key_transitions[1].new_signature = bent.key_transitions[1].old_signature;
    expect(verifyReport(bent, [trustedKey(rawKeyFromBase64(keys.items[0].public_key))]).ok).toBe(false);
    await assertChainIntact(store, companyId);
  });

  it('a retired key is trusted only inside its signed period: a post-rotation signature by it fails with key_not_active in /verify, the full verification, bundles, exports and checkpoints', async () => {
    const a = apps[0] as FastifyInstance;
    const store = stores[0] as Store;
    const keys = (await a.inject({ method: 'GET', url: '/api/v1/integrity/keys' })).json();
    const [first, ...later] = keys.items as Array<{ key_id: string; public_key_pem: string }>;
    expect(later.length).toBeGreaterThan(0);
    const dir = fs.mkdtempSync(path.join(db.dataDir, 'retired-'));
    const file = (name: string, text: string) => {
      fs.writeFileSync(path.join(dir, name), text);
      return path.join(dir, name);
    };
    const firstPem = file('first.pem', (first as { public_key_pem: string }).public_key_pem);
    const verifyCli = (args: string[]) => runCli(['verify-bundle', ...args, '--public-key', firstPem], {});

    // Genuine: an export spanning both rotations verifies with only the first key pinned, the
    // transitions followed from the signing_key.rotated entries in the chain itself (defect 3).
    const exportText = (await a.inject({ method: 'GET', url: '/api/v1/exports/logs?format=jsonl', headers: { 'x-api-key': key } })).body;
    const checkpoint = (await a.inject({ method: 'GET', url: '/api/v1/integrity/checkpoint', headers: { 'x-api-key': key } })).json();
    const genuine = await verifyCli([file('export.jsonl', exportText), '--checkpoint', file('cp.json', JSON.stringify(checkpoint))]);
    expect(genuine.stdout, genuine.stderr).toContain('VERIFIED: every check holds');
    expect(genuine.code).toBe(0);

    // The attacker holds the first (retired) key and a copy of the database: they re-sign the
    // newest entry, created long after that key was retired, and name the old key.
    const retired = createPrivateKey(fs.readFileSync(path.join(db.dataDir, 'signing-key.pem')));
    const victim = await store.db.selectFrom('log_entries').selectAll().where('company_id', '=', companyId).where('event_type', '=', 'rot').orderBy('seq', 'desc').limit(1).executeTakeFirstOrThrow();
    await store.db.updateTable('log_entries').set({ key_id: (first as { key_id: string }).key_id, signature: signEntryHash(retired, victim.hash) }).where('company_id', '=', companyId).where('seq', '=', victim.seq).execute();

    // The SDK, with the keys JSON an auditor pinned (its transitions give the periods): a receipt
    // check of the genuine entry holds, of the re-signed one fails with key_not_active.
    const keysJson = (await a.inject({ method: 'GET', url: '/api/v1/integrity/keys' })).body;
    const genuineEntry = (await a.inject({ method: 'GET', url: `/api/v1/logs/${victim.log_id}`, headers: { 'x-api-key': key } })).json();
    expect(verifyReceipt({ ...genuineEntry, key_id: victim.key_id, signature: victim.signature }, { publicKeys: keysJson })).toEqual({ ok: true, failures: [], problems: [] });
    const sdkVerdict = verifyReceipt(genuineEntry, { publicKeys: keysJson });
    expect(sdkVerdict.ok).toBe(false);
    expect(sdkVerdict.failures.map((f) => f.code)).toEqual(['key_not_active']);

    const verdict = (await a.inject({ method: 'GET', url: `/api/v1/logs/${victim.log_id}/verify`, headers: { 'x-api-key': key } })).json();
    expect(verdict).toMatchObject({ chain_valid: true, signature_valid: false });
    expect(verdict.problems.map((p: { kind: string }) => p.kind)).toEqual(['key_not_active']);

    const job = (await a.inject({ method: 'POST', url: '/api/v1/integrity/verify', headers: { authorization: `Bearer ${adminToken}` }, payload: { entry_signatures: true } })).json();
    let report;
    for (;;) {
      const j = (await a.inject({ method: 'GET', url: `/api/v1/integrity/jobs/${job.job_id}`, headers: { authorization: `Bearer ${adminToken}` } })).json();
      if (j.status === 'completed' || j.status === 'failed') {
        report = j.report;
        break;
      }
      await new Promise((r) => setImmediate(r));
    }
    expect(report.violations.map((v: { kind: string; seq: number }) => [v.kind, v.seq])).toEqual([['key_not_active', victim.seq]]);

    // The bundle with that entry fails with only the first key pinned.
    const bundle = (await a.inject({ method: 'GET', url: `/api/v1/exports/evidence?from_seq=${victim.seq}&to_seq=${victim.seq}`, headers: { 'x-api-key': key } })).json();
    const bundleRun = await verifyCli([file('bundle.json', JSON.stringify(bundle))]);
    expect(bundleRun.code).toBe(1);
    expect(bundleRun.stdout).toMatch(new RegExp(`FAIL entry seq ${victim.seq} .*after it was retired at`));
    // So does the export, where the forged entry comes after the rotation records.
    const forgedExport = exportText.split('\n').map((l) => (l.includes(`"log_id":"${victim.log_id}"`) ? JSON.stringify({ ...JSON.parse(l), key_id: (first as { key_id: string }).key_id, signature: signEntryHash(retired, victim.hash) }) : l)).join('\n');
    const exportRun = await verifyCli([file('forged.jsonl', forgedExport), '--checkpoint', file('cp.json', JSON.stringify(checkpoint))]);
    expect(exportRun.code).toBe(1);
    expect(exportRun.stdout).toContain('after it was retired at');

    // A checkpoint signed by the retired key, dated after its retirement, is refused.
    const text = checkpointText({ origin: `${testConfig(db).ledgerOrigin}/${companyId}`, treeSize: checkpoint.tree_size, rootHash: fromHex(checkpoint.root_hash), timestamp: new Date().toISOString() });
    const forgedNote = signNote(text, testConfig(db).ledgerOrigin, memoryCustody(retired), rawPublicKey(createPublicKey(retired)));
    const cpRun = await verifyCli([file('export.jsonl', exportText), '--checkpoint', file('forged-cp.txt', forgedNote)]);
    expect(cpRun.code).toBe(1);
    expect(cpRun.stdout).toContain('key_not_active');
    // The SDK's checkpoint check: the genuine checkpoint holds, the retired key's does not.
    expect(sdkCheckpointProblems(checkpoint, keysJson)).toEqual([]);
    expect(sdkCheckpointProblems({ ...checkpoint, key_id: (first as { key_id: string }).key_id, note: forgedNote, timestamp: parseCheckpointText(parseNote(forgedNote).text).timestamp }, keysJson).join()).toContain('key_not_active');
  });
});

describe('rotation without LEDGER_OPERATOR_TOKEN', () => {
  it('is refused with 403, and the key is unchanged', async () => {
    const db = await createTestDatabase('sqlite');
    const store = db.open();
    await store.migrate();
    const app = await buildApp({ config: testConfig(db), store, counters: new MemoryCounterStore(), logger: false });
    try {
      const p = problem(await app.inject({ method: 'POST', url: '/api/v1/integrity/keys/rotate', headers: { authorization: `Bearer ${OPERATOR}` } }), 403, 'forbidden');
      expect(String(p.detail)).toContain('LEDGER_OPERATOR_TOKEN');
      expect((await app.inject({ method: 'GET', url: '/api/v1/integrity/keys' })).json().transitions).toEqual([]);
    } finally {
      await app.close();
      await store.close();
      await db.drop();
    }
  });
});
