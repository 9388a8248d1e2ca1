// The administrators' audit trail (issue 17): every administrative route, walked from the OpenAPI
// document, writes its entry under audit-ledger/admin in the company's own chain, naming who did
// it, and never a secret. A new administrative route without an entry fails this test.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { agentKeyRegistration, agentSigner } from '@audit-ledger/sdk';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, startTestApp, type TestApp } from './helpers/app.js';
import { STORE_KINDS } from './helpers/env.js';
import { ingestBatch } from './helpers/ledger.js';

const OPERATOR = 'operator-token-for-the-admin-trail-test-0123456789';

/** Each administrative operation (a change, or a record an auditor must see) and the entry it writes. */
const EXPECTED: Record<string, string> = {
  createApiKey: 'api_key.created',
  revokeApiKey: 'api_key.revoked',
  createUser: 'user.created',
  updateUser: 'user.role_changed',
  resetUserPassword: 'user.password_reset',
  changePassword: 'user.password_changed',
  createWebhookEndpoint: 'webhook.endpoint_created',
  updateWebhookEndpoint: 'webhook.endpoint_updated',
  deleteWebhookEndpoint: 'webhook.endpoint_deleted',
  createStream: 'stream.created',
  updateStream: 'stream.updated',
  pauseStream: 'stream.paused',
  resumeStream: 'stream.resumed',
  deleteStream: 'stream.deleted',
  setTlogSettings: 'tlog.published',
  registerAgentKey: 'agent_key.registered',
  revokeAgentKey: 'agent_key.revoked',
  setRetention: 'compliance.retention_changed',
  runRetention: 'compliance.retention_run',
  placeHold: 'compliance.hold_placed',
  releaseHold: 'compliance.hold_released',
  requestErasure: 'compliance.erasure',
  rotateSigningKey: 'signing_key.rotated',
  exportLogs: 'export.generated',
  getEvidenceBundle: 'evidence.generated',
  startVerification: 'integrity.verification_requested',
  createReport: 'compliance.report_generated',
  login: 'auth.login_locked',
  // governance (docs/governance.md), under audit-ledger/governance
  putApprovalTeam: 'approval.team_set',
  deleteApprovalTeam: 'approval.team_removed',
  grantStandingApproval: 'approval.standing_granted',
  revokeStandingApproval: 'approval.standing_revoked',
  runApprovalSweep: 'approval.sweep_run',
  putPolicy: 'policy.version_created',
};

