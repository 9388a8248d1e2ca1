// The governance layer (docs/governance.md), black-box on both stores: approvals bound to the
// exact arguments, four eyes, self-approval, executions checked at ingestion, standing approvals,
// reviewer teams and SLA escalation on a fake clock, the policy register, the decision register,
// incidents and their signed report, and the aliases of one agent SDK's human-review calls.
import { spawnSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { canonicalJson, type Json, parseTrustedKeys, verifyReport } from '@audit-ledger/core';
import { argumentsHash as sdkArgumentsHash, verifyReceipt } from '@audit-ledger/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS } from './helpers/env.js';
import { reviewCompany } from './helpers/governance.js';
import { type Account, FakeClock, problem, startTestApp, type TestApp } from './helpers/app.js';

const hashOf = (v: unknown) => createHash('sha256').update(canonicalJson(v as Json)).digest('hex');

describe('docs/governance.md', () => {
  it("the worked example's canonical text and hash are what the service computes", () => {
    const doc = fs.readFileSync(path.join(import.meta.dirname, '..', '..', '..', 'docs', 'governance.md'), 'utf8');
    const request = JSON.parse(/```json\n(\{"action": "refund.issue".*\})\n```/.exec(doc)?.[1] ?? 'null');
    const blocks = [...doc.slice(doc.indexOf('governance-example')).matchAll(/```text\n(.*)\n```/g)].map((m) => m[1]);
    expect(blocks[0]).toBe(canonicalJson(request.arguments));
    expect(blocks[1]).toBe(hashOf(request.arguments));
    expect(doc).toContain(hashOf({ ...request.arguments, amount: 2500.5 }));
  });
});

describe.each(STORE_KINDS)('governance on %s', (kind) => {
  let t: TestApp;
  const clock = new FakeClock();
  beforeAll(async () => {
    t = await startTestApp(kind, { clock, env: { CHECKPOINT_INTERVAL_MS: '0' } });
  });
  afterAll(() => t.close());

  /** A company with an admin, two reviewers, an auditor and an API key. */
  async function company() {
    const base = await reviewCompany(t, 2);
    const { admin, auditor, key, as, agent, call } = base;
    const [r1, r2] = base.reviewers as [Account, Account];
    const entries = async (eventType: string) => (await call('GET', `/logs?event_type=${eventType}&order=asc&limit=1000`, as(admin))).json().items as Array<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
    const execute = (approvalId: string, args: unknown, o: { agent_id?: string; action?: string } = {}) =>
      call('POST', '/logs', agent, { event_type: 'action.executed', agent_id: o.agent_id ?? 'agent-7', data: { action: o.action ?? 'refund.issue', approval_id: approvalId, ...(args === undefined ? {} : { arguments: args }) } });
    return { admin, r1, r2, auditor, key, as, agent, call, entries, execute };
  }

  it('a tool call sent over OTLP naming an approval is checked as POST /logs checks it: changed arguments are a mismatch, the approved ones ok, each recorded beside the span', async () => {
    const c = await company();
    const args = { order: 'A-1001', amount: 250.5, currency: 'EUR' };
    const a = (await c.call('POST', '/approvals', c.agent, { action: 'refund.issue', tool: 'refund', arguments: args, agent_id: 'agent-7', risk: 'high', reason: 'customer complaint', expires_in_seconds: 600 })).json();
    expect((await c.call('POST', `/approvals/${a.id}/approve`, c.as(c.r1), { reason: 'matches the ticket' })).statusCode).toBe(200);
    // A GenAI execute_tool span (OTLP/JSON), naming the approval in an audit_ledger.data attribute.
    const span = (spanId: string, sent: unknown) => ({
      resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'refund-agent' } }] }, scopeSpans: [{ scope: { name: 'agent' }, spans: [{
        traceId: '5b8aa5a2d2c872e8321cf37308d69df2', spanId, name: 'execute_tool refund', kind: 1, startTimeUnixNano: '1772366400000000000', endTimeUnixNano: '1772366400500000000', status: {},
        attributes: [
          { key: 'gen_ai.operation.name', value: { stringValue: 'execute_tool' } },
          { key: 'gen_ai.tool.name', value: { stringValue: 'refund' } },
          { key: 'gen_ai.agent.name', value: { stringValue: 'agent-7' } },
          { key: 'gen_ai.tool.call.arguments', value: { stringValue: JSON.stringify(sent) } },
          { key: 'audit_ledger.data.approval_id', value: { stringValue: a.id } },
        ],
      }] }] }],
    });
    const post = async (spanId: string, sent: unknown) => {
      const res = await c.call('POST', '/otlp/v1/traces', { ...c.agent, 'content-type': 'application/json' }, span(spanId, sent));
      expect(res.statusCode, res.body).toBe(200);
      const [tool] = (await c.call('GET', `/logs?event_type=tool.called&order=desc&limit=1`, c.as(c.admin))).json().items as Array<{ log_id: string; span_id: string }>;
      expect(tool?.span_id).toBe(spanId);
      return (await c.call('GET', `/logs/${tool?.log_id}`, c.as(c.admin))).json();
    };
    const changed = await post('00f067aa0ba902b7', { ...args, amount: 2500.5 });
    expect(changed.approval_check).toMatchObject({ result: 'mismatch', approval_id: a.id });
    const exact = await post('00f067aa0ba902b8', args);
    expect(exact.approval_check).toMatchObject({ result: 'ok', approval_id: a.id });
    const checks = await c.entries('approval.checked');
    expect(checks.map((e) => [e.data.execution_log_id, e.data.result])).toEqual([[changed.log_id, 'mismatch'], [exact.log_id, 'ok']]);
  });

  it("a batch's approval checks are appended together, after its executions: five executions in one POST /logs/batch are two append groups (two checkpoints), not six", async () => {
    const c = await company();
    const granted = (await c.call('POST', '/approvals/standing', c.as(c.admin), { action: 'refund.issue', valid_until: new Date(clock.now() + 3_600_000).toISOString(), max_uses: 2, reason: 'batch window' })).json();
    const sizes = async () => (await c.call('GET', '/integrity/checkpoints?limit=1000', c.agent)).json().items.map((i: { tree_size: number }) => i.tree_size) as number[];
    const before = await sizes();
    const start = before.at(-1) ?? 0;
    const logs = [0, 1, 2, 3, 4].map((i) => ({ event_type: 'action.executed', agent_id: 'agent-7', data: { action: 'refund.issue', approval_id: i < 3 ? granted.id : `no-such-approval-${i}`, arguments: { order: `B-${i}` } } }));
    const res = await c.call('POST', '/logs/batch', c.agent, { logs });
    expect(res.statusCode, res.body).toBe(200);
    // Two uses of the standing approval, then consumed; two unknown approvals: each recorded, in order.
    const checks = res.json().governance_checks as Array<{ index: number; log_id: string; approval_check: { result: string; check_log_id: string } }>;
    expect(checks.map((ch) => [ch.index, ch.approval_check.result])).toEqual([[0, 'ok'], [1, 'ok'], [2, 'consumed'], [3, 'unknown'], [4, 'unknown']]);
    const checked = (await c.entries('approval.checked')).slice(-5);
    expect(checked.map((e) => e.seq)).toEqual([start + 5, start + 6, start + 7, start + 8, start + 9]);
    expect(checked.map((e) => e.log_id)).toEqual(checks.map((ch) => ch.approval_check.check_log_id));
    expect(checked.map((e) => e.parent_event_id)).toEqual(res.json().log_ids);
    expect((await sizes()).filter((n) => n > start)).toEqual([start + 5, start + 10]);
  });

  it('binds an approval to the exact arguments: approved runs once, changed arguments, reuse, unknown and pending are each named, and every execution is stored', async () => {
    const c = await company();
    const args = { order: 'A-1001', amount: 250.5, currency: 'EUR' };
    const traceId = randomUUID();
    const req = await c.call('POST', '/approvals', c.agent, { action: 'refund.issue', tool: 'payments', arguments: args, trace_id: traceId, agent_id: 'agent-7', risk: 'high', reason: 'customer complaint', expires_in_seconds: 600 });
    expect(req.statusCode, req.body).toBe(201);
    const a = req.json();
    expect(a).toMatchObject({ status: 'pending', arguments_hash: hashOf(args), arguments: args, required_approvals: 1, requested_by: { kind: 'api_key' }, expires_at: new Date(clock.now() + 600_000).toISOString() });
    const [requested] = await c.entries('approval.requested');
    expect(requested).toMatchObject({ source: 'audit-ledger/governance', trace_id: traceId, agent_id: 'agent-7', data: { approval_id: a.id, arguments_hash: hashOf(args), arguments: args } });

    // Not yet approved: the execution is stored and marked.
    const early = await c.execute(a.id, args);
    expect(early.statusCode, early.body).toBe(200);
    expect(early.json().approval_check).toMatchObject({ result: 'not_approved', approval_id: a.id });

    // An API key, an auditor and the body's own claims cannot decide.
    problem(await c.call('POST', `/approvals/${a.id}/approve`, c.agent, {}), 403, 'forbidden');
    problem(await c.call('POST', `/approvals/${a.id}/approve`, c.as(c.auditor), {}), 403, 'forbidden');
    problem(await c.call('POST', `/approvals/${a.id}/approve`, c.as(c.r1), { reason: 'ok', reviewer: 'ceo@example.com' }), 400, 'validation_failed');

    const ok = await c.call('POST', `/approvals/${a.id}/approve`, c.as(c.r1), { reason: 'matches the ticket' });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({ status: 'approved', usable: true, approvals: [{ email: c.r1.email }], decided_by: { kind: 'user', email: c.r1.email } });
    const [approved] = await c.entries('approval.approved');
    expect(approved?.data).toMatchObject({ approval_id: a.id, actor: { kind: 'user', email: c.r1.email }, final: true, arguments_hash: hashOf(args) });
    problem(await c.call('POST', `/approvals/${a.id}/reject`, c.as(c.r2), { reason: 'late' }), 409, 'approval_not_pending');

    // Same arguments in another key order: the canonical hash is the same.
    const run = await c.execute(a.id, { currency: 'EUR', amount: 250.5, order: 'A-1001' });
    expect(run.json().approval_check).toMatchObject({ result: 'ok', basis: 'request', approval_id: a.id, check_log_id: expect.any(String) });
    const again = await c.execute(a.id, args);
    expect(again.json().approval_check).toMatchObject({ result: 'consumed' });
    const changed = await c.execute(a.id, { ...args, amount: 2500.5 });
    expect(changed.json().approval_check).toMatchObject({ result: 'mismatch', detail: expect.stringContaining(hashOf(args)) });
    expect((await c.execute(a.id, undefined)).json().approval_check).toMatchObject({ result: 'mismatch' });
    const unknown = randomUUID();
    expect((await c.execute(unknown, args)).json().approval_check).toMatchObject({ result: 'unknown', approval_id: unknown });

    // Every execution was stored as sent; each check is an entry of its own, pointing at it.
    const executions = await c.entries('action.executed');
    expect(executions).toHaveLength(6);
    expect(executions.every((e) => !('approval_check' in e.data))).toBe(true);
    const checks = await c.entries('approval.checked');
    expect(checks.map((x) => x.data.result)).toEqual(['not_approved', 'ok', 'consumed', 'mismatch', 'mismatch', 'unknown']);
    expect(checks.map((x) => x.parent_event_id)).toEqual(executions.map((e) => e.log_id));
    expect((await c.call('GET', `/approvals/${a.id}`, c.agent)).json()).toMatchObject({ uses: 1, usable: false, status: 'approved' });
    // The entry reads with its check beside it (not in it: the receipt still verifies).
    const read = (await c.call('GET', `/logs/${changed.json().log_id}`, c.agent)).json();
    expect(read.approval_check).toMatchObject({ result: 'mismatch', approval_id: a.id });
    expect(verifyReceipt(read, { publicKeys: (await c.call('GET', '/integrity/keys', c.agent)).body }).ok).toBe(true);
    const listed = (await c.call('GET', '/logs?event_type=action.executed&limit=10', c.agent)).json().items;
    expect(listed.map((e: { approval_check?: { result: string } }) => e.approval_check?.result)).toEqual(['not_approved', 'ok', 'consumed', 'mismatch', 'mismatch', 'unknown']);

    // Each check that is not ok fires approval.violated.
    const violated = await t.store.db.selectFrom('webhook_events').select('data').where('company_id', '=', c.admin.companyId).where('type', '=', 'approval.violated').execute();
    expect(violated.map((v) => JSON.parse(v.data).result).sort()).toEqual(['consumed', 'mismatch', 'mismatch', 'not_approved', 'unknown']);

    // A batch checks each item, and a repeat answers the original's check.
    const batch = await c.call('POST', '/logs/batch', c.agent, { logs: [{ event_type: 'tool.called', data: { action: 'refund.issue', approval_id: a.id, arguments: args } }, { event_type: 'note', data: {} }] });
    expect(batch.statusCode, batch.body).toBe(200);
    expect(batch.json().governance_checks).toEqual([{ index: 0, log_id: batch.json().log_ids[0], approval_check: expect.objectContaining({ result: 'consumed' }) }]);

    // The period report's approvals section counts it all.
    const day = new Date(clock.now()).toISOString().slice(0, 10);
    const report = await c.call('POST', '/compliance/reports', c.as(c.auditor), { from: `${day}T00:00:00Z`, to: new Date(Date.parse(`${day}T00:00:00Z`) + 2 * 86_400_000).toISOString() });
    expect(report.statusCode, report.body).toBe(201);
    const doc = (await c.call('GET', `/compliance/reports/${report.json().id}`, c.as(c.auditor))).json();
    expect(doc.report.approvals).toMatchObject({ requested: 1, by_outcome: { approved: 1 }, executions_checked: 7, violations: { count: 6, by_result: { not_approved: 1, consumed: 2, mismatch: 2, unknown: 1 } } });
    expect(doc.report.approvals.time_to_decision_by_team).toEqual([{ team: '(no team)', decided: 1, median_seconds: 0, max_seconds: 0 }]);
  });

  it("16: a subject erasure reaches an approval request's arguments: its entry's content and the approval's arguments and reason are gone, the binding (arguments_hash in the approvals) still checks executions, the other governance entries stay", async () => {
    const c = await company();
    const subject = `cust-${randomUUID()}`;
    const args = { subject_id: subject, order: 'A-77', amount: 12 };
    const a = (await c.call('POST', '/approvals', c.agent, { action: 'refund.issue', arguments: args, agent_id: 'agent-7', reason: `refund for ${subject}`, max_uses: 2 })).json();
    expect((await c.call('POST', `/approvals/${a.id}/approve`, c.as(c.r1), {})).statusCode).toBe(200);
    expect((await c.execute(a.id, args)).json().approval_check.result).toBe('ok');
    // The service's other entries (the approval's decision, the admin trail) are still refused by id.
    const approved = (await c.entries('approval.approved')).find((e) => e.data.approval_id === a.id)!;
    problem(await c.call('POST', '/compliance/erasures', c.as(c.admin), { log_ids: [approved.log_id], legal_basis: 'GDPR Art. 17' }), 409, 'not_erasable');

    const erasure = await c.call('POST', '/compliance/erasures', c.as(c.admin), { subject, legal_basis: 'GDPR Art. 17' });
    expect(erasure.statusCode, erasure.body).toBe(201);
    // The request's entry is found by the subject inside its arguments.
    expect(erasure.json().log_ids).toContain(a.log_id);
    const view = (await c.call('GET', `/approvals/${a.id}`, c.as(c.admin))).json();
    expect(view).toMatchObject({ arguments: null, reason: null, content_erased: true, arguments_hash: a.arguments_hash, action: 'refund.issue', status: 'approved' });
    const requested = (await c.call('GET', `/logs/${a.log_id}`, c.as(c.admin))).json();
    expect(requested).toMatchObject({ erased: true });
    expect(JSON.stringify(requested)).not.toContain(subject);
    expect((await c.call('GET', `/logs/${a.log_id}/verify`, c.as(c.admin))).json()).toMatchObject({ chain_valid: true, signature_valid: true, erased: true, problems: [], merkle_included: true });
    // Stored: nothing of the subject in the approvals table or the request's entry.
    const row = await t.store.db.selectFrom('approvals').select(['arguments', 'reason', 'arguments_hash']).where('company_id', '=', c.admin.companyId).where('approval_id', '=', a.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ arguments: null, reason: null, arguments_hash: a.arguments_hash });
    const entry = await t.store.db.selectFrom('log_entries').select(['data', 'extra', 'content_salt']).where('company_id', '=', c.admin.companyId).where('log_id', '=', a.log_id).executeTakeFirstOrThrow();
    expect(entry).toEqual({ data: null, extra: null, content_salt: null });
    // The binding stays checkable: the decision entry keeps the hash, and the use left is checked by it.
    expect(approved.data.arguments_hash).toBe(hashOf(args));
    expect((await c.execute(a.id, { ...args, amount: 13 })).json().approval_check.result).toBe('mismatch');
    expect((await c.execute(a.id, args)).json().approval_check.result).toBe('ok');
  });

  it("the arguments hash of a request is the core's rule: the service and the SDK give every vector of core/testdata/arguments-hash.json", async () => {
    const c = await company();
    const { cases } = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', '..', 'core', 'testdata', 'arguments-hash.json'), 'utf8')) as { cases: Array<{ input: string; sha256: string }> };
    for (const v of cases) {
      // Sent as the raw JSON text, so the service parses the vector's own spelling of each number.
      const res = await t.inject({ method: 'POST', url: '/api/v1/approvals', headers: { ...c.agent, 'content-type': 'application/json' }, payload: `{"action":"vector.check","arguments":${v.input}}` });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().arguments_hash, v.input).toBe(v.sha256);
      expect(sdkArgumentsHash(JSON.parse(v.input)), v.input).toBe(v.sha256);
    }
  });

  it('9: an action run with no approval after a verdict that required one (step_up, hold, escalate) is a POLICY_VIOLATION; with a final approval in between it is not', async () => {
    const c = await company();
    const rootCause = async (traceId: string) => {
      const replay = (await c.call('POST', '/forensics/replays', c.agent, { trace_id: traceId, metadata: {} })).json();
      return (await c.call('GET', `/forensics/replays/${replay.id}/root-cause`, c.agent)).json();
    };
    for (const verdict of ['step_up', 'hold', 'escalate']) {
      const bare = randomUUID();
      await c.call('POST', '/logs/batch', c.agent, {
        logs: [
          { event_type: 'policy.evaluated', trace_id: bare, data: { policy_id: 'refunds', verdict, tool: 'payments' } },
          { event_type: 'tool.called', trace_id: bare, data: { tool: 'payments', arguments: { amount: 900 } } },
          { event_type: 'agent.completed', trace_id: bare, data: { status: 'succeeded' } },
        ],
      });
      const rc = await rootCause(bare);
      expect(rc, verdict).toMatchObject({ detected: true, root_cause_type: 'POLICY_VIOLATION' });
      expect(rc.description).toContain(`required an approval (verdict ${verdict})`);

      // The approval asked for and given (final) before the tool ran: a clean run.
      const approved = randomUUID();
      await c.call('POST', '/logs', c.agent, { event_type: 'policy.evaluated', trace_id: approved, data: { policy_id: 'refunds', verdict, tool: 'payments' } });
      const a = (await c.call('POST', '/approvals', c.agent, { action: 'refund.issue', tool: 'payments', arguments: { amount: 900 }, trace_id: approved })).json();
      expect((await c.call('POST', `/approvals/${a.id}/approve`, c.as(c.r1), {})).statusCode).toBe(200);
      await c.call('POST', '/logs/batch', c.agent, {
        logs: [
          { event_type: 'tool.called', trace_id: approved, data: { tool: 'payments', approval_id: a.id, arguments: { amount: 900 } } },
          { event_type: 'agent.completed', trace_id: approved, data: { status: 'succeeded' } },
        ],
      });
      expect((await rootCause(approved)).root_cause_type, verdict).not.toBe('POLICY_VIOLATION');
    }
  });

  it('23: a policy version past what the register can number is a 400 naming the field, never a 500 (both routes that take one)', async () => {
    const c = await company();
    await c.call('PUT', '/policies/refunds', c.as(c.admin), { content: 'allow' });
    const read = problem(await c.call('GET', '/policies/refunds/versions/99999999999999999999', c.agent), 400, 'validation_failed');
    expect(JSON.stringify(read.errors)).toContain('/params/version');
    const asked = problem(await t.inject({ method: 'POST', url: '/api/v1/approvals', headers: { ...c.agent, 'content-type': 'application/json' }, payload: '{"action":"refund.issue","policy":{"policy_id":"refunds","version":3000000000}}' }), 400, 'validation_failed');
    expect(JSON.stringify(asked.errors)).toContain('/body/policy/version');
    expect((await c.call('GET', '/policies/refunds/versions/1', c.agent)).statusCode).toBe(200);
  });

  it('root cause: a failed approval check is a POLICY_VIOLATION naming the approval and the policy version; deny-then-act by tool name is one too; a decision made while its approval was pending is a finding', async () => {
    const c = await company();
    await c.call('PUT', '/policies/refunds', c.as(c.admin), { content: 'allow if amount <= 100' });
    const rootCause = async (traceId: string) => {
      const replay = (await c.call('POST', '/forensics/replays', c.agent, { trace_id: traceId, metadata: {} })).json();
      return (await c.call('GET', `/forensics/replays/${replay.id}/root-cause`, c.agent)).json();
    };
    // Approved with one amount, run with another.
    const traceId = randomUUID();
    const decisionId = randomUUID();
    const a = (await c.call('POST', '/approvals', c.agent, { action: 'refund.issue', arguments: { amount: 90 }, trace_id: traceId, decision_id: decisionId, policy: { policy_id: 'refunds', version: 1 } })).json();
    await c.call('POST', '/logs', c.agent, { event_type: 'decision.made', trace_id: traceId, data: { decision_id: decisionId, action: 'refund.issue' } });
    await c.call('POST', `/approvals/${a.id}/approve`, c.as(c.r1), {});
    const run = (await c.call('POST', '/logs', c.agent, { event_type: 'action.executed', trace_id: traceId, data: { action: 'refund.issue', approval_id: a.id, arguments: { amount: 900 } } })).json();
    const rc = await rootCause(traceId);
    expect(rc).toMatchObject({ detected: true, root_cause_type: 'POLICY_VIOLATION', outcome: { kind: 'policy_violated', log_id: run.log_id } });
    expect(rc.description).toContain(a.id);
    expect(rc.description).toContain('policy "refunds" version 1');
    expect(rc.description).toContain('what ran is not what was approved');
    expect(rc.evidence).toEqual(expect.arrayContaining([a.log_id, run.log_id, run.approval_check.check_log_id]));
    expect(rc.findings).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'POLICY_VIOLATION', severity: 'medium', description: expect.stringContaining('still pending') })]));

    // A deny, then the same tool called anyway (no approval in between), with the verdict field.
    const t2 = randomUUID();
    await c.call('POST', '/logs/batch', c.agent, {
      logs: [
        { event_type: 'policy.evaluated', trace_id: t2, data: { policy_id: 'refunds', policy_version: 1, verdict: 'deny', tool: 'payments', reason_codes: ['amount_over_limit'] } },
        { event_type: 'tool.called', trace_id: t2, data: { tool: 'payments', arguments: { amount: 900 } } },
      ],
    });
    const rc2 = await rootCause(t2);
    expect(rc2).toMatchObject({ detected: true, root_cause_type: 'POLICY_VIOLATION' });
    expect(rc2.description).toContain('"refunds" version "1"');

    // A replay whose root cause detected something opens an incident in one call; a clean one cannot.
    const replay = (await c.call('POST', '/forensics/replays', c.agent, { trace_id: traceId, metadata: {} })).json();
    const opened = await c.call('POST', '/incidents', c.as(c.r1), { from_replay_session_id: replay.id, art73: 'serious' });
    expect(opened.statusCode, opened.body).toBe(201);
    expect(opened.json()).toMatchObject({ title: expect.stringMatching(/^POLICY_VIOLATION: /), severity: 'high', links: { trace_ids: [traceId], replay_session_id: replay.id, log_ids: expect.arrayContaining([run.log_id]) } });
    const clean = randomUUID();
    await c.call('POST', '/logs', c.agent, { event_type: 'agent.completed', trace_id: clean, data: { status: 'succeeded' } });
    const cleanReplay = (await c.call('POST', '/forensics/replays', c.agent, { trace_id: clean, metadata: {} })).json();
    problem(await c.call('POST', '/incidents', c.as(c.r1), { from_replay_session_id: cleanReplay.id }), 409, 'nothing_detected');
    problem(await c.call('POST', '/incidents', c.as(c.r1), { severity: 'low' }), 400, 'validation_failed');
  });

  it('refuses self-approval, needs two different approvers for a critical request, and expires an approval that was not used in time', async () => {
    const c = await company();
    // A reviewer asks (a person may request too), and may not approve it.
    const own = (await c.call('POST', '/approvals', c.as(c.r1), { action: 'db.drop', arguments: { table: 'x' }, expires_in_seconds: 600 })).json();
    problem(await c.call('POST', `/approvals/${own.id}/approve`, c.as(c.r1), {}), 403, 'self_approval');

    const crit = (await c.call('POST', '/approvals', c.agent, { action: 'wire.transfer', arguments: { to: 'DE89', amount: 1e6 }, risk: 'critical', expires_in_seconds: 600 })).json();
    expect(crit.required_approvals).toBe(2);
    const first = await c.call('POST', `/approvals/${crit.id}/approve`, c.as(c.r1), {});
    expect(first.json()).toMatchObject({ status: 'pending', approvals: [{ email: c.r1.email }] });
    problem(await c.call('POST', `/approvals/${crit.id}/approve`, c.as(c.r1), {}), 409, 'already_approved');
    expect((await c.execute(crit.id, { to: 'DE89', amount: 1e6 }, { action: 'wire.transfer' })).json().approval_check).toMatchObject({ result: 'not_approved', detail: expect.stringContaining('1 of 2') });
    const second = await c.call('POST', `/approvals/${crit.id}/approve`, c.as(c.admin), { reason: 'second pair of eyes' });
    expect(second.json()).toMatchObject({ status: 'approved', approvals: [{ email: c.r1.email }, { email: c.admin.email }] });
    const steps = (await c.entries('approval.approved')).filter((e) => e.data.approval_id === crit.id);
    expect(steps.map((e) => [e.data.approvals, e.data.final])).toEqual([[1, false], [2, true]]);

    // Approved, then not used before it expired.
    clock.advance(601_000);
    expect((await c.execute(crit.id, { to: 'DE89', amount: 1e6 }, { action: 'wire.transfer' })).json().approval_check).toMatchObject({ result: 'expired' });
    // A pending request past its time cannot be decided, and the sweep records its expiry once.
    problem(await c.call('POST', `/approvals/${own.id}/approve`, c.as(c.r2), {}), 409, 'approval_expired');
    expect((await c.call('GET', `/approvals/${own.id}`, c.agent)).json().status).toBe('expired');
    // Listed as expired before the sweep records it, and no longer in the pending queue (one page of 1, then none).
    expect((await c.call('GET', '/approvals?status=expired', c.agent)).json().items.map((x: { id: string }) => x.id)).toEqual([own.id]);
    expect((await c.call('GET', '/approvals?status=pending&limit=1', c.agent)).json()).toEqual({ items: [], next_cursor: null });
    const swept = await c.call('POST', '/approvals/sweep', c.as(c.admin));
    expect(swept.json().expired).toBeGreaterThanOrEqual(1);
    expect((await c.entries('approval.expired')).map((e) => e.data.approval_id)).toContain(own.id);
    expect((await c.call('POST', '/approvals/sweep', c.as(c.admin))).json().expired).toBe(0);
  });

  it('refuses each malformed request with a 400 and stores nothing', async () => {
    const c = await company();
    const before = (await c.entries('approval.requested')).length;
    const bad: Array<[unknown, string]> = [
      [{}, '/body'],
      [{ action: '' }, '/body/action'],
      [{ action: 'x', risk: 'extreme' }, '/body/risk'],
      [{ action: 'x', expires_in_seconds: 0 }, '/body/expires_in_seconds'],
      [{ action: 'x', trace_id: 'nope' }, '/body/trace_id'],
      [{ action: 'x', assignee: 'no-such-team' }, '/body/assignee'],
      [{ action: 'x', policy: { policy_id: 'none', version: 1 } }, '/body/policy'],
      [{ action: 'x', reviewer: 'me' }, '/body'],
    ];
    for (const [payload, field] of bad) {
      const body = problem(await c.call('POST', '/approvals', c.agent, payload), 400, 'validation_failed');
      expect(JSON.stringify(body.errors), JSON.stringify(payload)).toContain(field);
    }
    problem(await c.call('POST', '/approvals', c.as(c.auditor), { action: 'x' }), 403, 'forbidden');
    problem(await c.call('POST', `/approvals/${randomUUID()}/approve`, c.as(c.r1), {}), 404, 'not_found');
    problem(await c.call('POST', `/approvals/${randomUUID()}/reject`, c.as(c.r1), {}), 400, 'validation_failed');
    problem(await c.call('POST', '/approvals/standing', c.as(c.admin), { action: 'x', valid_until: '2020-01-01T00:00:00Z', reason: 'r' }), 400, 'validation_failed');
    problem(await c.call('POST', '/approvals/standing', c.as(c.admin), { action: 'x', valid_until: '2099-01-01T00:00:00Z', reason: 'r', constraints: { type: 'no-such-type' } }), 400, 'validation_failed');
    problem(await c.call('POST', '/approvals/standing', c.as(c.r1), { action: 'x', valid_until: '2099-01-01T00:00:00Z', reason: 'r' }), 403, 'forbidden');
    expect((await c.entries('approval.requested')).length).toBe(before);
    expect(await t.store.db.selectFrom('approvals').select('approval_id').where('company_id', '=', c.admin.companyId).execute()).toHaveLength(0);

    // Another company sees none of it.
    const mine = (await c.call('POST', '/approvals', c.agent, { action: 'x' })).json();
    const other = await company();
    problem(await c.call('GET', `/approvals/${mine.id}`, other.agent), 404, 'not_found');
    problem(await c.call('POST', `/approvals/${mine.id}/approve`, other.as(other.r1), {}), 404, 'not_found');
    expect((await c.call('GET', '/approvals', other.agent)).json().items).toEqual([]);
    expect((await other.execute(mine.id, {})).json().approval_check.result).toBe('unknown');
  });

  it('checks executions against a standing approval: within scope, outside it, another agent, and after revocation', async () => {
    const c = await company();
    const grant = await c.call('POST', '/approvals/standing', c.as(c.admin), {
      action: 'refund.issue',
      agent_id: 'agent-7',
      constraints: { type: 'object', properties: { amount: { type: 'number', maximum: 100 } }, required: ['amount'] },
      valid_until: new Date(clock.now() + 86_400_000).toISOString(),
      max_uses: 3,
      reason: 'small refunds need no review',
    });
    expect(grant.statusCode, grant.body).toBe(201);
    const g = grant.json();
    expect(g).toMatchObject({ kind: 'standing', status: 'approved', usable: true, max_uses: 3 });
    expect((await c.execute(g.id, { amount: 40 })).json().approval_check).toMatchObject({ result: 'ok', basis: 'standing' });
    expect((await c.execute(g.id, { amount: 500 })).json().approval_check).toMatchObject({ result: 'mismatch', detail: expect.stringContaining('/amount') });
    expect((await c.execute(g.id, { amount: 10 }, { agent_id: 'agent-9' })).json().approval_check).toMatchObject({ result: 'mismatch', detail: expect.stringContaining('agent-9') });
    // The agent checks itself first: recorded, no use taken.
    const pre = await c.call('POST', `/approvals/${g.id}/check`, c.agent, { arguments: { amount: 99 }, agent_id: 'agent-7' });
    expect(pre.json()).toMatchObject({ result: 'ok' });
    expect((await c.entries('approval.precheck')).length).toBe(1);
    expect((await c.call('GET', '/approvals/standing', c.agent)).json().items).toMatchObject([{ id: g.id, uses: 1 }]);
    const revoked = await c.call('POST', `/approvals/standing/${g.id}/revoke`, c.as(c.admin), { reason: 'policy changed' });
    expect(revoked.json().status).toBe('revoked');
    expect((await c.execute(g.id, { amount: 10 })).json().approval_check).toMatchObject({ result: 'not_approved' });
    expect((await c.entries('approval.standing_granted')).length).toBe(1);
    expect((await c.entries('approval.standing_revoked'))[0]?.data).toMatchObject({ approval_id: g.id, reason: 'policy changed', actor: { email: c.admin.email } });
  });

  it('routes requests to a team, lets only its members decide, escalates once when the SLA runs out (fake clock), and wakes a long-poll', async () => {
    const c = await company();
    const team = await c.call('PUT', '/approval-teams/payments', c.as(c.admin), { members: [c.r1.email], sla_minutes: 30, escalation_target: 'payments-leads', match_actions: ['refund.*'] });
    expect(team.statusCode, team.body).toBe(200);
    await c.call('PUT', '/approval-teams/payments-leads', c.as(c.admin), { members: [c.r2.email] });
    const req = (await c.call('POST', '/approvals', c.agent, { action: 'refund.issue', arguments: { amount: 5 } })).json();
    expect(req).toMatchObject({ team: 'payments', sla_due_at: new Date(clock.now() + 30 * 60_000).toISOString() });
    problem(await c.call('POST', `/approvals/${req.id}/approve`, c.as(c.r2), {}), 403, 'not_in_team');
    expect((await c.call('GET', '/approvals?status=pending&team=payments', c.as(c.r1))).json().items.map((x: { id: string }) => x.id)).toEqual([req.id]);

    clock.advance(29 * 60_000);
    expect((await c.call('POST', '/approvals/sweep', c.as(c.admin))).json().escalated).toBe(0);
    clock.advance(2 * 60_000);
    expect((await c.call('POST', '/approvals/sweep', c.as(c.admin))).json().escalated).toBe(1);
    expect((await c.call('POST', '/approvals/sweep', c.as(c.admin))).json().escalated).toBe(0);
    const escalated = (await c.call('GET', `/approvals/${req.id}`, c.agent)).json();
    expect(escalated).toMatchObject({ assignee: 'payments-leads', escalated_at: expect.any(String), status: 'pending' });
    expect((await c.entries('approval.escalated'))[0]?.data).toMatchObject({ approval_id: req.id, to: 'payments-leads', sla_breached: true, actor: { kind: 'service' } });
    const hooks = await t.store.db.selectFrom('webhook_events').select('type').where('company_id', '=', c.admin.companyId).execute();
    expect(hooks.map((h) => h.type)).toEqual(expect.arrayContaining(['approval.requested', 'approval.escalated']));

    // Now the leads decide; a long-poll wakes with the decision.
    const waiting = c.call('GET', `/approvals/${req.id}?wait=30`, c.agent);
    const decided = await c.call('POST', `/approvals/${req.id}/approve`, c.as(c.r2), {});
    expect(decided.statusCode, decided.body).toBe(200);
    expect((await waiting).json()).toMatchObject({ status: 'approved' });
    expect((await c.call('GET', `/approvals/${req.id}?wait=0`, c.agent)).json().status).toBe('approved');
  });

  it('keeps a register of immutable policy versions and marks evaluations that name an unknown one', async () => {
    const c = await company();
    const text1 = 'package refunds\n\ndefault allow := false\nallow if input.amount <= 100\n';
    const v1 = await c.call('PUT', '/policies/refunds', c.as(c.admin), { content: text1, format: 'rego' });
    expect(v1.statusCode, v1.body).toBe(201);
    expect(v1.json()).toMatchObject({ policy_id: 'refunds', version: 1, content_hash: createHash('sha256').update(text1).digest('hex') });
    expect((await c.call('PUT', '/policies/refunds', c.as(c.admin), { content: text1, format: 'rego' })).statusCode).toBe(200);
    const text2 = text1.replace('100', '50');
    expect((await c.call('PUT', '/policies/refunds', c.as(c.admin), { content: text2, format: 'rego' })).json().version).toBe(2);
    problem(await c.call('PUT', '/policies/refunds', c.as(c.r1), { content: 'x' }), 403, 'forbidden');
    problem(await c.call('PUT', '/policies/refunds', c.as(c.admin), { content: '' }), 400, 'validation_failed');
    expect((await c.call('GET', '/policies/refunds/versions/1', c.agent)).json().content).toBe(text1);
    expect((await c.call('GET', '/policies/refunds/versions', c.agent)).json().items.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    problem(await c.call('GET', '/policies/refunds/versions/3', c.agent), 404, 'not_found');
    const created = await c.entries('policy.version_created');
    expect(created.map((e) => [e.data.version, e.data.content])).toEqual([[1, text1], [2, text2]]);

    const evaluate = (data: Record<string, unknown>) => c.call('POST', '/logs', c.agent, { event_type: 'policy.evaluated', data: { verdict: 'allow', action: 'refund.issue', ...data } });
    expect((await evaluate({ policy_id: 'refunds', policy_version: 2 })).json().policy_check).toEqual({ result: 'ok', policy_id: 'refunds', version: 2 });
    expect((await evaluate({ policy_id: 'refunds', policy_version: 3 })).json().policy_check).toEqual({ result: 'unknown_version', policy_id: 'refunds', version: 3 });
    expect((await evaluate({ policy_id: 'refunds', content_hash: v1.json().content_hash })).json().policy_check).toEqual({ result: 'ok', policy_id: 'refunds', version: 1 });
    expect((await evaluate({ policy_id: 'nope', policy_version: 1 })).json().policy_check.result).toBe('unknown_policy');
    expect((await c.call('POST', '/approvals', c.agent, { action: 'x', policy: { policy_id: 'refunds', version: 2 } })).statusCode).toBe(201);

    // Ten simultaneous new versions: ten consecutive numbers, each with exactly one entry.
    const puts = await Promise.all(Array.from({ length: 10 }, (_, i) => c.call('PUT', '/policies/limits', c.as(c.admin), { content: `limit ${i}` })));
    expect(puts.map((r) => r.statusCode)).toEqual(Array(10).fill(201));
    expect(puts.map((r) => r.json().version).sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const limits = (await c.entries('policy.version_created')).filter((e) => e.data.policy_id === 'limits');
    expect(limits.map((e) => e.data.version).sort((x: number, y: number) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    for (const r of puts) expect((await c.call('GET', `/policies/limits/versions/${r.json().version}`, c.agent)).json().content).toBe(limits.find((e) => e.data.version === r.json().version)?.data.content);
  });

  it('crash windows fail closed: an approval whose entry never committed is not usable, and an execution never checked is checked when its client retries', async () => {
    const c = await company();
    const a = (await c.call('POST', '/approvals', c.agent, { action: 'refund.issue', arguments: { amount: 1 } })).json();
    await c.call('POST', `/approvals/${a.id}/approve`, c.as(c.r1), {});
    // As if the process stopped after the decision's change but before its entry: the approval reads pending and covers nothing.
    const row = await t.store.db.selectFrom('approvals').select('approvers').where('approval_id', '=', a.id).executeTakeFirstOrThrow();
    const unrecorded = JSON.stringify(JSON.parse(row.approvers).map((x: Record<string, unknown>) => ({ ...x, log_id: '' })));
    await t.store.db.updateTable('approvals').set({ approvers: unrecorded }).where('approval_id', '=', a.id).execute();
    expect((await c.call('GET', `/approvals/${a.id}`, c.agent)).json()).toMatchObject({ status: 'pending', usable: false });
    const first = await c.call('POST', '/logs', { ...c.agent, 'idempotency-key': 'run-1' }, { event_type: 'action.executed', data: { action: 'refund.issue', approval_id: a.id, arguments: { amount: 1 } } });
    expect(first.json().approval_check).toMatchObject({ result: 'not_approved', detail: expect.stringContaining('not recorded') });
    await t.store.db.updateTable('approvals').set({ approvers: row.approvers }).where('approval_id', '=', a.id).execute();

    // As if the process stopped between an execution's commit and its check: the retry (same key) is checked, as the original.
    await t.store.db.deleteFrom('governance_checks').where('log_id', '=', first.json().log_id).execute();
    const retry = await c.call('POST', '/logs', { ...c.agent, 'idempotency-key': 'run-1' }, { event_type: 'action.executed', data: { action: 'refund.issue', approval_id: a.id, arguments: { amount: 1 } } });
    expect(retry.json()).toMatchObject({ log_id: first.json().log_id, approval_check: { result: 'ok' } });
    const again = await c.call('POST', '/logs', { ...c.agent, 'idempotency-key': 'run-1' }, { event_type: 'action.executed', data: { action: 'refund.issue', approval_id: a.id, arguments: { amount: 1 } } });
    expect(again.json().approval_check).toEqual(retry.json().approval_check);
    expect((await c.call('GET', `/approvals/${a.id}`, c.agent)).json().uses).toBe(1);
  });

  it('a single-use approval covers one of several simultaneous executions; arguments too deep for an entry are a 400', async () => {
    const c = await company();
    const a = (await c.call('POST', '/approvals', c.agent, { action: 'refund.issue', arguments: { amount: 1 } })).json();
    await c.call('POST', `/approvals/${a.id}/approve`, c.as(c.r1), {});
    const runs = await Promise.all(Array.from({ length: 8 }, () => c.execute(a.id, { amount: 1 })));
    const results = runs.map((r) => r.json().approval_check.result).sort();
    expect(results).toEqual(['consumed', 'consumed', 'consumed', 'consumed', 'consumed', 'consumed', 'consumed', 'ok']);
    expect((await c.call('GET', `/approvals/${a.id}`, c.agent)).json().uses).toBe(1);

    let deep: unknown = 1;
    for (let i = 0; i < 70; i++) deep = { d: deep };
    const before = (await c.entries('approval.requested')).length;
    problem(await c.call('POST', '/approvals', c.agent, { action: 'x', arguments: deep }), 400, 'validation_failed');
    expect((await c.entries('approval.requested')).length).toBe(before);
  });

  it('registers decisions with their policy evaluations, approvals and links', async () => {
    const c = await company();
    const decisionId = randomUUID();
    const traceId = randomUUID();
    await c.call('PUT', '/policies/credit', c.as(c.admin), { content: 'limit 1000' });
    await c.call('POST', '/logs/batch', c.agent, {
      logs: [
        { event_type: 'policy.evaluated', trace_id: traceId, data: { decision_id: decisionId, policy_id: 'credit', policy_version: 1, verdict: 'step_up', reason_codes: ['amount_over_limit'], inputs_hash: 'ab'.repeat(32) } },
        { event_type: 'decision.made', trace_id: traceId, agent_id: 'underwriter', data: { decision_id: decisionId, action: 'loan.approve', outcome: 'approve', model: 'gpt-5', model_version: '2026-08-01', confidence: 0.82, prompt_template_version: 'v12', prompt_hash: 'cd'.repeat(32), inputs_hash: 'ef'.repeat(32), retrieved_documents: ['doc-1', 'doc-2'], tools_used: ['credit_bureau'] } },
      ],
    });
    await c.call('POST', '/approvals', c.agent, { action: 'loan.approve', decision_id: decisionId, trace_id: traceId, arguments: { amount: 5000 } });
    const list = (await c.call('GET', '/decisions', c.as(c.auditor))).json();
    expect(list.items).toMatchObject([{ decision_id: decisionId, model: 'gpt-5', confidence: 0.82, agent_id: 'underwriter' }]);
    const d = (await c.call('GET', `/decisions/${decisionId}`, c.as(c.auditor))).json();
    expect(d).toMatchObject({
      decision_id: decisionId,
      model_version: '2026-08-01',
      prompt: { template_version: 'v12', hash: 'cd'.repeat(32) },
      inputs: { hash: 'ef'.repeat(32), documents: ['doc-1', 'doc-2'] },
      tools: ['credit_bureau'],
      policy_evaluations: [{ policy_id: 'credit', policy_version: 1, verdict: 'step_up', reason_codes: ['amount_over_limit'], check: { result: 'ok' } }],
      approvals: [{ action: 'loan.approve', status: 'pending' }],
      links: { evidence_bundle: `/api/v1/exports/evidence?trace_id=${traceId}` },
    });
    expect((await c.call('GET', d.links.verification.replace('/api/v1', ''), c.agent)).statusCode).toBe(200);
    problem(await c.call('GET', `/decisions/${randomUUID()}`, c.agent), 404, 'not_found');
  });

  it('tracks an incident through its statuses and signs a report the verifier checks offline', async () => {
    const c = await company();
    const traceId = randomUUID();
    await c.call('POST', '/logs', c.agent, { event_type: 'decision.made', trace_id: traceId, data: { decision_id: randomUUID(), action: 'refund.issue' } });
    const opened = await c.call('POST', '/incidents', c.as(c.r1), { title: 'Refund ran with a changed amount', severity: 'high', trace_ids: [traceId], art73: 'serious' });
    expect(opened.statusCode, opened.body).toBe(201);
    const inc = opened.json();
    expect(inc).toMatchObject({ status: 'open', deadlines: { art73: 'serious', report_due_at: new Date(Date.parse(inc.created_at) + 15 * 86_400_000).toISOString() } });
    expect(inc.deadlines.article_73.map((x: { days: number }) => x.days)).toEqual([15, 2, 10]);
    await c.call('POST', `/incidents/${inc.id}/assign`, c.as(c.admin), { assignee: c.r2.email });
    await c.call('POST', `/incidents/${inc.id}/comments`, c.as(c.r2), { text: 'looking' });
    expect((await c.call('POST', `/incidents/${inc.id}/status`, c.as(c.r2), { status: 'investigating' })).json().status).toBe('investigating');
    problem(await c.call('POST', `/incidents/${inc.id}/status`, c.as(c.r2), { status: 'investigating' }), 409, 'incident_status_unchanged');
    problem(await c.call('POST', `/incidents/${inc.id}/status`, c.as(c.r2), { status: 'gone' }), 400, 'validation_failed');
    problem(await c.call('POST', `/incidents/${inc.id}/comments`, c.as(c.auditor), { text: 'x' }), 403, 'forbidden');
    const full = (await c.call('GET', `/incidents/${inc.id}`, c.as(c.auditor))).json();
    expect(full.notes.map((n: { kind: string }) => n.kind)).toEqual(['opened', 'assigned', 'commented', 'status_changed']);
    expect(full).toMatchObject({ assignee: c.r2.email, status: 'investigating' });
    expect((await c.entries('incident.opened'))[0]?.data).toMatchObject({ incident_id: inc.id, actor: { email: c.r1.email } });

    const rep = await c.call('POST', `/incidents/${inc.id}/report`, c.as(c.admin));
    expect(rep.statusCode, rep.body).toBe(201);
    const doc = rep.json();
    // The trace's decision and the incident's own four entries (they join its one trace), each verified.
    expect(doc.report.entries.items.map((e: { event_type: string }) => e.event_type)).toEqual(['decision.made', 'incident.opened', 'incident.assigned', 'incident.commented', 'incident.status_changed']);
    expect(doc.format).toBe('audit-ledger/incident-report/v1');
    expect(doc.report).toMatchObject({ kind: 'incident', incident: { id: inc.id }, entries: { count: 5, all_valid: true }, root_causes: [{ trace_id: traceId }] });
    const trusted = parseTrustedKeys((await c.call('GET', '/integrity/keys', c.agent)).body);
    expect(verifyReport(doc, trusted).ok).toBe(true);
    expect(verifyReport({ ...doc, report: { ...doc.report, incident: { ...doc.report.incident, severity: 'low' } } }, trusted).ok).toBe(false);
    // The auditor's own tool, offline: audit-ledger-verify with the published keys.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'incident-report-'));
    fs.writeFileSync(path.join(dir, 'report.json'), rep.body);
    fs.writeFileSync(path.join(dir, 'keys.json'), (await c.call('GET', '/integrity/keys', c.agent)).body);
    const cli = spawnSync(process.execPath, [path.join(import.meta.dirname, '..', '..', 'verify', 'bin', 'audit-ledger-verify.js'), path.join(dir, 'report.json'), '--public-key', path.join(dir, 'keys.json')], { encoding: 'utf8' });
    expect(cli.status, cli.stdout + cli.stderr).toBe(0);
    expect(cli.stdout).toContain(`incident report of company ${c.admin.companyId} for incident ${inc.id}`);
    fs.rmSync(dir, { recursive: true });
    const again = await c.call('GET', `${String(rep.headers.location).replace('/api/v1', '')}?format=pdf`, c.as(c.auditor));
    expect(again.headers['content-type']).toBe('application/pdf');
    expect(again.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');

    await c.call('POST', `/incidents/${inc.id}/status`, c.as(c.r2), { status: 'closed' });
    problem(await c.call('POST', `/incidents/${inc.id}/assign`, c.as(c.r2), { assignee: 'x@example.com' }), 409, 'incident_closed');
    expect((await c.call('GET', '/incidents?status=closed', c.agent)).json().items.map((x: { id: string }) => x.id)).toEqual([inc.id]);
  });

  it("serves one agent SDK's human-review calls as aliases onto the approvals model", async () => {
    const c = await company();
    const decisionId = randomUUID();
    const asked = await c.call('POST', '/hitl/approve', c.agent, { decision_id: decisionId, reason: 'needs a human', reviewer: 'alice', metadata: { ticket: 7 } });
    expect(asked.statusCode, asked.body).toBe(201);
    const a = asked.json();
    expect(a).toMatchObject({ action: 'hitl.review', status: 'pending', decision_id: decisionId, arguments: { decision_id: decisionId, log_id: null, metadata: { ticket: 7 }, requested_reviewer: 'alice' } });
    problem(await c.call('POST', '/hitl/approve', c.agent, { approval_id: a.id, auth_response: { status: 'approved' } }), 403, 'forbidden');
    const approved = await c.call('POST', '/hitl/approve', c.as(c.r1), { approval_id: a.id, auth_response: { status: 'approved', reason: 'fine' } });
    expect(approved.json()).toMatchObject({ status: 'approved', decided_by: { email: c.r1.email } });

    const b = (await c.call('POST', '/hitl/approve', c.agent, { reason: 'second' })).json();
    // Escalating the request itself decides who decides: a reviewer's session, never the agent's key.
    problem(await c.call('POST', '/hitl/escalate', c.agent, { approval_id: b.id, current_reviewer: 'alice', escalation_target: c.r2.email, escalation_reason: 'out of office' }), 403, 'forbidden');
    const esc = await c.call('POST', '/hitl/escalate', c.as(c.r1), { approval_id: b.id, current_reviewer: 'alice', escalation_target: c.r2.email, escalation_reason: 'out of office' });
    expect(esc.json()).toMatchObject({ approval: { id: b.id, assignee: c.r2.email } });
    const loose = await c.call('POST', '/hitl/escalate', c.agent, { current_reviewer: 'alice', escalation_target: 'legal', escalation_reason: 'unclear' });
    expect(loose.json()).toMatchObject({ approval: null, log_id: expect.any(String) });
    problem(await c.call('POST', '/hitl/escalate', c.agent, { escalation_target: 'legal', escalation_reason: 'x' }), 400, 'validation_failed');

    // The spec's rejection, with the SDK's approval_id: needs a reviewer's session.
    problem(await c.call('POST', '/hitl/reject', c.agent, { approval_id: b.id, reviewer: 'system', rejection_reason: 'no' }), 403, 'forbidden');
    const rejected = await c.call('POST', '/hitl/reject', c.as(c.r2), { approval_id: b.id, reviewer: 'r2', rejection_reason: 'no', decision_id: decisionId });
    expect(rejected.statusCode, rejected.body).toBe(201);
    expect((await c.call('GET', `/approvals/${b.id}`, c.agent)).json()).toMatchObject({ status: 'rejected', decision_reason: 'no', decided_by: { email: c.r2.email } });
    const override = (await c.call('GET', `/hitl/overrides/${rejected.json().id}`, c.agent)).json();
    expect(override).toMatchObject({ id: rejected.json().id, rejection_reason: 'no' });
    problem(await c.call('GET', `/hitl/overrides/${randomUUID()}`, c.agent), 404, 'not_found');
    const trail = (await c.call('GET', '/hitl/audit-trail?limit=100', c.as(c.auditor))).json().items.map((x: { event_type: string }) => x.event_type);
    expect(trail).toEqual(['hitl.rejected', 'approval.rejected', 'hitl.escalated', 'approval.escalated', 'approval.requested', 'approval.approved', 'approval.requested']);
  });
});
