// A real agent loop through the SDK's guarded() against the real service (a child process):
// one run approved, one rejected, one whose arguments were changed after approval (guarded()
// refuses to run it; a rogue path that runs it anyway is caught at ingestion). The ledger, the
// root cause, the webhook deliveries and the offline evidence bundle say exactly what happened.
import { randomUUID } from 'node:crypto';
import { parseTrustedKeys, verifyBundle } from '@audit-ledger/core';
import { ApprovalDenied, ApprovalMismatch, argumentsHash, createClient, type LedgerEntry } from '@audit-ledger/sdk';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestDatabase, type TestDatabase } from './helpers/stores.js';
import { BOOTSTRAP, killLeftovers, type Service, startService } from './fault/harness.js';
import { receiver, verifySignature } from './helpers/webhook-receiver.js';
import { freePort } from './helpers/console-browser.js';

describe('an agent loop through guarded() against the service', () => {
  let db: TestDatabase;
  let svc: Service;
  let rx: Awaited<ReturnType<typeof receiver>>;
  let baseUrl: string;
  let key: string;
  let reviewer: Record<string, string>;
  let secret: string;
  const api = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const res = await fetch(`${baseUrl}${path}`, { method, headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const text = await res.text();
    return { status: res.status, body: text, json: () => JSON.parse(text) };
  };

  beforeAll(async () => {
    db = await createTestDatabase('sqlite');
    rx = await receiver();
    svc = await startService({ LEDGER_DATA_DIR: db.dataDir, ...BOOTSTRAP, PORT: String(await freePort()), CHECKPOINT_INTERVAL_MS: '100', WEBHOOK_ALLOW_PRIVATE: 'true' });
    baseUrl = `${svc.url}/api/v1`;
    const admin = { authorization: `Bearer ${(await api('POST', '/auth/login', {}, { email: BOOTSTRAP.LEDGER_BOOTSTRAP_EMAIL, password: BOOTSTRAP.LEDGER_BOOTSTRAP_PASSWORD })).json().access_token}` };
    key = (await api('POST', '/auth/api_keys', admin, { name: 'agents', rate_limit_per_minute: 100_000 })).json().key;
    const invited = (await api('POST', '/users', admin, { email: 'rita.reviewer@example.com', role: 'reviewer' })).json();
    const first = (await api('POST', '/auth/login', {}, { email: 'rita.reviewer@example.com', password: invited.one_time_password })).json().access_token;
    await api('POST', '/auth/password', { authorization: `Bearer ${first}` }, { current_password: invited.one_time_password, new_password: 'rita reviews every refund' });
    reviewer = { authorization: `Bearer ${(await api('POST', '/auth/login', {}, { email: 'rita.reviewer@example.com', password: 'rita reviews every refund' })).json().access_token}` };
    const endpoint = await api('POST', '/webhooks/endpoints', admin, { url: rx.url, event_types: ['approval.requested', 'approval.decided', 'approval.violated'] });
    expect(endpoint.status, endpoint.body).toBe(201);
    secret = endpoint.json().secret;
  }, 120_000);
  afterAll(async () => {
    killLeftovers();
    await rx?.close();
    await db?.drop();
  });

  /** The reviewer: waits for the next pending request of this trace and decides it. */
  async function decideNext(traceId: string, decide: 'approve' | 'reject', meanwhile?: () => void) {
    let id = '';
    await vi.waitFor(
      async () => {
        const queue = (await api('GET', `/approvals?status=pending&trace_id=${traceId}`, reviewer)).json().items;
        expect(queue).toHaveLength(1);
        id = queue[0].id;
      },
      { timeout: 10_000, interval: 25 },
    );
    meanwhile?.();
    const res = await api('POST', `/approvals/${id}/${decide}`, reviewer, decide === 'approve' ? { reason: 'checked against the ticket' } : { reason: 'amount exceeds the order total' });
    expect(res.status, res.body).toBe(200);
    return id;
  }

  it('approved, rejected and changed-after-approval runs: the ledger, the root cause, the webhooks and the bundle agree', async () => {
    const client = createClient({ baseUrl, apiKey: key });
    const traces = [randomUUID(), randomUUID(), randomUUID()];
    const ran: unknown[] = [];
    const refund = async (args: { order: string; amount: number }) => {
      ran.push(structuredClone(args));
      return { refunded: args.amount };
    };

    // 1. Approved: runs once, and its execution checks ok.
    const [one] = await Promise.all([client.approvals.guarded('refund.issue', { order: 'A-1', amount: 40 }, refund, { trace_id: traces[0], agent_id: 'support-agent', tool: 'payments', risk: 'high', pollSeconds: 5 }), decideNext(traces[0] as string, 'approve')]);
    expect(one.value).toEqual({ refunded: 40 });
    expect(one.approval).toMatchObject({ status: 'approved', arguments_hash: argumentsHash({ order: 'A-1', amount: 40 }), approvals: [{ email: 'rita.reviewer@example.com' }] });
    expect(one.execution.approval_check).toMatchObject({ result: 'ok', basis: 'request' });

    // 2. Rejected: nothing runs.
    const two = await Promise.allSettled([client.approvals.guarded('refund.issue', { order: 'A-2', amount: 4000 }, refund, { trace_id: traces[1], agent_id: 'support-agent', pollSeconds: 5 }), decideNext(traces[1] as string, 'reject')]);
    expect(two[0].status).toBe('rejected');
    expect((two[0] as PromiseRejectedResult).reason).toBeInstanceOf(ApprovalDenied);
    expect((two[0] as PromiseRejectedResult).reason.approval).toMatchObject({ status: 'rejected', decision_reason: 'amount exceeds the order total' });

    // 3. The arguments change after they were sent for approval (the agent's state was mutated while it waited): guarded() runs nothing.
    const args3 = { order: 'A-3', amount: 30 };
    const three = await Promise.allSettled([client.approvals.guarded('refund.issue', args3, refund, { trace_id: traces[2], agent_id: 'support-agent', pollSeconds: 5 }), decideNext(traces[2] as string, 'approve', () => (args3.amount = 3000))]);
    expect((three[0] as PromiseRejectedResult).reason).toBeInstanceOf(ApprovalMismatch);
    expect(ran).toEqual([{ order: 'A-1', amount: 40 }]);
    const approval3 = (three[0] as PromiseRejectedResult).reason.approval;
    // …and a rogue path that runs it anyway is stored, and caught at ingestion.
    const rogue = await api('POST', '/logs', { 'x-api-key': key }, { event_type: 'action.executed', trace_id: traces[2], agent_id: 'support-agent', data: { action: 'refund.issue', approval_id: approval3.id, arguments: args3 } });
    expect(rogue.json().approval_check).toMatchObject({ result: 'mismatch' });

    // The ledger says exactly what happened, trace by trace.
    const read = async (traceId: string) => {
      const out: LedgerEntry[] = [];
      for await (const e of client.search({ trace_id: traceId })) out.push(e);
      return out.map((e) => [e.event_type, (e.data as Record<string, unknown> | null)?.result ?? (e.data as Record<string, unknown> | null)?.status ?? null]);
    };
    expect(await read(traces[0] as string)).toEqual([['approval.requested', null], ['approval.approved', null], ['action.executed', 'succeeded'], ['approval.checked', 'ok']]);
    expect(await read(traces[1] as string)).toEqual([['approval.requested', null], ['approval.rejected', null]]);
    expect(await read(traces[2] as string)).toEqual([['approval.requested', null], ['approval.approved', null], ['action.blocked', null], ['action.executed', null], ['approval.checked', 'mismatch']]);

    // The root cause of each.
    const rootCause = async (traceId: string) => client.rootCause((await client.replay(traceId)).id);
    expect(await rootCause(traces[0] as string)).toMatchObject({ detected: false, root_cause_type: 'NONE' });
    const rc3 = await rootCause(traces[2] as string);
    expect(rc3).toMatchObject({ detected: true, root_cause_type: 'POLICY_VIOLATION' });
    expect(rc3.description).toContain(approval3.id);
    expect(rc3.description).toContain('what ran is not what was approved');

    // The webhook deliveries, signed: three requests, three decisions, one violation.
    await vi.waitFor(() => expect(rx.got.length).toBeGreaterThanOrEqual(7), { timeout: 15_000, interval: 50 });
    for (const m of rx.got) expect(verifySignature(secret, m)).toBe(true);
    const hooks = rx.got.map((m) => JSON.parse(m.body)).map((b) => [b.type, b.data.status ?? b.data.result ?? null]);
    expect(hooks.filter(([t]) => t === 'approval.requested')).toHaveLength(3);
    expect(hooks.filter(([t]) => t === 'approval.decided').map(([, s]) => s).sort()).toEqual(['approved', 'approved', 'rejected']);
    expect(hooks.filter(([t]) => t === 'approval.violated')).toEqual([['approval.violated', 'mismatch']]);

    // The evidence bundle of the violating trace verifies offline with the published key.
    const keys = parseTrustedKeys(await (await fetch(`${baseUrl}/integrity/keys`)).text());
    let bundle: unknown;
    await vi.waitFor(
      async () => {
        bundle = await client.evidence({ trace_id: traces[2] as string });
        expect((bundle as { entries: unknown[] }).entries).toHaveLength(5);
      },
      { timeout: 10_000, interval: 100 },
    );
    const report = verifyBundle(bundle, keys);
    expect(report.checks.filter((c) => c.status === 'fail')).toEqual([]);
    expect(report.ok).toBe(true);
  }, 60_000);
});