describe.each(STORE_KINDS)('the administrators audit trail on %s', (kind) => {
  let t: TestApp;
  let receiver: http.Server;
  beforeAll(async () => {
    receiver = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(200).end()));
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    t = await startTestApp(kind, { env: { CHECKPOINT_INTERVAL_MS: '0', INTEGRITY_VERIFY_INTERVAL_SECONDS: '0', RETENTION_INTERVAL_SECONDS: '0', WEBHOOK_ALLOW_PRIVATE: 'true', LEDGER_OPERATOR_TOKEN: OPERATOR } });
  });
  afterAll(async () => {
    await t.close();
    await new Promise((r) => receiver.close(r));
  });

  it('every administrative route writes its entry, naming the actor, never a secret', async () => {
    const acct: Account = await t.newAccount();
    const admin = { authorization: `Bearer ${acct.token}` };
    const call = async (method: string, url: string, payload?: object, headers: Record<string, string> = admin) => {
      const res = await t.inject({ method: method as 'GET', url: `/api/v1${url}`, headers, ...(payload ? { payload } : {}) });
      expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
      return res;
    };
    const trail = async () => {
      const of = async (source: string) => (await t.inject({ method: 'GET', url: `/api/v1/logs?source=${encodeURIComponent(source)}&limit=1000`, headers: admin })).json().items as Array<{ seq: number; event_type: string; data: { actor: Record<string, string> } & Record<string, unknown> }>;
      return [...(await of('audit-ledger/admin')), ...(await of('audit-ledger/governance'))].sort((x, y) => x.seq - y.seq);
    };
    const seen = new Map<string, { event_type: string; data: Record<string, unknown> & { actor: Record<string, string> } }>();
    /** Runs one operation and takes the one entry it added. */
    const walk = async (operationId: string, run: () => Promise<unknown>) => {
      const before = (await trail()).length;
      await run();
      const after = await trail();
      const added = after.slice(before);
      expect(added.map((e) => e.event_type), operationId).toContain(EXPECTED[operationId]);
      seen.set(operationId, added.find((e) => e.event_type === EXPECTED[operationId]) as never);
    };

    let key = '';
    let keyId = '';
    await walk('createApiKey', async () => ({ id: keyId, key } = (await call('POST', '/auth/api_keys', { name: 'trail', rate_limit_per_minute: 100000 })).json()));
    const trace = randomUUID();
    const ids: string[] = (await ingestBatch(t, key, Array.from({ length: 4 }, (_, i) => ({ event_type: 'tool.called', trace_id: trace, data: { i } })))).json().log_ids;
    let userId = '';
    let otp = '';
    const email = `trail-${randomUUID()}@example.com`;
    await walk('createUser', async () => {
      const r = (await call('POST', '/users', { email, role: 'reviewer' })).json();
      userId = r.user.user_id;
      otp = r.one_time_password;
    });
    await walk('changePassword', async () => {
      const token = (await call('POST', '/auth/login', { email, password: otp }, {})).json().access_token;
      await call('POST', '/auth/password', { current_password: otp, new_password: 'a long new password' }, { authorization: `Bearer ${token}` });
    });
    await walk('updateUser', () => call('PATCH', `/users/${userId}`, { role: 'auditor' }));
    await walk('resetUserPassword', () => call('POST', `/users/${userId}/password-reset`, {}));
    let endpointId = '';
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    await walk('createWebhookEndpoint', async () => (endpointId = (await call('POST', '/webhooks/endpoints', { url, event_types: ['hitl.rejected'] })).json().id));
    await walk('updateWebhookEndpoint', () => call('PATCH', `/webhooks/endpoints/${endpointId}`, { rotate_secret: true, description: 'rotated' }));
    await walk('deleteWebhookEndpoint', () => call('DELETE', `/webhooks/endpoints/${endpointId}`));
    let streamId = '';
    await walk('createStream', async () => (streamId = (await call('POST', '/streams', { name: 'trail', destination: { type: 'directory', folder: 'trail' }, format: 'ledger' })).json().id));
    await walk('updateStream', () => call('PATCH', `/streams/${streamId}`, { filter: { event_types: ['tool.called'] } }));
    await walk('pauseStream', () => call('POST', `/streams/${streamId}/pause`));
    await walk('resumeStream', () => call('POST', `/streams/${streamId}/resume`));
    await walk('deleteStream', () => call('DELETE', `/streams/${streamId}`));
    await walk('setTlogSettings', () => call('PUT', '/tlog/settings', { public: true }));
    const agentKey = await agentSigner('trail-agent', generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
    let agentKeyId = '';
    await walk('registerAgentKey', async () => (agentKeyId = (await call('POST', '/agent-keys', await agentKeyRegistration(agentKey, acct.companyId))).json().key_id));
    await walk('revokeAgentKey', () => call('POST', `/agent-keys/${agentKeyId}/revoke`, { reason: 'trail' }));
    await walk('setRetention', () => call('PUT', '/compliance/retention', { content_days: 3650 }));
    await walk('runRetention', () => call('POST', '/compliance/retention/run'));
    let holdId = '';
    await walk('placeHold', async () => (holdId = (await call('POST', '/compliance/holds', { scope: { trace_id: trace }, reason: 'audit', case_reference: 'C-1' })).json().id));
    await walk('releaseHold', () => call('POST', `/compliance/holds/${holdId}/release`, { reason: 'done' }));
    await walk('requestErasure', () => call('POST', '/compliance/erasures', { log_ids: [ids[0]], legal_basis: 'GDPR Art. 17' }));
    await walk('exportLogs', () => call('GET', '/exports/logs?format=jsonl', undefined, { 'x-api-key': key }));
    await walk('getEvidenceBundle', () => call('GET', `/exports/evidence?trace_id=${trace}`));
    await walk('createReport', () => call('POST', '/compliance/reports', { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' }));
    await walk('startVerification', () => call('POST', '/integrity/verify', { entry_signatures: true }));
    await walk('rotateSigningKey', () => call('POST', '/integrity/keys/rotate', undefined, { authorization: `Bearer ${OPERATOR}` }));
    await walk('login', async () => {
      for (let i = 0; i < 11; i++) await t.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: `wrong ${i}` } });
    });
    await walk('putApprovalTeam', () => call('PUT', '/approval-teams/payments', { members: [acct.email], sla_minutes: 30 }));
    await walk('deleteApprovalTeam', () => call('DELETE', '/approval-teams/payments'));
    let standingId = '';
    await walk('grantStandingApproval', async () => (standingId = (await call('POST', '/approvals/standing', { action: 'refund.issue', valid_until: '2099-01-01T00:00:00Z', reason: 'trail' })).json().id));
    await walk('revokeStandingApproval', () => call('POST', `/approvals/standing/${standingId}/revoke`, { reason: 'trail' }));
    await walk('runApprovalSweep', () => call('POST', '/approvals/sweep'));
    await walk('putPolicy', () => call('PUT', '/policies/refunds', { content: 'allow if amount <= 100' }));
    await walk('revokeApiKey', () => call('DELETE', `/auth/api_keys/${keyId}`));

    // Every administrative operation of the document is walked: a change by an admin, and the records above.
    const doc = (await t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as { paths: Record<string, Record<string, { operationId: string; 'x-required-roles'?: string[] }>> };
    const adminChanges = Object.values(doc.paths).flatMap((ops) => Object.entries(ops).filter(([m, o]) => m !== 'get' && o['x-required-roles']?.length === 1 && o['x-required-roles'][0] === 'admin').map(([, o]) => o.operationId));
    for (const op of adminChanges) expect(seen.has(op), `${op} is an administrative route: walk it and assert its entry`).toBe(true);

    // Who did it: the admin, the API key, the operator, or the service; and never a secret.
    expect(seen.get('createApiKey')?.data.actor).toEqual({ kind: 'user', user_id: expect.any(String), email: acct.email });
    expect(seen.get('exportLogs')?.data.actor).toMatchObject({ kind: 'api_key', key_id: keyId });
    expect(seen.get('rotateSigningKey')?.data).toMatchObject({ actor: { kind: 'operator' }, statement: expect.stringContaining('audit-ledger/v1/key-transition'), old_signature: expect.any(String) });
    expect(seen.get('login')?.data).toMatchObject({ actor: { kind: 'service', task: 'login' }, subject: { user_id: userId }, failed_attempts: 10 });
    expect(seen.get('updateWebhookEndpoint')?.data).toMatchObject({ secret_rotated: true, changed: { description: 'rotated' } });
    const text = JSON.stringify(await trail());
    expect(text).not.toContain(key);
    expect(text).not.toContain(otp);
    expect(text).not.toContain('a long new password');
    expect(text).not.toMatch(/whsec_|scrypt|password_hash/);
    // All of it in the company's own chain, which still verifies.
    const report = (await call('GET', '/integrity/report')).json();
    expect(report.company_id).toBe(acct.companyId);
  });
});
