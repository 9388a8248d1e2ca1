// Separation of duties under attack (issue 42, defects 1–8), black-box on both stores: who may
// decide an approval request, through which route or alias, after which escalation; what an
// execution must name to be covered; standing-approval schemas scoped per company and bounded in
// CPU; a use taken once even when the process fails between taking it and recording the check.
// The property tests try the ways around each rule: a model of who may decide is run against the
// service over random sequences of approvals, rejections and escalations by every kind of
// credential, and random execution shapes against the action binding. Short here (fixed seeds);
// CHAOS=1 (npm run chaos) runs them long with fresh seeds.
import { createHash, randomUUID } from 'node:crypto';
import { canonicalJson, type Json } from '@audit-ledger/core';
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHAOS } from './fault/harness.js';
import { type Account, FakeClock, problem, startTestApp, type TestApp } from './helpers/app.js';
import { STORE_KINDS } from './helpers/env.js';
import { reviewCompany } from './helpers/governance.js';

const hashOf = (v: unknown) => createHash('sha256').update(canonicalJson(v as Json)).digest('hex');
const RUNS = CHAOS ? 150 : 12;
const SEED = CHAOS ? {} : { seed: 20261127 };

describe.each(STORE_KINDS)('separation of duties on %s', (kind) => {
  let t: TestApp;
  const clock = new FakeClock();
  beforeAll(async () => {
    t = await startTestApp(kind, { clock, env: { CHECKPOINT_INTERVAL_MS: '0' } });
  });
  afterAll(() => t.close());

  /** A company with an admin, three reviewers, an auditor, an API key and a team "ops" of r1 alone. */
  async function company() {
    const base = await reviewCompany(t, 3);
    const { admin, auditor, key, as, agent, call } = base;
    const [r1, r2, r3] = base.reviewers as [Account, Account, Account];
    expect((await call('PUT', '/approval-teams/ops', as(admin), { members: [r1.email] })).statusCode).toBe(200);
    const count = async (eventType: string) => (await call('GET', `/logs?event_type=${eventType}&limit=1000`, as(admin))).json().items.length as number;
    const head = async () => (await call('GET', '/logs?limit=1&order=desc', as(admin))).json().items[0]?.seq as number;
    return { admin, r1, r2, r3, auditor, key, as, agent, call, count, head };
  }
  type Company = Awaited<ReturnType<typeof company>>;

  const requestFor = async (c: Company, body: Record<string, unknown> = {}) => {
    const res = await c.call('POST', '/approvals', c.agent, { action: 'refund.issue', tool: 'payments', arguments: { order: 'A-1', amount: 10 }, reason: 'asked', ...body });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: string; arguments_hash: string };
  };

  it('1: an API key cannot reroute an approval request through the /hitl/escalate alias (403, nothing stored), as through /approvals/{id}/escalate', async () => {
    const c = await company();
    const a = await requestFor(c, { assignee: 'ops' });
    const before = await c.head();
    problem(await c.call('POST', '/hitl/escalate', c.agent, { approval_id: a.id, current_reviewer: 'ops', escalation_target: c.r2.email, escalation_reason: 'faster' }), 403, 'forbidden');
    problem(await c.call('POST', `/approvals/${a.id}/escalate`, c.agent, { to: c.r2.email, reason: 'faster' }), 403, 'forbidden');
    expect(await c.head()).toBe(before);
    expect((await c.call('GET', `/approvals/${a.id}`, c.agent)).json()).toMatchObject({ assignee: null, team: 'ops' });
    // So a reviewer outside the team still cannot decide it.
    problem(await c.call('POST', `/approvals/${a.id}/approve`, c.as(c.r2), {}), 403, 'not_in_team');
  });

  it('2: escalation to an unknown team or person is refused (400, nothing stored); escalation to a person restricts the decision to that person; only who may decide may escalate', async () => {
    const c = await company();
    const a = await requestFor(c, { assignee: 'ops' });
    const before = await c.head();
    for (const to of ['nonexistent-team', 'someone@example.com', c.auditor.email]) {
      problem(await c.call('POST', `/approvals/${a.id}/escalate`, c.as(c.r1), { to, reason: 'r' }), 400, 'validation_failed');
      problem(await c.call('POST', '/hitl/escalate', c.as(c.r1), { approval_id: a.id, current_reviewer: 'x', escalation_target: to, escalation_reason: 'r' }), 400, 'validation_failed');
    }
    // A reviewer outside the team may not hand it on (to themselves or anyone).
    problem(await c.call('POST', `/approvals/${a.id}/escalate`, c.as(c.r2), { to: c.r2.email, reason: 'mine now' }), 403, 'not_in_team');
    expect(await c.head()).toBe(before);
    // The team's member hands it to r2 in person: r2 decides, r3 and r1 may not.
    const esc = await c.call('POST', `/approvals/${a.id}/escalate`, c.as(c.r1), { to: c.r2.email.toUpperCase(), reason: 'r2 knows the customer' });
    expect(esc.statusCode, esc.body).toBe(200);
    expect(esc.json()).toMatchObject({ assignee: c.r2.email });
    problem(await c.call('POST', `/approvals/${a.id}/approve`, c.as(c.r3), {}), 403, 'not_in_team');
    problem(await c.call('POST', `/approvals/${a.id}/approve`, c.as(c.r1), {}), 403, 'not_in_team');
    const ok = await c.call('POST', `/approvals/${a.id}/approve`, c.as(c.r2), {});
    expect(ok.json()).toMatchObject({ status: 'approved', decided_by: { email: c.r2.email } });
    const [entry] = (await c.call('GET', '/logs?event_type=approval.escalated&limit=1', c.as(c.admin))).json().items;
    expect(entry.data).toMatchObject({ to: c.r2.email, to_kind: 'person', actor: { kind: 'user', email: c.r1.email } });
  });

  it('3: the /hitl/approve alias approves only on an explicit approve value; any other status is a 400 that decides nothing', async () => {
    const c = await company();
    const a = (await c.call('POST', '/hitl/approve', c.agent, { reason: 'needs a human' })).json();
    const before = await c.head();
    for (const status of ['reject ', 'REJECTED ', 'declined ', 'no', 'deny!', 'Approved', 'ok', 'yes', '', 'true']) {
      problem(await c.call('POST', '/hitl/approve', c.as(c.r1), { approval_id: a.id, auth_response: { status } }), 400, 'validation_failed');
    }
    problem(await c.call('POST', '/hitl/approve', c.as(c.r1), { approval_id: a.id }), 400, 'validation_failed');
    problem(await c.call('POST', '/hitl/approve', c.as(c.r1), { approval_id: a.id, auth_response: {} }), 400, 'validation_failed');
    expect(await c.head()).toBe(before);
    expect((await c.call('GET', `/approvals/${a.id}`, c.agent)).json().status).toBe('pending');
    for (const [status, outcome] of [['declined', 'rejected'], ['deny', 'rejected'], ['reject', 'rejected'], ['approved', 'approved'], ['approve', 'approved']] as const) {
      const b = (await c.call('POST', '/hitl/approve', c.agent, { reason: 'again' })).json();
      const res = await c.call('POST', '/hitl/approve', c.as(c.r1), { approval_id: b.id, auth_response: { status, reason: 'said' } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().status).toBe(outcome);
    }
  });

  it('4: an execution must name the approved action: omitted, non-string, empty or another action is a mismatch; a non-string approval_id is checked and a violation; a standing approval covers its action only', async () => {
    const c = await company();
    const args = { order: 'A-1', amount: 10 };
    const a = await requestFor(c, { max_uses: 100 });
    await c.call('POST', `/approvals/${a.id}/approve`, c.as(c.r1), {});
    const run = async (data: Record<string, unknown>, eventType = 'action.executed') => {
      const res = await c.call('POST', '/logs', c.agent, { event_type: eventType, data });
      expect(res.statusCode, res.body).toBe(200);
      return res.json();
    };
    for (const action of [undefined, 123, '', ['refund.issue'], 'wire.transfer']) {
      const r = await run({ approval_id: a.id, arguments: args, ...(action === undefined ? {} : { action }) });
      expect(r.approval_check, JSON.stringify(action)).toMatchObject({ result: 'mismatch' });
    }
    // The tool alone does not stand for an action.executed's action... unless no action is sent and the tool is the approved one (a tool call reported over OTLP).
    expect((await run({ approval_id: a.id, arguments: args, tool: 'payments' }, 'tool.called')).approval_check.result).toBe('ok');
    expect((await run({ approval_id: a.id, arguments: args, tool: 'other' }, 'tool.called')).approval_check.result).toBe('mismatch');
    expect((await run({ approval_id: a.id, arguments: args, action: 'refund.issue' })).approval_check.result).toBe('ok');

    const violationsBefore = await c.count('approval.checked');
    for (const approvalId of [[a.id], { id: a.id }, 42, '', null]) {
      const r = await run({ approval_id: approvalId, action: 'refund.issue', arguments: args });
      expect(r.approval_check, JSON.stringify(approvalId)).toMatchObject({ result: 'unknown' });
    }
    expect(await c.count('approval.checked')).toBe(violationsBefore + 5);

    const standing = await c.call('POST', '/approvals/standing', c.as(c.admin), { action: 'refund.small', tool: 'payments', valid_until: new Date(clock.now() + 86_400_000).toISOString(), reason: 'small refunds' });
    expect(standing.statusCode, standing.body).toBe(201);
    const s = standing.json();
    expect((await run({ approval_id: s.id, action: 'wire.transfer', tool: 'payments', arguments: {} })).approval_check.result).toBe('mismatch');
    expect((await run({ approval_id: s.id, action: 123, tool: 'payments', arguments: {} })).approval_check.result).toBe('mismatch');
    expect((await run({ approval_id: s.id, action: 'refund.small', tool: 'payments', arguments: {} })).approval_check.result).toBe('ok');
    expect((await run({ approval_id: s.id, tool: 'payments', arguments: {} }, 'tool.called')).approval_check.result).toBe('ok');
  });

  it("5: standing-approval schemas are scoped per company: B cannot $ref A's $id, A's $id does not block B; constraints that cannot be evaluated are a recorded mismatch, never a refused request after the commit", async () => {
    const a = await company();
    const b = await company();
    const until = new Date(clock.now() + 86_400_000).toISOString();
    const grant = (c: Company, constraints: unknown) => c.call('POST', '/approvals/standing', c.as(c.admin), { action: 'refund.small', valid_until: until, reason: 'r', constraints });
    const idA = `urn:shared:${randomUUID()}`;
    expect((await grant(a, { $id: idA, type: 'object', properties: { amount: { type: 'number', maximum: 100 } } })).statusCode).toBe(201);
    const headB = await b.head();
    problem(await grant(b, { type: 'object', properties: { amount: { $ref: `${idA}#/properties/amount` } } }), 400, 'validation_failed');
    expect(await b.head()).toBe(headB);
    const own = await grant(b, { $id: idA, type: 'object', properties: { amount: { type: 'number', maximum: 5 } } });
    expect(own.statusCode, own.body).toBe(201);
    const exec = async (c: Company, id: string, args: unknown) => (await c.call('POST', '/logs', c.agent, { event_type: 'action.executed', data: { action: 'refund.small', approval_id: id, arguments: args } }));
    expect((await exec(b, own.json().id, { amount: 50 })).json().approval_check.result).toBe('mismatch');
    expect((await exec(b, own.json().id, { amount: 5 })).json().approval_check.result).toBe('ok');

    // A stored schema this version cannot compile (written by an earlier version, or by hand): the
    // execution is stored, answered 200, and its check recorded as a mismatch.
    const broken = await grant(b, { type: 'object' });
    await t.store.db.updateTable('approvals').set({ constraints: JSON.stringify({ type: 'object', properties: { x: { $ref: 'urn:nowhere' } } }) }).where('company_id', '=', b.admin.companyId).where('approval_id', '=', broken.json().id).execute();
    const checked = await b.count('approval.checked');
    const res = await exec(b, broken.json().id, { x: 1 });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().approval_check).toMatchObject({ result: 'mismatch', detail: expect.stringContaining('cannot be evaluated') });
    expect(await b.count('approval.checked')).toBe(checked + 1);
  });

  it('6: a catastrophic pattern in a tenant schema runs in linear time (RE2), and a pattern RE2 cannot run is refused at grant', async () => {
    const c = await company();
    const until = new Date(clock.now() + 86_400_000).toISOString();
    const s = await c.call('POST', '/approvals/standing', c.as(c.admin), { action: 'lookup', valid_until: until, reason: 'r', constraints: { type: 'object', properties: { q: { type: 'string', pattern: '^(a+)+$' } } } });
    expect(s.statusCode, s.body).toBe(201);
    // 34 a's and a "!": a backtracking engine takes minutes (3.3 s at 28, doubling with each "a"),
    // past the test's timeout; RE2 microseconds.
    const bad = await c.call('POST', '/logs', c.agent, { event_type: 'action.executed', data: { action: 'lookup', approval_id: s.json().id, arguments: { q: `${'a'.repeat(34)}!` } } });
    expect(bad.json().approval_check.result).toBe('mismatch');
    const good = await c.call('POST', '/logs', c.agent, { event_type: 'action.executed', data: { action: 'lookup', approval_id: s.json().id, arguments: { q: 'a'.repeat(60) } } });
    expect(good.json().approval_check.result).toBe('ok');
    problem(await c.call('POST', '/approvals/standing', c.as(c.admin), { action: 'lookup', valid_until: until, reason: 'r', constraints: { type: 'object', properties: { q: { type: 'string', pattern: '^(a)\\1$' } } } }), 400, 'validation_failed');
  });

  it('7: a failure between taking a use and recording its check leaves the use findable: the idempotent retry is ok, one use, one approval.checked', async () => {
    const c = await company();
    const a = await requestFor(c);
    await c.call('POST', `/approvals/${a.id}/approve`, c.as(c.r1), {});
    const body = { event_type: 'action.executed', idempotency_key: `run-${randomUUID()}`, data: { action: 'refund.issue', approval_id: a.id, arguments: { order: 'A-1', amount: 10 } } };
    // A crash between taking the use and recording the check, made with real faults in the
    // database: the check entry's append fails, and so does any give-back of the use (a process
    // killed there gives nothing back).
    if (kind === 'sqlite') {
      await sql`CREATE TRIGGER fail_checked BEFORE INSERT ON log_entries WHEN NEW.event_type = 'approval.checked' BEGIN SELECT RAISE(ABORT, 'injected fault'); END`.execute(t.store.db);
      await sql`CREATE TRIGGER fail_give_back BEFORE UPDATE ON approvals WHEN NEW.uses < OLD.uses BEGIN SELECT RAISE(ABORT, 'injected fault'); END`.execute(t.store.db);
    } else {
      await sql`CREATE OR REPLACE FUNCTION fail_checked() RETURNS trigger AS $$ BEGIN IF NEW.event_type = 'approval.checked' THEN RAISE EXCEPTION 'injected fault'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`.execute(t.store.db);
      await sql`CREATE TRIGGER fail_checked BEFORE INSERT ON log_entries FOR EACH ROW EXECUTE FUNCTION fail_checked()`.execute(t.store.db);
      await sql`CREATE OR REPLACE FUNCTION fail_give_back() RETURNS trigger AS $$ BEGIN IF NEW.uses < OLD.uses THEN RAISE EXCEPTION 'injected fault'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`.execute(t.store.db);
      await sql`CREATE TRIGGER fail_give_back BEFORE UPDATE ON approvals FOR EACH ROW EXECUTE FUNCTION fail_give_back()`.execute(t.store.db);
    }
    let first;
    try {
      first = await c.call('POST', '/logs', c.agent, body);
    } finally {
      await sql`DROP TRIGGER fail_checked${kind !== 'sqlite' ? sql` ON log_entries` : sql``}`.execute(t.store.db);
      await sql`DROP TRIGGER fail_give_back${kind !== 'sqlite' ? sql` ON approvals` : sql``}`.execute(t.store.db);
    }
    expect(first.statusCode, first.body).toBeGreaterThanOrEqual(500);
    const retry = await c.call('POST', '/logs', c.agent, body);
    expect(retry.statusCode, retry.body).toBe(200);
    expect(retry.json().approval_check).toMatchObject({ result: 'ok', check_log_id: expect.any(String) });
    const executions = (await c.call('GET', '/logs?event_type=action.executed&limit=10', c.as(c.admin))).json().items;
    expect(executions).toHaveLength(1);
    const checks = (await c.call('GET', '/logs?event_type=approval.checked&limit=10', c.as(c.admin))).json().items;
    expect(checks.map((e: { data: { result: string; execution_log_id: string } }) => [e.data.result, e.data.execution_log_id])).toEqual([['ok', executions[0].log_id]]);
    expect((await c.call('GET', `/approvals/${a.id}`, c.agent)).json()).toMatchObject({ uses: 1, usable: false });
    // Once more: the retry answers the same check, takes nothing.
    expect((await c.call('POST', '/logs', c.agent, body)).json().approval_check.check_log_id).toBe(retry.json().approval_check.check_log_id);
  });

  it('8: valid_until with a negative offset is compared as an instant; unknown formats and schemas without a type are refused', async () => {
    const c = await company();
    // 06:00 at -05:00 is 11:00Z: later than a Z time whose text sorts after it.
    const at = new Date(clock.now());
    const day = at.toISOString().slice(0, 10);
    clock.ms = Date.parse(`${day}T09:00:00Z`);
    const s = await c.call('POST', '/approvals/standing', c.as(c.admin), { action: 'x.run', valid_until: `${day}T06:00:00-05:00`, reason: 'r', max_uses: 3 });
    expect(s.statusCode, s.body).toBe(201);
    expect(s.json().expires_at).toBe(`${day}T11:00:00.000Z`);
    const r = await c.call('POST', '/logs', c.agent, { event_type: 'action.executed', data: { action: 'x.run', approval_id: s.json().id, arguments: {} } });
    expect(r.json().approval_check.result).toBe('ok');
    clock.ms = at.getTime();
    const until = new Date(clock.now() + 86_400_000).toISOString();
    for (const constraints of [{ type: 'object', properties: { to: { type: 'string', format: 'no-such-format' } } }, { properties: { to: { type: 'string' } } }, { type: 'object', propertiez: {} }]) {
      problem(await c.call('POST', '/approvals/standing', c.as(c.admin), { action: 'x.run', valid_until: until, reason: 'r', constraints }), 400, 'validation_failed');
    }
    const email = await c.call('POST', '/approvals/standing', c.as(c.admin), { action: 'mail.send', valid_until: until, reason: 'r', constraints: { type: 'object', properties: { to: { type: 'string', format: 'email' } } } });
    expect(email.statusCode, email.body).toBe(201);
    const send = async (to: string) => (await c.call('POST', '/logs', c.agent, { event_type: 'action.executed', data: { action: 'mail.send', approval_id: email.json().id, arguments: { to } } })).json().approval_check.result;
    expect(await send('not an email')).toBe('mismatch');
    expect(await send('a@example.com')).toBe('ok');
  });

  it("8: a team sets the least risk, the most uses and the longest life of requests for its actions; a requester's choice past them is raised or refused, whichever team it names", async () => {
    const c = await company();
    const limits = { min_risk: 'high', max_uses: 2, max_expires_in_seconds: 600 };
    const put = await c.call('PUT', '/approval-teams/payments', c.as(c.admin), { members: [c.r2.email], match_actions: ['wire.*'], limits });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json().limits).toEqual(limits);
    expect((await c.call('GET', '/logs?event_type=approval.team_set&limit=10&order=desc', c.as(c.admin))).json().items[0].data.limits).toEqual(limits);
    // Wrong limits are refused and store nothing.
    for (const bad of [{ min_risk: 'extreme' }, { max_uses: 0 }, { max_expires_in_seconds: 31 * 86_400 }, { max_uses: 1.5 }, { other: 1 }]) {
      problem(await c.call('PUT', '/approval-teams/payments', c.as(c.admin), { members: [], match_actions: ['wire.*'], limits: bad }), 400, 'validation_failed');
    }
    expect((await c.call('GET', '/approval-teams', c.as(c.admin))).json().items.find((x: { name: string }) => x.name === 'payments').limits).toEqual(limits);

    // A low-risk request is raised to high; the entry keeps what was asked.
    const low = await c.call('POST', '/approvals', c.agent, { action: 'wire.transfer', arguments: { to: 'x' }, risk: 'low' });
    expect(low.statusCode, low.body).toBe(201);
    expect(low.json()).toMatchObject({ risk: 'high', team: 'payments', max_uses: 1 });
    expect(Date.parse(low.json().expires_at) - clock.now()).toBe(600_000);
    const entry = (await c.call('GET', `/logs?event_type=approval.requested&limit=1&order=desc`, c.as(c.admin))).json().items[0];
    expect(entry.data).toMatchObject({ risk: 'high', requested_risk: 'low', limits_from: ['payments'] });
    // More uses or a longer life is refused, nothing stored, even when the request names another team.
    const before = await c.head();
    for (const body of [{ max_uses: 3 }, { expires_in_seconds: 601 }, { max_uses: 1_000_000, assignee: 'ops' }, { expires_in_seconds: 30 * 86_400, assignee: 'ops' }]) {
      const res = problem(await c.call('POST', '/approvals', c.agent, { action: 'wire.transfer', arguments: {}, ...body }), 400, 'validation_failed');
      expect(JSON.stringify(res.errors)).toContain('payments');
    }
    expect(await c.head()).toBe(before);
    // Named another team, it still gets the least risk; critical stays critical (two approvers).
    expect((await c.call('POST', '/approvals', c.agent, { action: 'wire.transfer', arguments: {}, assignee: 'ops', risk: 'low' })).json()).toMatchObject({ risk: 'high', team: 'ops' });
    expect((await c.call('POST', '/approvals', c.agent, { action: 'wire.transfer', arguments: {}, risk: 'critical', max_uses: 2 })).json()).toMatchObject({ risk: 'critical', required_approvals: 2, max_uses: 2 });
    // The limits of a team a request is routed to apply to it, whatever its action; the strictest of several.
    expect((await c.call('PUT', '/approval-teams/strict', c.as(c.admin), { members: [], match_actions: ['wire.transfer'], limits: { max_uses: 1 } })).statusCode).toBe(200);
    problem(await c.call('POST', '/approvals', c.agent, { action: 'wire.transfer', arguments: {}, max_uses: 2 }), 400, 'validation_failed');
    expect((await c.call('PUT', '/approval-teams/ops', c.as(c.admin), { members: [c.r1.email], limits: { min_risk: 'critical' } })).statusCode).toBe(200);
    expect((await c.call('POST', '/approvals', c.agent, { action: 'other.thing', arguments: {}, assignee: 'ops' })).json()).toMatchObject({ risk: 'critical', required_approvals: 2 });
    // Other actions are free as before.
    expect((await c.call('POST', '/approvals', c.agent, { action: 'refund.issue', arguments: {}, risk: 'low', max_uses: 1000, expires_in_seconds: 86_400 })).json()).toMatchObject({ risk: 'low', max_uses: 1000 });
  });

  it('property: whatever a requester asks for, an action under team limits never gets a request below their least risk, past their uses or past their life', async () => {
    const c = await company();
    expect((await c.call('PUT', '/approval-teams/payments', c.as(c.admin), { members: [], match_actions: ['wire.*'], limits: { min_risk: 'medium', max_uses: 5, max_expires_in_seconds: 3000 } })).statusCode).toBe(200);
    const RISK_ORDER = ['low', 'medium', 'high', 'critical'];
    await fc.assert(
      fc.asyncProperty(
        fc.record({ action: fc.constantFrom('wire.transfer', 'wire.', 'wire.x.y'), risk: fc.option(fc.constantFrom('low', 'medium', 'high', 'critical'), { nil: undefined }), max_uses: fc.option(fc.integer({ min: 1, max: 1_000_000 }), { nil: undefined }), expires_in_seconds: fc.option(fc.integer({ min: 1, max: 30 * 86_400 }), { nil: undefined }), assignee: fc.option(fc.constantFrom('ops', 'payments'), { nil: undefined }) }, { requiredKeys: ['action'] }),
        async (body) => {
          const before = await c.head();
          const res = await c.call('POST', '/approvals', c.agent, { ...body, arguments: {} });
          const over = (body.max_uses ?? 1) > 5 || (body.expires_in_seconds ?? 0) > 3000;
          if (over) {
            expect(res.statusCode, res.body).toBe(400);
            expect(await c.head()).toBe(before);
            return;
          }
          expect(res.statusCode, res.body).toBe(201);
          const a = res.json();
          expect(RISK_ORDER.indexOf(a.risk)).toBeGreaterThanOrEqual(Math.max(1, RISK_ORDER.indexOf(body.risk ?? 'medium')));
          expect(a.max_uses).toBeLessThanOrEqual(5);
          expect(Date.parse(a.expires_at) - clock.now()).toBeLessThanOrEqual(3_000_000);
        },
      ),
      { numRuns: RUNS * 2, ...SEED },
    );
  });

  // ---- properties ----

  type Who = 'key' | 'admin' | 'r1' | 'r2' | 'r3' | 'auditor';
  type Step =
    | { op: 'approve' | 'reject'; who: Who; via: 'approvals' | 'hitl'; status: string }
    | { op: 'escalate'; who: Who; via: 'approvals' | 'hitl'; to: 'ops' | 'r2' | 'r3' | 'auditor' | 'nonexistent-team' | 'stranger' };

  const APPROVE_WORDS = ['approved', 'approve'];
  const REJECT_WORDS = ['rejected', 'reject', 'denied', 'deny', 'declined'];
  const arbWho = fc.constantFrom<Who>('key', 'admin', 'r1', 'r2', 'r3', 'auditor');
  const arbStep: fc.Arbitrary<Step> = fc.oneof(
    fc.record({ op: fc.constantFrom('approve' as const, 'reject' as const), who: arbWho, via: fc.constantFrom('approvals' as const, 'hitl' as const), status: fc.constantFrom(...APPROVE_WORDS, ...REJECT_WORDS, 'REJECTED ', 'no', 'declined ', 'Approve', '') }),
    fc.record({ op: fc.constant('escalate' as const), who: arbWho, via: fc.constantFrom('approvals' as const, 'hitl' as const), to: fc.constantFrom('ops' as const, 'r2' as const, 'r3' as const, 'auditor' as const, 'nonexistent-team' as const, 'stranger' as const) }),
  );

  it('property: whoever acts, through whichever route or alias, after whichever escalation, a request is decided only by someone the rules allow, never by its requester or an API key', async () => {
    const c = await company();
    const users: Record<Exclude<Who, 'key'>, Account> = { admin: c.admin, r1: c.r1, r2: c.r2, r3: c.r3, auditor: c.auditor };
    const role = (w: Who) => (w === 'key' ? 'key' : w === 'admin' ? 'admin' : w === 'auditor' ? 'auditor' : 'reviewer');
    const emailOf = (w: Exclude<Who, 'key'>) => users[w].email.toLowerCase();
    await fc.assert(
      fc.asyncProperty(fc.constantFrom<Who>('key', 'r1'), fc.constantFrom('ops', null), fc.constantFrom('medium', 'critical'), fc.array(arbStep, { minLength: 1, maxLength: 6 }), async (requester, team, risk, steps) => {
        const req = await c.call('POST', '/approvals', requester === 'key' ? c.agent : c.as(c.r1), { action: 'refund.issue', arguments: { n: randomUUID() }, reason: 'r', risk, ...(team ? { assignee: team } : {}) });
        expect(req.statusCode, req.body).toBe(201);
        const id = req.json().id as string;
        // The model.
        let status: 'pending' | 'approved' | 'rejected' = 'pending';
        let assignee: string | null = team;
        const approvers = new Set<Who>();
        const required = risk === 'critical' ? 2 : 1;
        const mayDecide = (w: Exclude<Who, 'key'>) => role(w) === 'admin' || assignee === null || (assignee === 'ops' ? w === 'r1' : assignee === emailOf(w));
        for (const step of steps) {
          const headers = step.who === 'key' ? c.agent : c.as(users[step.who]);
          let res;
          let expected: [number, string] | 200;
          if (step.op === 'escalate') {
            const target = { ops: 'ops', r2: c.r2.email, r3: c.r3.email, auditor: c.auditor.email, 'nonexistent-team': 'nonexistent-team', stranger: 'stranger@example.com' }[step.to];
            res = step.via === 'approvals' ? await c.call('POST', `/approvals/${id}/escalate`, headers, { to: target, reason: 'r' }) : await c.call('POST', '/hitl/escalate', headers, { approval_id: id, current_reviewer: 'x', escalation_target: target, escalation_reason: 'r' });
            if (step.who === 'key' || role(step.who) === 'auditor') expected = [403, 'forbidden'];
            else if (status !== 'pending') expected = [409, 'approval_not_pending'];
            else if (!mayDecide(step.who)) expected = [403, 'not_in_team'];
            else if (step.to === 'auditor' || step.to === 'nonexistent-team' || step.to === 'stranger') expected = [400, 'validation_failed'];
            else expected = 200;
            if (expected === 200) assignee = step.to === 'ops' ? 'ops' : target.toLowerCase();
          } else {
            const verdict = step.via === 'approvals' ? step.op : APPROVE_WORDS.includes(step.status) ? 'approve' : REJECT_WORDS.includes(step.status) ? 'reject' : null;
            if (step.via === 'approvals') res = await c.call('POST', `/approvals/${id}/${step.op}`, headers, step.op === 'reject' ? { reason: 'no' } : {});
            else res = await c.call('POST', '/hitl/approve', headers, { approval_id: id, auth_response: { status: step.status } });
            if (step.who === 'key' || role(step.who) === 'auditor') expected = [403, 'forbidden'];
            else if (verdict === null) expected = [400, 'validation_failed'];
            else if (status !== 'pending') expected = [409, 'approval_not_pending'];
            else if (verdict === 'approve' && requester === step.who) expected = [403, 'self_approval'];
            else if (verdict === 'approve' && approvers.has(step.who)) expected = [409, 'already_approved'];
            else if (!mayDecide(step.who)) expected = [403, 'not_in_team'];
            else expected = 200;
            if (expected === 200 && verdict === 'approve') {
              approvers.add(step.who);
              if (approvers.size >= required) status = 'approved';
            } else if (expected === 200) status = 'rejected';
          }
          if (expected === 200) expect(res.statusCode, `${JSON.stringify(step)} ${res.body}`).toBe(200);
          else expect([res.statusCode, res.json().code], `${JSON.stringify(step)} ${res.body}`).toEqual(expected);
        }
        const view = (await c.call('GET', `/approvals/${id}`, c.agent)).json();
        expect(view.status).toBe(status);
        // Every approver is a person allowed at the time, none is the requester, and at least the required number.
        if (status === 'approved') expect(new Set(view.approvals.map((x: { email: string }) => x.email)).size).toBeGreaterThanOrEqual(required);
        for (const x of view.approvals as Array<{ email: string }>) expect(requester === 'r1' && x.email === c.r1.email.toLowerCase()).toBe(false);
      }),
      { numRuns: RUNS, ...SEED },
    );
  });

  it('property: an execution is ok only when it names the approved action (or, with no action, the approved tool) and the exact arguments', async () => {
    const c = await company();
    const args = { order: 'A-1', amount: 10 };
    const a = await requestFor(c, { max_uses: 1_000_000 });
    await c.call('POST', `/approvals/${a.id}/approve`, c.as(c.r1), {});
    const arbAction = fc.oneof(fc.constant(undefined), fc.constant('refund.issue'), fc.constant('wire.transfer'), fc.constant(''), fc.integer(), fc.constant(['refund.issue']), fc.constant({ action: 'refund.issue' }), fc.constant(null), fc.string({ maxLength: 12 }));
    const arbTool = fc.oneof(fc.constant(undefined), fc.constant('payments'), fc.constant('other'), fc.integer());
    const arbArgs = fc.oneof(fc.constant(args), fc.constant({ amount: 10, order: 'A-1' }), fc.constant({ ...args, amount: 11 }), fc.constant(undefined), fc.dictionary(fc.string({ maxLength: 6 }).filter((k) => !['__proto__', 'constructor', 'prototype'].includes(k)), fc.oneof(fc.integer(), fc.string({ maxLength: 6 }), fc.boolean()), { maxKeys: 3 }));
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('action.executed', 'tool.called'), arbAction, arbTool, arbArgs, async (eventType, action, tool, sent) => {
        const data: Record<string, unknown> = { approval_id: a.id };
        if (action !== undefined) data.action = action;
        if (tool !== undefined) data.tool = tool;
        if (sent !== undefined) data.arguments = sent;
        const res = await c.call('POST', '/logs', c.agent, { event_type: eventType, data });
        expect(res.statusCode, res.body).toBe(200);
        const namesAction = action === 'refund.issue' && (tool === undefined || typeof tool !== 'string' || tool === 'payments');
        const namesTool = action === undefined && tool === 'payments';
        const ok = (namesAction || namesTool) && sent !== undefined && hashOf(sent) === a.arguments_hash;
        expect(res.json().approval_check.result, JSON.stringify(data)).toBe(ok ? 'ok' : 'mismatch');
      }),
      { numRuns: RUNS * 4, ...SEED },
    );
  });
});
