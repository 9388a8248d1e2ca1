// The compliance lifecycle over HTTP on both stores (issue 17): an erased entry keeps verifying
// everywhere (its own check, the full verification, inclusion proofs, evidence bundles and
// exports checked offline by the verify CLI) and shows as erased; legal holds block retention and
// erasure until every hold covering an entry is released; erasure by subject; bad requests are
// refused with a clear problem and change nothing; every change is an administrative entry.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entryLeafHash, fromHex, verifyInclusion } from '@audit-ledger/core';
import { type Account, problem, startTestApp, type TestApp } from './helpers/app.js';
import { STORE_KINDS } from './helpers/env.js';
import { ingestBatch } from './helpers/ledger.js';
import { runCli } from './helpers/process.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'audit-ledger-compliance-'));
const write = (name: string, content: string) => {
  const f = path.join(tmp, `${randomUUID()}-${name}`);
  fs.writeFileSync(f, content);
  return f;
};
const DAY = 86_400_000;

describe.each(STORE_KINDS)('compliance on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind, { env: { CHECKPOINT_INTERVAL_MS: '0', INTEGRITY_VERIFY_INTERVAL_SECONDS: '0', RETENTION_INTERVAL_SECONDS: '0', RETENTION_BATCH_SIZE: '7', COMPLIANCE_SUBJECT_FIELDS: 'subject_id,customer.email' } });
  });
  afterAll(() => t.close());

  async function company(n = 30) {
    const acct: Account = await t.newAccount();
    const { key } = await t.createKey(acct.token, 1_000_000);
    const trace = randomUUID();
    const other = randomUUID();
    const logs = Array.from({ length: n }, (_, i) => ({
      event_type: i % 2 === 0 ? 'tool.called' : 'llm.call',
      data: { i, ...(i % 5 === 0 ? { customer: { email: 'ana@example.com' } } : {}), ...(i === 3 ? { subject_id: 'ana@example.com' } : {}) },
      trace_id: i < 10 ? trace : other,
      agent_id: i % 3 === 0 ? 'agent-a' : 'agent-b',
    }));
    const ids: string[] = n > 0 ? (await ingestBatch(t, key, logs)).json().log_ids : [];
    const admin = { authorization: `Bearer ${acct.token}` };
    const call = (method: string, url: string, payload?: object, headers: Record<string, string> = admin) =>
      t.inject({ method: method as 'GET', url: `/api/v1${url}`, headers, ...(payload ? { payload } : {}) });
    const entry = async (id: string) => (await call('GET', `/logs/${id}`)).json();
    const adminEntries = async () =>
      (await call('GET', `/logs?source=${encodeURIComponent('audit-ledger/admin')}&limit=1000`)).json().items as Array<{ event_type: string; log_id: string; data: Record<string, unknown> }>;
    const fullVerification = async () => {
      const job = (await call('POST', '/integrity/verify', { entry_signatures: true })).json();
      for (;;) {
        const j = (await call('GET', `/integrity/jobs/${job.job_id}`)).json();
        if (j.status === 'completed' || j.status === 'failed') return j.report;
        await new Promise((r) => setImmediate(r));
      }
    };
    /** After the clock moved past the token's lifetime. */
    const advance = async (ms: number) => {
      t.clock.advance(ms);
      const login = await t.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: acct.email, password: acct.password } });
      admin.authorization = `Bearer ${login.json().access_token}`;
    };
    return { acct, key, trace, other, ids, call, entry, adminEntries, fullVerification, advance };
  }

  it('an erased entry keeps verifying everywhere and shows as erased, with the erasure recorded in the ledger', async () => {
    const c = await company();
    const target = c.ids[4] as string;
    const before = await c.entry(target);
    const res = await c.call('POST', '/compliance/erasures', { log_ids: [target, c.ids[6]], legal_basis: 'GDPR Art. 17(1)(a), request 118' });
    expect(res.statusCode, res.body).toBe(201);
    const erasure = res.json();
    expect(erasure).toMatchObject({ kind: 'request', erased_count: 2, already_erased: 0, log_ids: [target, c.ids[6]], status: 'applied', requested_by: { kind: 'user', email: c.acct.email } });
    expect(erasure.record_log_ids).toHaveLength(1);

    // The entry: no content, the same hash, commitment, signature; still chain_valid.
    const after = await c.entry(target);
    expect(after).toMatchObject({ erased: true, data: null, extra: null, content_salt: null, erasure_id: erasure.record_log_ids[0], hash: before.hash, content_commitment: before.content_commitment, signature: before.signature });
    expect(JSON.stringify(after)).not.toContain('"i":4');
    const verdict = (await c.call('GET', `/logs/${target}/verify`)).json();
    expect(verdict).toMatchObject({ chain_valid: true, signature_valid: true, erased: true, problems: [], merkle_included: true });
    expect(verdict.erasure).toMatchObject({ log_id: erasure.record_log_ids[0], legal_basis: 'GDPR Art. 17(1)(a), request 118', actor: { kind: 'user', email: c.acct.email }, erased_at: expect.any(String) });

    // The erasure record: who, when, which entries, the basis.
    const record = await c.entry(erasure.record_log_ids[0]);
    expect(record).toMatchObject({ event_type: 'compliance.erasure', source: 'audit-ledger/admin', data: { log_ids: [target, c.ids[6]], legal_basis: 'GDPR Art. 17(1)(a), request 118', kind: 'request', actor: { kind: 'user', email: c.acct.email } } });
    // Repeating it erases nothing more and is recorded again (a request was handled).
    const again = (await c.call('POST', '/compliance/erasures', { log_ids: [target], legal_basis: 'repeat' })).json();
    expect(again).toMatchObject({ erased_count: 0, already_erased: 1, log_ids: [] });

    // The inclusion proof still leads to the signed root.
    const cp = (await c.call('GET', '/integrity/checkpoint')).json();
    const proof = (await c.call('GET', `/logs/${target}/proof?tree_size=${cp.tree_size}`)).json();
    expect(verifyInclusion(after.seq, cp.tree_size, entryLeafHash(after.hash), proof.proof.map(fromHex), fromHex(cp.root_hash))).toBe(true);

    // Its record's link removed in the database: /verify reports the problem and does not call it erased.
    await t.store.db.updateTable('log_entries').set({ erasure_id: null }).where('company_id', '=', c.acct.companyId).where('log_id', '=', c.ids[6] as string).execute();
    const orphan = (await c.call('GET', `/logs/${c.ids[6]}/verify`)).json();
    expect(orphan).toMatchObject({ chain_valid: false, erased: false });
    expect(orphan.problems.map((p: { kind: string }) => p.kind)).toEqual(['unrecorded_erasure']);
    await t.store.db.updateTable('log_entries').set({ erasure_id: erasure.record_log_ids[0] }).where('company_id', '=', c.acct.companyId).where('log_id', '=', c.ids[6] as string).execute();

    // The full verification: valid, with the erased entries counted.
    const report = await c.fullVerification();
    expect(report).toMatchObject({ chain_status: 'valid', violation_count: 0, entries_erased: 2 });

    // The evidence bundle of the trace carries the erased entry and its erasure record; the offline verifier accepts it.
    const keys = write('keys.json', (await t.inject({ method: 'GET', url: '/api/v1/integrity/keys' })).body);
    const bundle = (await c.call('GET', `/exports/evidence?trace_id=${c.trace}`)).json();
    expect(bundle.entries.find((e: { entry: { log_id: string } }) => e.entry.log_id === target).entry).toMatchObject({ data: null, content_salt: null, erasure_id: erasure.record_log_ids[0] });
    expect(bundle.erasure_records.map((e: { entry: { log_id: string } }) => e.entry.log_id)).toEqual(erasure.record_log_ids);
    const ok = await runCli(['verify-bundle', write('bundle.json', JSON.stringify(bundle)), '--public-key', keys], { LEDGER_DATA_DIR: path.join(tmp, 'none') });
    expect(ok.stdout).toContain('VERIFIED: every check holds');
    expect(ok.stdout).toContain('NOTE 2 entries with erased content, each accounted for by its erasure record: each commitment, hash and signature still verifies');
    expect(ok.code).toBe(0);
    // Without its erasure record, the bundle no longer accounts for the erasure: FAIL lines, and
    // the NOTE never counts those entries as accounted for (it once said "accounts for each").
    const bare = await runCli(['verify-bundle', write('bundle.json', JSON.stringify({ ...bundle, erasure_records: [] })), '--public-key', keys], { LEDGER_DATA_DIR: path.join(tmp, 'none') });
    expect(bare.code).toBe(1);
    expect(bare.stdout).toContain(`entry seq 4 (log_id ${target}): its content was erased, and no erasure record in the document names it`);
    expect(bare.stdout).not.toContain('accounted for by its erasure record');

    // The complete JSON Lines export verifies against the checkpoint, erased entries and all.
    const jsonl = (await c.call('GET', '/exports/logs?format=jsonl')).body;
    const full = await runCli(['verify-bundle', write('export.jsonl', jsonl), '--checkpoint', write('cp.json', JSON.stringify(cp)), '--public-key', keys], { LEDGER_DATA_DIR: path.join(tmp, 'none') });
    expect(full.stdout).toContain('VERIFIED');
    expect(full.code).toBe(0);
    // Content put back by someone (here: another entry's) is caught as a content mismatch.
    const tampered = jsonl.replace(`"log_id":"${target}"`, `"log_id":"${target}"`).split('\n').map((l) => (l.includes(`"log_id":"${target}"`) ? l.replace('"data":null', '"data":{"i":4}') : l)).join('\n');
    const caught = await runCli(['verify-bundle', write('export.jsonl', tampered), '--checkpoint', write('cp.json', JSON.stringify(cp)), '--public-key', keys], { LEDGER_DATA_DIR: path.join(tmp, 'none') });
    expect(caught.code).toBe(1);
    expect(caught.stdout).toContain('content does not match its commitment');

    // The replay shows the erased event by its skeleton.
    const session = (await c.call('POST', '/forensics/replays', { trace_id: c.trace, metadata: {} })).json();
    const timeline = (await c.call('GET', `/forensics/replays/${session.id}/timeline`)).json();
    expect(timeline.items, JSON.stringify(session)).toBeDefined();
    expect(timeline.items.find((i: { log_id: string }) => i.log_id === target)).toMatchObject({ erased: true, data: {}, integrity: 'valid' });
  });

  it('erases every entry of a data subject, found at the configured paths, and never writes the identifier into the record', async () => {
    const c = await company();
    const res = await c.call('POST', '/compliance/erasures', { subject: 'ana@example.com', legal_basis: 'GDPR Art. 17' });
    expect(res.statusCode, res.body).toBe(201);
    const expected = [0, 3, 5, 10, 15, 20, 25].map((i) => c.ids[i]);
    expect(res.json().log_ids).toEqual(expected);
    expect(res.json().erased_count).toBe(7);
    for (const id of expected) expect((await c.entry(id as string)).erased).toBe(true);
    expect((await c.entry(c.ids[1] as string)).erased).toBe(false);
    const record = await c.entry(res.json().record_log_ids[0]);
    expect(JSON.stringify(record)).not.toContain('ana@example.com');
    expect(await c.fullVerification()).toMatchObject({ chain_status: 'valid', entries_erased: 7 });
  });

  it('erasure by subject matches the JSON string only, on both stores: never a number, boolean, null, object or array that prints the same', async () => {
    const c = await company(0);
    const values: unknown[] = ['259398927', 259398927, 'true', true, 'null', null, '{"a":1}', { a: 1 }, '[1]', [1], 259398927.0];
    const ids: string[] = (await ingestBatch(t, c.key, values.map((v) => ({ event_type: 'typed.subject', data: { subject_id: v } })))).json().log_ids;
    for (const subject of ['259398927', 'true', 'null', '{"a":1}', '[1]']) {
      const res = await c.call('POST', '/compliance/erasures', { subject, legal_basis: 'GDPR Art. 17' });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().log_ids, subject).toEqual([ids[values.indexOf(subject)]]);
    }
    // Every entry whose subject was not a string still has its content.
    for (const [i, v] of values.entries()) expect((await c.entry(ids[i] as string)).erased, JSON.stringify(v)).toBe(typeof v === 'string');
  });

  it('legal holds block erasure and retention until every hold covering an entry is released', async () => {
    const c = await company();
    // Two overlapping holds: the first trace, and agent-a (entries 0, 3, 6, …).
    const traceHold = await c.call('POST', '/compliance/holds', { scope: { trace_id: c.trace }, reason: 'litigation', case_reference: 'CASE-7' });
    expect(traceHold.statusCode, traceHold.body).toBe(201);
    expect(traceHold.json()).toMatchObject({ status: 'active', scope: { trace_id: c.trace }, case_reference: 'CASE-7', created_by: { kind: 'user' } });
    const agentHold = (await c.call('POST', '/compliance/holds', { scope: { agent_id: 'agent-a' }, reason: 'regulator inquiry' })).json();

    // Erasure of a held entry: 409 naming the hold; nothing erased, nothing recorded.
    const entriesBefore = (await c.adminEntries()).length;
    const refused = problem(await c.call('POST', '/compliance/erasures', { log_ids: [c.ids[13], c.ids[2]], legal_basis: 'x' }), 409, 'under_legal_hold');
    expect(refused).toMatchObject({ hold_id: traceHold.json().id, case_reference: 'CASE-7', log_ids: [c.ids[2]] });
    expect((await c.entry(c.ids[13] as string)).erased).toBe(false);
    expect((await c.adminEntries()).length).toBe(entriesBefore);

    // Retention (content_days 0: everything is due) erases only what no hold covers.
    await c.advance(DAY);
    expect((await c.call('PUT', '/compliance/retention', { content_days: 0 })).statusCode).toBe(200);
    const run = (await c.call('POST', '/compliance/retention/run')).json();
    const held = (i: number) => i < 10 || i % 3 === 0;
    const free = c.ids.filter((_, i) => !held(i));
    expect(run.erased_count).toBe(free.length);
    for (const [i, id] of c.ids.entries()) expect((await c.entry(id)).erased, `entry ${i}`).toBe(!held(i));
    expect(run.retention).toMatchObject({ content_days: 0, erased_total: free.length, pending_erasures: 0 });
    expect((await c.call('GET', '/integrity/status')).json().retention).toMatchObject({ content_days: 0, erased_total: free.length, pending_erasures: 0, last_run_at: expect.any(String) });
    // Batches of RETENTION_BATCH_SIZE, each one compliance.erasure entry by the service.
    const records = (await c.adminEntries()).filter((e) => e.event_type === 'compliance.erasure');
    expect(records.length).toBeGreaterThan(1);
    expect(records.every((r) => (r.data.actor as { kind: string }).kind === 'service' && (r.data.log_ids as string[]).length <= 7)).toBe(true);

    // Releasing the trace hold frees the trace's entries that agent-a's hold does not cover.
    problem(await c.call('POST', `/compliance/holds/${traceHold.json().id}/release`, {}), 400, 'validation_failed');
    const released = await c.call('POST', `/compliance/holds/${traceHold.json().id}/release`, { reason: 'case closed' });
    expect(released.json()).toMatchObject({ status: 'released', release_reason: 'case closed', released_by: { kind: 'user' } });
    problem(await c.call('POST', `/compliance/holds/${traceHold.json().id}/release`, { reason: 'again' }), 409, 'hold_released');
    await c.call('POST', '/compliance/retention/run');
    for (const [i, id] of c.ids.entries()) expect((await c.entry(id)).erased, `entry ${i}`).toBe(i % 3 !== 0);
    await c.call('POST', `/compliance/holds/${agentHold.id}/release`, { reason: 'inquiry over' });
    await c.call('POST', '/compliance/retention/run');
    for (const id of c.ids) expect((await c.entry(id)).erased).toBe(true);
    expect((await c.call('GET', '/compliance/holds')).json().items.map((h: { status: string }) => h.status)).toEqual(['released', 'released']);
    expect(await c.fullVerification()).toMatchObject({ chain_status: 'valid', violation_count: 0, entries_erased: 30 });
    // Every change was an administrative entry.
    const types = (await c.adminEntries()).map((e) => e.event_type);
    for (const ty of ['compliance.hold_placed', 'compliance.hold_released', 'compliance.retention_changed', 'compliance.erasure']) expect(types).toContain(ty);
  });

  it('retention by event type and by age, with the time range hold', async () => {
    const c = await company(10);
    // No policy yet: nothing would be erased.
    expect((await c.call('GET', '/compliance/retention/preview')).json()).toEqual({ due: 0, held: 0, capped: false, cutoffs: { content: null, by_event_type: {} } });
    await c.advance(3 * DAY);
    const late = (await ingestBatch(t, c.key, [{ event_type: 'tool.called', data: { late: true } }])).json().log_ids[0];
    const placed = await c.call('POST', '/compliance/holds', { scope: { from: new Date(t.clock.ms - 60_000).toISOString() }, reason: 'recent activity' });
    expect(placed.statusCode, placed.body).toBe(201);
    const put = await c.call('PUT', '/compliance/retention', { content_days: null, by_event_type: { 'tool.called': 2 } });
    expect(put.json()).toMatchObject({ content_days: null, by_event_type: { 'tool.called': 2 } });
    // The preview says what the run will erase, and erases nothing.
    const preview = (await c.call('GET', '/compliance/retention/preview')).json();
    expect(preview).toMatchObject({ due: 5, held: 0, capped: false, cutoffs: { content: null, by_event_type: { 'tool.called': new Date(t.clock.ms - 2 * DAY).toISOString() } } });
    expect((await c.entry(c.ids[0] as string)).erased).toBe(false);
    const hold = (await c.call('POST', '/compliance/holds', { scope: { trace_id: c.trace }, reason: 'preview' })).json();
    expect((await c.call('GET', '/compliance/retention/preview')).json()).toMatchObject({ due: 0, held: 5 });
    await c.call('POST', `/compliance/holds/${hold.id}/release`, { reason: 'done' });
    await c.call('POST', '/compliance/retention/run');
    for (const [i, id] of c.ids.entries()) expect((await c.entry(id)).erased, `entry ${i}`).toBe(i % 2 === 0);
    expect((await c.call('GET', '/compliance/retention/preview')).json()).toMatchObject({ due: 0, held: 0 });
    expect((await c.entry(late)).erased).toBe(false);
    expect((await c.call('GET', '/compliance/retention')).json()).toMatchObject({ by_event_type: { 'tool.called': 2 }, erased_total: 5 });
  });

  it('time range holds compare instants: offsets, missing milliseconds and the exact edges hold on erasure and retention', async () => {
    const c = await company(0);
    // Three entries, each at a known instant with milliseconds.
    t.clock.advance(1000 - (t.clock.ms % 1000) + 732);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await ingestBatch(t, c.key, [{ event_type: 'tool.called', data: { i } }])).json().log_ids[0]);
      t.clock.advance(60_000);
    }
    const at = await Promise.all(ids.map(async (id) => Date.parse((await c.entry(id)).created_at as string)));
    expect(new Date(at[0] as number).getUTCMilliseconds()).toBe(732);
    const inOffset = (ms: number, offsetHours: number) => `${new Date(ms + offsetHours * 3_600_000).toISOString().slice(0, 19)}+0${offsetHours}:00`;
    const noMillis = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}Z`;
    // Hold A: from an hour before entry 0, written at +02:00 (as text it sorts after every entry).
    // Hold B: [entry 1's second without milliseconds, entry 2's exact instant): covers entry 1 only.
    const holdA = await c.call('POST', '/compliance/holds', { scope: { from: inOffset((at[0] as number) - 3_600_000, 2), to: inOffset((at[0] as number) + 1000, 2) }, reason: 'offset' });
    expect(holdA.statusCode, holdA.body).toBe(201);
    expect(holdA.json().scope.from).toMatch(/\+02:00$/);
    const holdB = await c.call('POST', '/compliance/holds', { scope: { from: noMillis(at[1] as number), to: new Date(at[2] as number).toISOString() }, reason: 'no millis' });
    expect(holdB.statusCode, holdB.body).toBe(201);
    for (const [i, hold] of [[0, holdA], [1, holdB]] as const) {
      const refused = problem(await c.call('POST', '/compliance/erasures', { log_ids: [ids[i]], legal_basis: 'x' }), 409, 'under_legal_hold');
      expect(refused).toMatchObject({ hold_id: hold.json().id, log_ids: [ids[i]] });
    }
    // Retention with everything due erases only entry 2 (at hold B's `to`, which is excluded).
    await c.call('PUT', '/compliance/retention', { content_days: 0 });
    await c.call('POST', '/compliance/retention/run');
    expect(await Promise.all(ids.map(async (id) => (await c.entry(id)).erased))).toEqual([false, false, true]);
    // A leap second names no instant: refused wherever a time range is given, nothing stored.
    const holdsBefore = (await c.call('GET', '/compliance/holds')).json().items.length;
    problem(await c.call('POST', '/compliance/holds', { scope: { from: '2026-12-31T23:59:60Z' }, reason: 'leap' }), 400, 'validation_failed');
    expect((await c.call('GET', '/compliance/holds')).json().items.length).toBe(holdsBefore);
    problem(await c.call('GET', '/logs?from=2016-12-31T23:59:60Z'), 400, 'validation_failed');
    problem(await c.call('GET', '/exports/logs?format=jsonl&to=2016-12-31T23:59:60Z'), 400, 'validation_failed');
    // Search compares instants too: an offset bound finds entry 1 and 2, not 0.
    const found = (await c.call('GET', `/logs?event_type=tool.called&from=${encodeURIComponent(inOffset((at[1] as number) - 1, 5))}`)).json().items.map((e: { log_id: string }) => e.log_id);
    expect(found.sort()).toEqual([ids[1], ids[2]].sort());
  });

  it('refuses bad requests with a clear problem and changes nothing', async () => {
    const c = await company(5);
    const adminBefore = (await c.adminEntries()).length;
    const bad: Array<[string, string, object | undefined, number, string]> = [
      ['PUT', '/compliance/retention', { content_days: -1 }, 400, 'validation_failed'],
      ['PUT', '/compliance/retention', { content_days: 'ten' }, 400, 'validation_failed'],
      ['PUT', '/compliance/retention', { content_days: 3, by_event_type: { x: -2 } }, 400, 'validation_failed'],
      ['PUT', '/compliance/retention', { content_days: 3, forever: true }, 400, 'validation_failed'],
      ['PUT', '/compliance/retention', { content_days: 3, by_event_type: { '': 1 } }, 400, 'validation_failed'],
      ['PUT', '/compliance/retention', { content_days: 3, by_event_type: { ['x'.repeat(201)]: 1 } }, 400, 'validation_failed'],
      ['POST', '/compliance/erasures', { log_ids: [String(c.ids[0]).toUpperCase()], legal_basis: 'x' }, 400, 'validation_failed'],
      ['POST', '/compliance/holds', { scope: {}, reason: 'r' }, 400, 'validation_failed'],
      ['POST', '/compliance/holds', { scope: { trace_id: c.trace, agent_id: 'a' }, reason: 'r' }, 400, 'validation_failed'],
      ['POST', '/compliance/holds', { scope: { trace_id: 'not-a-uuid' }, reason: 'r' }, 400, 'validation_failed'],
      ['POST', '/compliance/holds', { scope: { from: '2026-03-02T00:00:00Z', to: '2026-03-01T00:00:00Z' }, reason: 'r' }, 400, 'validation_failed'],
      ['POST', '/compliance/holds', { scope: { all: true } }, 400, 'validation_failed'],
      ['POST', `/compliance/holds/${randomUUID()}/release`, { reason: 'r' }, 404, 'not_found'],
      ['POST', '/compliance/erasures', { legal_basis: 'x' }, 400, 'validation_failed'],
      ['POST', '/compliance/erasures', { log_ids: [c.ids[0]], subject: 's', legal_basis: 'x' }, 400, 'validation_failed'],
      ['POST', '/compliance/erasures', { log_ids: [c.ids[0]] }, 400, 'validation_failed'],
      ['POST', '/compliance/erasures', { log_ids: ['nope'], legal_basis: 'x' }, 400, 'validation_failed'],
      ['POST', '/compliance/erasures', { log_ids: [c.ids[0], randomUUID()], legal_basis: 'x' }, 404, 'not_found'],
    ];
    for (const [method, url, body, status, code] of bad) problem(await c.call(method, url, body), status, code);
    // The service's own entries are the compliance record: not erasable.
    const own = (await c.adminEntries())[0]?.log_id;
    if (own) problem(await c.call('POST', '/compliance/erasures', { log_ids: [own, c.ids[0]], legal_basis: 'x' }), 409, 'not_erasable');
    // Not an admin: the API key and an auditor read, but change nothing.
    const auditor = await t.newAccount({ role: 'auditor', company: c.acct.companyName });
    for (const headers of [{ 'x-api-key': c.key }, { authorization: `Bearer ${auditor.token}` }] as Array<Record<string, string>>) {
      problem(await c.call('POST', '/compliance/erasures', { log_ids: [c.ids[0]], legal_basis: 'x' }, headers), 403, 'forbidden');
      problem(await c.call('PUT', '/compliance/retention', { content_days: 1 }, headers), 403, 'forbidden');
      expect((await c.call('GET', '/compliance/holds', undefined, headers)).statusCode).toBe(200);
    }
    for (const id of c.ids) expect((await c.entry(id)).erased).toBe(false);
    expect((await c.adminEntries()).length).toBe(adminBefore);
    expect((await c.call('GET', '/compliance/retention')).json()).toMatchObject({ content_days: null, by_event_type: {}, updated_at: null });
    // Another company sees none of it.
    const other = await company(1);
    expect((await other.call('GET', '/compliance/holds')).json().items).toEqual([]);
    problem(await other.call('POST', '/compliance/erasures', { log_ids: [c.ids[0]], legal_basis: 'x' }), 404, 'not_found');
  });
});

describe('erased content leaves the SQLite files (GDPR Art. 17)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite', { env: { CHECKPOINT_INTERVAL_MS: '0', INTEGRITY_VERIFY_INTERVAL_SECONDS: '0', RETENTION_INTERVAL_SECONDS: '0' } });
  });
  afterAll(() => t.close());

  /** Every byte of the database's files: the ledger and its search index (ledger.search.db), each with its WAL and shared memory. */
  const files = () =>
    fs
      .readdirSync(t.db.dataDir as string)
      .filter((f) => f.startsWith('ledger.db') || f.startsWith('ledger.search.db'))
      .map((f) => fs.readFileSync(path.join(t.db.dataDir as string, f)));
  const found = (needle: string | Buffer) => files().some((b) => b.includes(needle));

  it.each(['request', 'retention'])('no byte of the content or its salt is in any file once an erasure by %s completes', async (how) => {
    const acct = await t.newAccount();
    const { key } = await t.createKey(acct.token, 1_000_000);
    const admin = { authorization: `Bearer ${acct.token}` };
    const canary = randomUUID();
    const email = `canary-${canary}@example.com`;
    const ssn = `SSN-${canary.slice(0, 8)}`;
    // A word of its own, for the search index: it keeps words, not the text, and a word's start
    // may be shared with the word before it, so its last 16 characters are what is looked for.
    const word = canary.replace(/-/g, '');
    const ids: string[] = (await ingestBatch(t, key, [{ event_type: 'kyc.checked', data: { subject_id: email, ssn, note: `about ${email} ${word}` } }, { event_type: 'kept', data: { n: 1 } }])).json().log_ids;
    const before = (await t.inject({ method: 'GET', url: `/api/v1/logs/${ids[0]}`, headers: admin })).json();
    const salt = before.content_salt as string;
    // Indexed (after the commit): the search finds it.
    expect((await t.inject({ method: 'GET', url: `/api/v1/logs/search?q=${word}&wait_for_seq=${before.seq}`, headers: admin })).json().items).toHaveLength(1);
    // Written: each is in the files now (the test would see them if they stayed). The salt is
    // stored as its base64 text; its raw bytes are looked for after the erasure all the same.
    for (const needle of [email, ssn, salt, word.slice(-16)]) expect(found(needle), needle).toBe(true);

    if (how === 'request') {
      const res = await t.inject({ method: 'POST', url: '/api/v1/compliance/erasures', headers: admin, payload: { subject: email, legal_basis: 'GDPR Art. 17' } });
      expect(res.statusCode, res.body).toBe(201);
    } else {
      await t.inject({ method: 'PUT', url: '/api/v1/compliance/retention', headers: admin, payload: { content_days: null, by_event_type: { 'kyc.checked': 0 } } });
      t.clock.advance(1000);
      expect((await t.inject({ method: 'POST', url: '/api/v1/compliance/retention/run', headers: admin })).json().erased_count).toBe(1);
    }
    expect((await t.inject({ method: 'GET', url: `/api/v1/logs/${ids[0]}`, headers: admin })).json()).toMatchObject({ erased: true, hash: before.hash });
    for (const needle of [email, ssn, salt, Buffer.from(salt, 'base64'), word.slice(-16)]) expect(found(needle), String(needle)).toBe(false);
    // What was not erased is still there, and the ledger still verifies.
    expect((await t.inject({ method: 'GET', url: `/api/v1/logs/${ids[1]}`, headers: admin })).json().data).toEqual({ n: 1 });
    expect((await t.inject({ method: 'GET', url: `/api/v1/logs/${ids[0]}/verify`, headers: admin })).json()).toMatchObject({ chain_valid: true, signature_valid: true });
  });
});
