// Agent-signed events (issue 32, part 2; docs/ledger-format.md §20), on both stores: an admin
// registers an agent's Ed25519 key; the SDK signs each event as it will be stored; the service
// checks the signature against the register, keeps it in the hashed entry (format version 4) and
// refuses a bad one with 400, storing nothing; the service's entry check, the SDK, evidence
// bundles and audit-ledger-verify report which key signed each entry; rotation and revocation
// (dated back) are honoured at once, and entries without an agent signature stay valid.
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AuditEvent, agentKeyRegistration, type AgentSigner, agentSigner, createClient, signAgentEvent, verifyReceipt } from '@audit-ledger/sdk';
import { STORE_KINDS } from './helpers/env.js';
import { type Account, problem, startTestApp, type TestApp } from './helpers/app.js';
import { runCli } from './helpers/process.js';

const newPem = () => generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

describe.each(STORE_KINDS)('agent-signed events on %s', (kind) => {
  let t: TestApp;
  let admin: Account;
  let auth: { authorization: string };
  let key: { 'x-api-key': string };
  let planner: AgentSigner;
  const entryCount = async () => Number((await t.store.db.selectFrom('log_entries').select((eb) => eb.fn.countAll().as('n')).where('company_id', '=', admin.companyId).executeTakeFirstOrThrow()).n);
  const send = (event: AuditEvent) => t.inject({ method: 'POST', url: '/api/v1/logs', headers: key, payload: event });
  const signers = new Map<string, AgentSigner>();
  const signerOf = async (agentId: string, pem: string) => {
    const s = await agentSigner(agentId, pem);
    signers.set(s.publicKey, s);
    return s;
  };
  /** POST /agent-keys with the holder's proof (made here when the key is one of ours and none is given; else a signature of zeros). */
  const register = async (body: Record<string, unknown>, headers = auth, companyId = admin.companyId) => {
    const s = signers.get(String(body.public_key));
    const proof = 'proof' in body ? {} : { proof: s ? (await agentKeyRegistration({ ...s, agentId: String(body.agent_id) }, companyId)).proof : Buffer.alloc(64).toString('base64') };
    return t.inject({ method: 'POST', url: '/api/v1/agent-keys', headers, payload: { ...body, ...proof } });
  };
  const verdict = async (logId: string) => (await t.inject({ method: 'GET', url: `/api/v1/logs/${logId}/verify`, headers: key })).json();
  /** The fetch the SDK uses, answered by the app in this process. */
  const injectFetch: typeof fetch = async (input, init) => {
    const url = new URL(String(input));
    const res = await t.inject({ method: (init?.method ?? 'GET') as 'GET', url: url.pathname + url.search, headers: init?.headers as Record<string, string>, ...(init?.body ? { payload: String(init.body) } : {}) });
    return new Response(res.body, { status: res.statusCode, headers: { 'content-type': String(res.headers['content-type'] ?? 'application/json') } });
  };

  beforeAll(async () => {
    t = await startTestApp(kind, { env: { CHECKPOINT_INTERVAL_MS: '0' } });
    admin = await t.newAccount();
    auth = { authorization: `Bearer ${admin.token}` };
    key = { 'x-api-key': (await t.createKey(admin.token, 100_000)).key };
    planner = await signerOf('planner-1', newPem());
  });
  afterAll(async () => t?.close());

  it('an admin registers an agent key (a trail entry); any credential of the company reads the register', async () => {
    const before = await entryCount();
    const res = await register({ agent_id: 'planner-1', public_key: planner.publicKey });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ key_id: planner.keyId, agent_id: 'planner-1', public_key: planner.publicKey, active: true, active_to: null, registered_by: expect.any(String) });
    const trail = await t.store.db.selectFrom('log_entries').selectAll().where('company_id', '=', admin.companyId).where('seq', '=', before).executeTakeFirstOrThrow();
    expect(trail.event_type).toBe('agent_key.registered');
    expect(JSON.parse(trail.data as string)).toMatchObject({ key_id: planner.keyId, agent_id: 'planner-1', public_key: planner.publicKey, replaces: null, actor: { kind: 'user' } });
    expect((await t.inject({ method: 'GET', url: '/api/v1/agent-keys', headers: key })).json().items).toHaveLength(1);

    problem(await register({ agent_id: 'planner-1', public_key: planner.publicKey }), 409, 'agent_key_exists');
    problem(await register({ agent_id: 'planner-1', public_key: Buffer.alloc(31).toString('base64').padEnd(44, '=') }), 400, 'validation_failed');
    problem(await register({ agent_id: 'x', public_key: planner.publicKey, extra: 1 }), 400, 'validation_failed');
    // Issue 42 (22): keys of small order (all zeros, the identity, order 8) and non-canonical encodings are refused; nothing registered.
    const registered = (await t.inject({ method: 'GET', url: '/api/v1/agent-keys', headers: key })).json().items.length;
    for (const hex of ['00'.repeat(32), `01${'00'.repeat(31)}`, 'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a', `ed${'ff'.repeat(30)}7f`]) {
      const body = problem(await register({ agent_id: 'weak', public_key: Buffer.from(hex, 'hex').toString('base64') }), 400, 'validation_failed');
      expect(JSON.stringify(body.errors), hex).toContain('small order');
    }
    expect((await t.inject({ method: 'GET', url: '/api/v1/agent-keys', headers: key })).json().items).toHaveLength(registered);
    problem(await register({ agent_id: 'x', public_key: planner.publicKey }, key as never), 403, 'forbidden');
    expect(await entryCount()).toBe(before + 1);
  });

  it("22: a key is registered only with its holder's proof naming this company, agent and key: none, a wrong one, another key's, another company's or another agent's is a 400 that registers nothing; the proof is in the trail entry", async () => {
    const holder = await signerOf('prover-1', newPem());
    const outsider = await signerOf('prover-1', newPem());
    const before = await entryCount();
    const listed = async () => (await t.inject({ method: 'GET', url: '/api/v1/agent-keys', headers: key })).json().items.length as number;
    const count = await listed();
    const good = await agentKeyRegistration(holder, admin.companyId);
    const wrong = [
      { agent_id: 'prover-1', public_key: holder.publicKey },
      { ...good, proof: Buffer.alloc(64).toString('base64') },
      { ...good, proof: (await agentKeyRegistration(outsider, admin.companyId)).proof },
      { ...good, proof: (await agentKeyRegistration(holder, '00000000-0000-7000-8000-000000000000')).proof },
      { ...good, agent_id: 'prover-2' },
      { ...good, proof: good.proof.slice(0, 80) },
      { ...good, proof: `${good.proof.slice(0, 86)}!!` },
    ];
    for (const body of wrong) {
      const res = await t.inject({ method: 'POST', url: '/api/v1/agent-keys', headers: auth, payload: body });
      problem(res, 400, 'validation_failed');
      expect(res.json().errors.map((e: { field: string }) => e.field)).toContain('/body/proof');
    }
    expect(await listed()).toBe(count);
    expect(await entryCount()).toBe(before);
    const ok = await t.inject({ method: 'POST', url: '/api/v1/agent-keys', headers: auth, payload: good });
    expect(ok.statusCode, ok.body).toBe(201);
    const trail = await t.store.db.selectFrom('log_entries').select('data').where('company_id', '=', admin.companyId).where('seq', '=', before).executeTakeFirstOrThrow();
    expect(JSON.parse(trail.data as string)).toMatchObject({ key_id: holder.keyId, proof: good.proof });
  });

  it('one key registered by several requests at once: one 201, the others 409 agent_key_exists, one trail entry', async () => {
    const racer = await signerOf('racer-1', newPem());
    const before = await entryCount();
    const answers = await Promise.all(Array.from({ length: 4 }, () => register({ agent_id: 'racer-1', public_key: racer.publicKey })));
    expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 409, 409, 409]);
    for (const a of answers.filter((x) => x.statusCode === 409)) problem(a, 409, 'agent_key_exists');
    expect(await entryCount()).toBe(before + 1);
  });

  it('the SDK signs events as they will be stored; the service keeps the signature in a version 4 entry, and every checker says which key signed it', async () => {
    const client = createClient({ baseUrl: 'http://in-process/api/v1', apiKey: key['x-api-key'], fetch: injectFetch, agentSigner: planner, batchSize: 10 });
    const trace = '0198c5a0-0000-7000-8000-00000000a9e1';
    // An extra top-level field (kept in extra), a number schema_version (stored as a string), unicode: all signed as stored.
    await client.log({ event_type: 'tool.called', trace_id: trace, data: { tool: 'search', q: 'zürich ☃' }, schema_version: 2 as unknown as string, model: 'gpt-x' });
    for (let i = 0; i < 12; i++) await client.log({ event_type: 'tool.result', trace_id: trace, data: { i } });
    await client.close();
    expect(client.stats()).toMatchObject({ sent: 13, failed: 0 });
    const unsigned = await send({ event_type: 'note', data: { by: 'operator' } });
    expect(unsigned.statusCode).toBe(200);

    const rows = await t.store.db.selectFrom('log_entries').selectAll().where('company_id', '=', admin.companyId).where('trace_id', '=', trace).orderBy('seq').execute();
    expect(rows).toHaveLength(13);
    for (const r of rows) expect(r).toMatchObject({ format_version: 4, agent_key_id: planner.keyId, agent_id: 'planner-1', agent_signature: expect.stringMatching(/^[A-Za-z0-9+/]{86}==$/) });
    expect(rows[0]).toMatchObject({ schema_version: '2', extra: '{"model":"gpt-x"}' });
    const v = await verdict(rows[0]?.log_id as string);
    expect(v).toMatchObject({ chain_valid: true, signature_valid: true, agent_signature: { state: 'valid', key_id: planner.keyId, agent_id: 'planner-1', detail: null } });
    const plain = await verdict(unsigned.json().log_id);
    expect(plain).toMatchObject({ chain_valid: true, agent_signature: { state: 'none', key_id: null } });
    expect((await t.inject({ method: 'GET', url: `/api/v1/logs/${unsigned.json().log_id}`, headers: key })).json()).toMatchObject({ format_version: 3, agent_key_id: null, agent_signature: null });

    // The SDK's own check, trusting the keys it pinned and the register.
    const keysJson = (await t.inject({ method: 'GET', url: '/api/v1/integrity/keys' })).body;
    const register = await createClient({ baseUrl: 'http://in-process/api/v1', apiKey: key['x-api-key'], fetch: injectFetch }).agentKeys();
    const read = (await t.inject({ method: 'GET', url: `/api/v1/logs/${rows[1]?.log_id}`, headers: key })).json();
    expect(verifyReceipt(read, { publicKeys: keysJson, agentKeys: register })).toMatchObject({ ok: true, agent: { state: 'valid', key_id: planner.keyId } });
    const forged = { ...read, agent_signature: (await signAgentEvent({ event_type: 'tool.result', data: { i: 99 } }, planner)).agent_signature };
    expect(verifyReceipt(forged, { publicKeys: keysJson, agentKeys: register }).failures.map((f) => f.code)).toEqual(['hash_mismatch', 'agent_signature_invalid']);

    // The evidence bundle carries the register's entry; audit-ledger-verify reports each signed entry.
    const dir = fs.mkdtempSync(path.join(t.db.dataDir, 'agent-'));
    const bundle = (await t.inject({ method: 'GET', url: `/api/v1/exports/evidence?trace_id=${trace}`, headers: key })).json();
    expect(bundle.agent_keys).toEqual([{ key_id: planner.keyId, agent_id: 'planner-1', public_key: planner.publicKey, active_from: expect.any(String), active_to: null }]);
    fs.writeFileSync(path.join(dir, 'bundle.json'), JSON.stringify(bundle));
    fs.writeFileSync(path.join(dir, 'keys.json'), keysJson);
    const run = await runCli(['verify-bundle', path.join(dir, 'bundle.json'), '--public-key', path.join(dir, 'keys.json')], {});
    expect(run.stdout).toContain(`OK   entry seq ${rows[0]?.seq} (log_id ${rows[0]?.log_id}): signed by agent planner-1 with key ${planner.keyId}`);
    expect(run.stdout).toContain(`OK   13 of 13 entries signed by their agents: agent planner-1 key ${planner.keyId} (13)`);
    expect(run.code, run.stdout).toBe(0);
    // Checked against a register of the auditor's own that lacks the key: every signed entry fails.
    fs.writeFileSync(path.join(dir, 'register.json'), JSON.stringify({ items: [] }));
    const strict = await runCli(['verify-bundle', path.join(dir, 'bundle.json'), '--public-key', path.join(dir, 'keys.json'), '--agent-keys', path.join(dir, 'register.json')], {});
    expect(strict.stdout).toContain(`FAIL entry seq ${rows[0]?.seq} (log_id ${rows[0]?.log_id}): agent key ${planner.keyId} is not in the register`);
    expect(strict.code).toBe(1);
  });

  it('refuses, with 400 and nothing stored, a signature that does not hold: other content, an unknown key, another agent, only half of it', async () => {
    const before = await entryCount();
    const signed = await signAgentEvent({ event_type: 'tool.called', data: { amount: 10 } }, planner);
    const stranger = await signerOf('planner-1', newPem());
    const other = await signerOf('other-agent', newPem());
    expect((await register({ agent_id: 'other-agent', public_key: other.publicKey })).statusCode).toBe(201);
    const cases: Array<[AuditEvent, number, string, string]> = [
      [{ ...signed, data: { amount: 10_000 } }, 400, 'agent_signature_invalid', '/body/agent_signature'],
      [{ ...signed, extra_field: true }, 400, 'agent_signature_invalid', '/body/agent_signature'],
      [await signAgentEvent({ event_type: 'tool.called', data: { amount: 10 } }, stranger), 400, 'agent_signature_invalid', '/body/agent_key_id'],
      [{ ...signed, agent_id: 'other-agent' }, 400, 'agent_signature_invalid', '/body/agent_id'],
      [{ ...(await signAgentEvent({ event_type: 'x', data: {} }, other)), agent_key_id: planner.keyId }, 400, 'agent_signature_invalid', '/body/agent_id'],
      [{ event_type: 'x', data: {}, agent_key_id: planner.keyId }, 400, 'validation_failed', '/body/agent_signature'],
      [{ ...signed, agent_signature: 'not base64' }, 400, 'validation_failed', '/body/agent_signature'],
    ];
    for (const [event, status, code, field] of cases) {
      const body = problem(await send(event), status, code);
      expect((body.errors as Array<{ field: string }>).map((e) => e.field), JSON.stringify(body)).toContain(field);
    }
    // In a batch, the bad item is named and the batch refused whole (as for any invalid item).
    const batch = await t.inject({ method: 'POST', url: '/api/v1/logs/batch', headers: key, payload: { logs: [signed, { ...signed, data: { amount: 1 } }] } });
    expect(problem(batch, 400, 'agent_signature_invalid').errors).toEqual([expect.objectContaining({ field: '/body/logs/1/agent_signature' })]);
    // A large batch is checked with the signing workers' help: the bad ones are still named, in order.
    const many = await Promise.all(Array.from({ length: 40 }, (_, i) => signAgentEvent({ event_type: 'tool.result', data: { i } }, planner)));
    const bad = many.map((e, i) => (i === 25 ? { ...e, data: { i: -1 } } : i === 31 ? { ...e, agent_key_id: '0123456789abcdef' } : e));
    const refused = problem(await t.inject({ method: 'POST', url: '/api/v1/logs/batch', headers: key, payload: { logs: bad } }), 400, 'agent_signature_invalid');
    expect((refused.errors as Array<{ field: string }>).map((e) => e.field)).toEqual(['/body/logs/25/agent_signature', '/body/logs/31/agent_key_id']);
    expect(await entryCount()).toBe(before + 1); // the other agent's registration only
    expect((await send(signed)).statusCode).toBe(200);
    expect((await t.inject({ method: 'POST', url: '/api/v1/logs/batch', headers: key, payload: { logs: many } })).statusCode).toBe(200);
    expect(await entryCount()).toBe(before + 2 + 40);
  });

  it('rotation and revocation with dates: a replaced key signs nothing more, a revocation dated back turns the entries after it invalid everywhere', async () => {
    const next = await signerOf('planner-1', newPem());
    t.clock.advance(1000);
    const rotated = await register({ agent_id: 'planner-1', public_key: next.publicKey, replaces: planner.keyId });
    expect(rotated.statusCode, rotated.body).toBe(201);
    const keys = (await t.inject({ method: 'GET', url: '/api/v1/agent-keys?agent_id=planner-1', headers: auth })).json().items;
    expect(keys.map((k: { key_id: string; active: boolean; ended_reason: string | null }) => [k.key_id, k.active, k.ended_reason])).toEqual([
      [planner.keyId, false, `replaced by ${next.keyId}`],
      [next.keyId, true, null],
    ]);
    problem(await send(await signAgentEvent({ event_type: 'late', data: {} }, planner)), 400, 'agent_signature_invalid');
    const early = (await send(await signAgentEvent({ event_type: 'step', data: { n: 1 } }, next))).json();
    t.clock.advance(60_000);
    const late = (await send(await signAgentEvent({ event_type: 'step', data: { n: 2 } }, next))).json();
    expect((await verdict(late.log_id)).agent_signature.state).toBe('valid');

    // Compromised since 30 s ago: revoked with that date.
    const effective = new Date(t.clock.now() - 30_000).toISOString();
    problem(await t.inject({ method: 'POST', url: `/api/v1/agent-keys/${next.keyId}/revoke`, headers: auth, payload: { reason: 'leaked', effective_at: new Date(t.clock.now() + 60_000).toISOString() } }), 400, 'validation_failed');
    const revoked = await t.inject({ method: 'POST', url: `/api/v1/agent-keys/${next.keyId}/revoke`, headers: auth, payload: { reason: 'leaked', effective_at: effective } });
    expect(revoked.json()).toMatchObject({ active: false, active_to: effective, ended_reason: 'leaked' });
    problem(await t.inject({ method: 'POST', url: `/api/v1/agent-keys/${next.keyId}/revoke`, headers: auth, payload: { reason: 'again' } }), 409, 'agent_key_ended');
    problem(await t.inject({ method: 'POST', url: '/api/v1/agent-keys/0123456789abcdef/revoke', headers: auth, payload: { reason: 'x' } }), 404, 'not_found');
    expect((await verdict(early.log_id)).agent_signature.state).toBe('valid');
    expect((await verdict(late.log_id)).agent_signature).toMatchObject({ state: 'invalid', detail: expect.stringContaining(`outside agent key ${next.keyId}'s period`) });
    problem(await send(await signAgentEvent({ event_type: 'after', data: {} }, next)), 400, 'agent_signature_invalid');
    const trail = await t.store.db.selectFrom('log_entries').select(['event_type', 'data']).where('company_id', '=', admin.companyId).where('event_type', '=', 'agent_key.revoked').execute();
    expect(JSON.parse(trail[0]?.data as string)).toMatchObject({ key_id: next.keyId, agent_id: 'planner-1', effective_at: effective, reason: 'leaked' });
  });

  it("another company's key is not this company's: its agents' signatures are refused, and its register is not visible", async () => {
    const other = await t.newAccount();
    const otherKey = { 'x-api-key': (await t.createKey(other.token)).key };
    const signer = await signerOf('planner-1', newPem());
    expect((await register({ agent_id: 'planner-1', public_key: signer.publicKey }, { authorization: `Bearer ${other.token}` }, other.companyId)).statusCode).toBe(201);
    problem(await send(await signAgentEvent({ event_type: 'x', data: {} }, signer)), 400, 'agent_signature_invalid');
    expect((await t.inject({ method: 'GET', url: '/api/v1/agent-keys', headers: otherKey })).json().items.map((k: { key_id: string }) => k.key_id)).toEqual([signer.keyId]);
    problem(await t.inject({ method: 'POST', url: `/api/v1/agent-keys/${signer.keyId}/revoke`, headers: auth, payload: { reason: 'not mine' } }), 404, 'not_found');
  });
});
