// Hardware-backed signing (issue 32, part 1) against a real PKCS#11 token: SoftHSM2, with a
// token of the test's own and keys made in it by OpenSC's pkcs11-tool. Two service instances on
// one store sign with a key that never leaves the token (single events, small groups, large
// batches spread over the token's sessions, checkpoints); a running service rotates from the
// token key to another made inside the token, to a software key and back, each step endorsed by a
// signed transition; a restarted process finds the active key in the token from the store; and
// every entry verifies against the public keys the token holds.
import { verify } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointProblems, entrySignatureMessage, keyIdOf, parseNote, rawKeyFromBase64, verifyKeyTransition } from '@audit-ledger/core';
import { buildApp } from '../src/app.js';
import { publicKeyFromRaw } from '../src/crypto/signing.js';
import { MemoryCounterStore } from '../src/ratelimit/counter.js';
import type { Store } from '../src/store/store.js';
import { createUser } from '../src/users/accounts.js';
import { problem, testConfig } from './helpers/app.js';
import { STORE_KINDS } from './helpers/env.js';
import { assertChainIntact } from './helpers/ledger.js';
import { runCli } from './helpers/process.js';
import { createTestToken, type TestToken } from './helpers/softhsm.js';
import { createTestDatabase, type TestDatabase } from './helpers/stores.js';

const OPERATOR = 'operator-token-0123456789-pkcs11-test';

describe.each(STORE_KINDS)('signing in a PKCS#11 token (SoftHSM2) on %s', (kind) => {
  let token: TestToken;
  let db: TestDatabase;
  let startKey: Uint8Array;
  const stores: Store[] = [];
  const apps: FastifyInstance[] = [];
  let companyId: string;
  let apiKey: string;
  let admin: string;
  const env = (extra: Record<string, string> = {}) => ({ ...token.env, LEDGER_OPERATOR_TOKEN: OPERATOR, CHECKPOINT_INTERVAL_MS: '0', ...extra });
  const start = async (settings: Record<string, string>) => {
    const store = db.open();
    stores.push(store);
    const app = await buildApp({ config: testConfig(db, settings), store, counters: new MemoryCounterStore(), logger: false });
    await app.ready();
    apps.push(app);
    return app;
  };

  beforeAll(async () => {
    token = createTestToken(`ledger-${kind}`);
    startKey = token.keygen('ledger-start');
    db = await createTestDatabase(kind);
    const first = db.open();
    await first.migrate();
    await first.close();
    for (let i = 0; i < 2; i++) await start(env({ LEDGER_PKCS11_KEY_LABEL: 'ledger-start' }));
    const { company } = await createUser(stores[0] as Store, { company: 'hsm', email: `hsm-${kind}@example.com`, password: 'token password 1', role: 'admin' }, Date.now, null);
    companyId = company.company_id;
    const a = apps[0] as FastifyInstance;
    admin = (await a.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: `hsm-${kind}@example.com`, password: 'token password 1' } })).json().access_token;
    apiKey = (await a.inject({ method: 'POST', url: '/api/v1/auth/api_keys', headers: { authorization: `Bearer ${admin}` }, payload: { name: 'k', rate_limit_per_minute: 1_000_000 } })).json().key;
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    for (const s of stores) await s.close();
    await db?.drop();
    token?.dispose();
  });

  const send = (app: FastifyInstance, i: number) => app.inject({ method: 'POST', url: '/api/v1/logs', headers: { 'x-api-key': apiKey }, payload: { event_type: 'hsm.single', data: { i } } });
  const batch = (app: FastifyInstance, n: number, i: number) =>
    app.inject({ method: 'POST', url: '/api/v1/logs/batch', headers: { 'x-api-key': apiKey }, payload: { logs: Array.from({ length: n }, (_, j) => ({ event_type: 'hsm.batch', data: { i, j } })) } });
  const rotate = (app: FastifyInstance, body?: Record<string, unknown>) =>
    app.inject({ method: 'POST', url: '/api/v1/integrity/keys/rotate', headers: { authorization: `Bearer ${OPERATOR}` }, ...(body ? { payload: body } : {}) });
  const keys = async () => (await (apps[0] as FastifyInstance).inject({ method: 'GET', url: '/api/v1/integrity/keys' })).json();

  /** Every entry and checkpoint signature checked with node:crypto against the key the store lists for it. */
  async function assertAllSigned(): Promise<Map<string, number>> {
    const store = stores[0] as Store;
    const listed = new Map<string, Uint8Array>((await store.signingKeys.list()).map((k) => [k.key_id, rawKeyFromBase64(k.public_key)]));
    const rows = await store.db.selectFrom('log_entries').select(['seq', 'hash', 'signature', 'key_id']).where('company_id', '=', companyId).orderBy('seq').execute();
    const perKey = new Map<string, number>();
    for (const r of rows) {
      const raw = listed.get(r.key_id) as Uint8Array;
      expect(verify(null, entrySignatureMessage(r.hash), publicKeyFromRaw(raw), Buffer.from(r.signature, 'base64')), `entry ${r.seq}`).toBe(true);
      perKey.set(r.key_id, (perKey.get(r.key_id) ?? 0) + 1);
    }
    for (const cp of await store.db.selectFrom('checkpoints').selectAll().where('company_id', '=', companyId).execute()) {
      expect(checkpointProblems(cp, testConfig(db).ledgerOrigin, listed.get(cp.key_id)), `checkpoint ${cp.tree_size}`).toEqual([]);
    }
    await assertChainIntact(store, companyId);
    return perKey;
  }

  it('signs entries (one, small groups, large batches) and checkpoints with the token key, which the keys list names as kept in a token', async () => {
    const [a, b] = apps as [FastifyInstance, FastifyInstance];
    const listed = await keys();
    expect(listed.items).toEqual([expect.objectContaining({ key_id: keyIdOf(startKey), public_key: Buffer.from(startKey).toString('base64'), active: true, custody: 'pkcs11' })]);
    const results = await Promise.all([send(a, 0), send(b, 1), batch(a, 5, 2), batch(b, 300, 3), ...Array.from({ length: 20 }, (_, i) => send(i % 2 ? a : b, 10 + i))]);
    for (const r of results) expect(r.statusCode, r.body).toBe(200);
    expect(Object.fromEntries(await assertAllSigned())).toEqual({ [keyIdOf(startKey)]: 327 + 1 }); // and the api_key.created trail entry
    const id = results[0]?.json().log_id as string;
    expect((await a.inject({ method: 'GET', url: `/api/v1/logs/${id}/verify`, headers: { 'x-api-key': apiKey } })).json()).toMatchObject({ chain_valid: true, signature_valid: true });
    expect((await a.inject({ method: 'GET', url: '/api/v1/health/ready' })).json().checks.signing_key.status).toBe('ok');
    // The private key is in the token only: sensitive, never extractable (as pkcs11-tool made it).
    expect(token.listing()).toMatch(/Private Key Object; EC_EDWARDS\s+label:\s+ledger-start\s+Usage:[^\n]*sign[^\n]*\n\s+Access:\s+sensitive, always sensitive, never extractable/);
  });

  it('rotates to a key made inside the token, to a software key and back to the token, every step endorsed; a used key or a bad label is refused', async () => {
    const [a, b] = apps as [FastifyInstance, FastifyInstance];
    const toToken = await rotate(a, { pkcs11_key_label: 'ledger-2' });
    expect(toToken.statusCode, toToken.body).toBe(200);
    const t1 = toToken.json();
    expect(t1.old_key_id).toBe(keyIdOf(startKey));
    expect('newKey' in verifyKeyTransition(t1, startKey)).toBe(true);
    // Made by the service inside the token: never extractable there either.
    expect(token.listing()).toMatch(/label:\s+ledger-2\s+Usage:[^\n]*sign[^\n]*\n\s+Access:\s+sensitive, always sensitive, never extractable/);
    for (const r of await Promise.all([send(b, 100), send(a, 101), batch(b, 50, 102)])) expect(r.statusCode, r.body).toBe(200);

    problem(await rotate(a, { pkcs11_key_label: 'ledger-start' }), 409, 'rotation_target');
    problem(await rotate(a, { pkcs11_key_label: 'bad label with spaces' }), 400, 'validation_failed');
    problem(await rotate(a, { pkcs11_key_label: 'x', other: 1 }), 400, 'validation_failed');
    problem(await (apps[0] as FastifyInstance).inject({ method: 'POST', url: '/api/v1/integrity/keys/rotate', payload: { pkcs11_key_label: 'ledger-9' } }), 401, 'missing_credential');
    expect(token.listing()).not.toContain('ledger-9');

    const toSoftware = await rotate(b);
    expect(toSoftware.statusCode, toSoftware.body).toBe(200);
    const t2 = toSoftware.json();
    expect(t2.old_key_id).toBe(t1.new_key_id);
    for (const r of await Promise.all([send(a, 200), batch(b, 40, 201)])) expect(r.statusCode).toBe(200);
    const back = await rotate(a, { pkcs11_key_label: 'ledger-3' });
    expect(back.statusCode, back.body).toBe(200);
    const t3 = back.json();
    for (const r of await Promise.all([send(b, 300), batch(a, 100, 301)])) expect(r.statusCode).toBe(200);

    const listed = await keys();
    expect(listed.items.map((k: { custody: string; active: boolean }) => [k.custody, k.active])).toEqual([
      ['pkcs11', false],
      ['pkcs11', false],
      ['store', false],
      ['pkcs11', true],
    ]);
    expect(listed.transitions.map((t: { new_key_id: string }) => t.new_key_id)).toEqual([t1.new_key_id, t2.new_key_id, t3.new_key_id]);
    let trusted = startKey;
    for (const t of listed.transitions) {
      const step = verifyKeyTransition(t, trusted);
      if (!('newKey' in step)) throw new Error(step.failure);
      trusted = step.newKey;
    }
    const perKey = await assertAllSigned();
    // Each key also signed the signing_key.rotated trail entry that introduced it.
    expect([...perKey.values()]).toEqual([328, 52 + 1, 41 + 1, 101 + 1]);
    expect(keyIdOf(trusted)).toBe(t3.new_key_id);
    const note = parseNote((await stores[0]?.db.selectFrom('checkpoints').select('note').where('company_id', '=', companyId).orderBy('tree_size', 'desc').limit(1).executeTakeFirstOrThrow())?.note as string);
    expect(note.signatures).toHaveLength(1);
  });

  it('a restarted process opens the active key in the token from the store; without the token it refuses to start and says why', async () => {
    const restarted = await start(env());
    expect((await send(restarted, 400)).statusCode).toBe(200);
    const active = (await keys()).items.at(-1);
    const row = await (stores[0] as Store).db.selectFrom('log_entries').select('key_id').where('company_id', '=', companyId).orderBy('seq', 'desc').limit(1).executeTakeFirstOrThrow();
    expect(row.key_id).toBe(active.key_id);

    const noToken = { CHECKPOINT_INTERVAL_MS: '0' };
    await expect(start(noToken)).rejects.toThrow(/is kept in a PKCS#11 token as "ledger-3": set LEDGER_PKCS11_MODULE/);
    await expect(start(env({ LEDGER_PKCS11_TOKEN_LABEL: 'no-such-token' }))).rejects.toThrow(/no token labelled "no-such-token".*the module's tokens: "ledger-/);
  });

  it('refuses a wrong PIN, and a key label the token does not have, with what to fix', async () => {
    const fresh = await createTestDatabase(kind);
    try {
      const store = fresh.open();
      await store.migrate();
      const build = (settings: Record<string, string>) => buildApp({ config: testConfig(fresh, settings), store, counters: new MemoryCounterStore(), logger: false });
      await expect(build({ ...token.env, LEDGER_PKCS11_KEY_LABEL: 'missing-key' })).rejects.toThrow(/has no Ed25519 key pair labelled "missing-key"/);
      expect(await store.signingKeys.list()).toEqual([]);
      await store.close();
      // A login is per process (this one is logged in already): the PIN is checked by a service process of its own.
      const { LEDGER_PKCS11_PIN_FILE: _file, ...withoutFile } = token.env;
      const served = await runCli(['serve'], { ...withoutFile, LEDGER_PKCS11_PIN: '000000', LEDGER_PKCS11_KEY_LABEL: 'ledger-start', LEDGER_DATA_DIR: fresh.dataDir, ...(fresh.databaseUrl ? { DATABASE_URL: fresh.databaseUrl } : {}), PORT: '0' });
      expect(served.code).not.toBe(0);
      expect(served.stdout + served.stderr).toContain(`cannot log in to token "${token.label}" with the PIN given (LEDGER_PKCS11_PIN_FILE or LEDGER_PKCS11_PIN): CKR_PIN_INCORRECT`);
      expect(await (fresh.open()).signingKeys.list()).toEqual([]);
    } finally {
      await fresh.drop();
    }
  });
});
