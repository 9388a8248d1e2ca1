// Records the OpenAPI document's examples from a real run: a small company uses every operation
// once, through the real app on a real (temporary SQLite) store, and each operation's request
// and answer are written to src/http/openapi-examples.json (data, read by http/openapi.ts). So the
// examples are real answers of this code, never hand-written filler; test/openapi.test.ts checks
// each against its schema. Run with `npm run openapi:examples` (which then writes docs/openapi.json).
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { agentKeyRegistration, agentSigner, signAgentEvent } from '@audit-ledger/sdk';
import fs from 'node:fs';
import path from 'node:path';
import { startTestApp } from '../test/helpers/app.js';

type Json = unknown;
const examples: Record<string, { request?: Json; response?: Json; status: number }> = {};

/** Keeps examples short: arrays to their first two items, long strings (notes, PEMs) as they are. */
function trim(v: Json): Json {
  if (Array.isArray(v)) return v.slice(0, 2).map(trim);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, trim(x)]));
  return v;
}

async function main() {
  const t = await startTestApp('sqlite', { env: { LEDGER_OPERATOR_TOKEN: 'operator-token-from-the-secret-store', CHECKPOINT_INTERVAL_MS: '0', STREAM_DELIVERY: 'off' }, resolveHost: async () => [{ address: '93.184.215.14', family: 4 }] });
  const call = async (operationId: string, method: string, url: string, opts: { headers?: Record<string, string>; payload?: Json } = {}) => {
    const res = await t.inject({ method: method as 'GET', url, headers: opts.headers ?? {}, ...(opts.payload !== undefined ? { payload: opts.payload as object } : {}) });
    if (res.statusCode >= 300) throw new Error(`${operationId}: ${res.statusCode} ${res.body}`);
    const type = String(res.headers['content-type'] ?? '');
    // Bytes (tlog tiles) are shown as their size and first hashes in hex.
    const binary = type.startsWith('application/octet-stream') ? `(${res.rawPayload.length} bytes) ${res.rawPayload.subarray(0, 64).toString('hex')}…` : undefined;
    const response = binary ?? (type.startsWith('application/json') ? res.json() : res.body);
    examples[operationId] = { status: res.statusCode, ...(opts.payload !== undefined ? { request: opts.payload } : {}), ...(res.body !== '' ? { response: trim(response) } : {}) };
    return res;
  };
  try {
    const acct = await t.newAccount({ company: 'Acme Capital' });
    const login = await call('login', 'POST', '/api/v1/auth/login', { payload: { email: acct.email, password: acct.password } });
    const user = { authorization: `Bearer ${login.json().access_token}` };
    await call('getMe', 'GET', '/api/v1/auth/me', { headers: user });
    const key = await call('createApiKey', 'POST', '/api/v1/auth/api_keys', { headers: user, payload: { name: 'trading-agents-prod', rate_limit_per_minute: 6000 } });
    const api = { 'x-api-key': key.json().key as string };
    await call('listApiKeys', 'GET', '/api/v1/auth/api_keys', { headers: user });
    const invited = await call('createUser', 'POST', '/api/v1/users', { headers: user, payload: { email: 'ana.lima@acme.example', role: 'auditor' } });
    const uid = invited.json().user.user_id as string;
    await call('listUsers', 'GET', '/api/v1/users', { headers: user });
    await call('updateUser', 'PATCH', `/api/v1/users/${uid}`, { headers: user, payload: { role: 'reviewer' } });
    const reset = await call('resetUserPassword', 'POST', `/api/v1/users/${uid}/password-reset`, { headers: user });
    const ana = (await t.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'ana.lima@acme.example', password: reset.json().one_time_password } })).json().access_token as string;
    await call('changePassword', 'POST', '/api/v1/auth/password', { headers: { authorization: `Bearer ${ana}` }, payload: { current_password: reset.json().one_time_password, new_password: 'a passphrase Ana chose herself' } });

    const trace = randomUUID();
    const decisionId = randomUUID();
    const single = await call('appendLog', 'POST', '/api/v1/logs', {
      headers: api,
      payload: { event_type: 'context.retrieved', trace_id: trace, agent_id: 'equities-trader', source: 'trading-runtime', timestamp: '2026-03-01T09:20:31.000Z', data: { source_id: 'feed:NASDAQ:ACME', source_type: 'market_feed', as_of: '2026-03-01T09:20:01.000Z', max_age_seconds: 30 }, event_id: 'read-1' },
    });
    await call('appendLogBatch', 'POST', '/api/v1/logs/batch', {
      headers: api,
      payload: {
        logs: [
          { event_type: 'decision.made', trace_id: trace, agent_id: 'equities-trader', timestamp: '2026-03-01T09:21:15.000Z', parent_event_id: 'read-1', data: { decision_id: decisionId, decision: 'buy', symbol: 'ACME', quantity: 100, inputs: ['read-1'] }, idempotency_key: `decision-${decisionId}` },
          { event_type: 'action.executed', trace_id: trace, agent_id: 'equities-trader', timestamp: '2026-03-01T09:21:16.000Z', data: { action: 'place_order', tool: 'broker-api', order_id: 'ord-55120' } },
        ],
      },
    });
    const logId = single.json().log_id as string;
    await call('listLogs', 'GET', `/api/v1/logs?trace_id=${trace}&limit=2`, { headers: api });
    await call('getLog', 'GET', `/api/v1/logs/${logId}`, { headers: api });
    await call('searchLogs', 'GET', `/api/v1/logs/search?q=ACME&where=${encodeURIComponent('data.quantity > 50')}&limit=2`, { headers: api });
    await call('verifyLog', 'GET', `/api/v1/logs/${logId}/verify`, { headers: api });
    await call('getInclusionProof', 'GET', `/api/v1/logs/${logId}/proof`, { headers: api });
    await call('exportOtlpTraces', 'POST', '/api/v1/otlp/v1/traces', {
      headers: api,
      payload: {
        resourceSpans: [{
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'equities-trader' } }] },
          scopeSpans: [{ scope: { name: 'agent-runtime', version: '1.4.0' }, spans: [{
            traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', parentSpanId: '53995c3f42cd8ad8', name: 'execute_tool crm_search', kind: 3,
            startTimeUnixNano: '1772356803000000000', endTimeUnixNano: '1772356804000000000',
            attributes: [{ key: 'gen_ai.operation.name', value: { stringValue: 'execute_tool' } }, { key: 'gen_ai.tool.name', value: { stringValue: 'crm_search' } }],
            status: { code: 2, message: 'timeout after 10000 ms' },
          }] }],
        }],
      },
    });
    await call('exportOtlpLogs', 'POST', '/api/v1/otlp/v1/logs', {
      headers: api,
      payload: { resourceLogs: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'equities-trader' } }] }, scopeLogs: [{ scope: { name: 'agent-runtime' }, logRecords: [{
        timeUnixNano: '1772356875000000000', traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', eventName: 'policy.evaluated', severityNumber: 9,
        body: { stringValue: 'order-limit allows 100 ACME' },
        attributes: [{ key: 'audit_ledger.data.policy_id', value: { stringValue: 'order-limit' } }, { key: 'audit_ledger.data.result', value: { stringValue: 'allow' } }],
      }] }] }] },
    });

    await call('getIntegrityStatus', 'GET', '/api/v1/integrity/status', { headers: api });
    const job = await call('startVerification', 'POST', '/api/v1/integrity/verify', { headers: user });
    // Let the job run, then read it and its report.
    for (let i = 0; i < 200; i++) {
      const r = await t.inject({ method: 'GET', url: `/api/v1/integrity/jobs/${job.json().job_id}`, headers: user });
      if (['completed', 'failed'].includes(r.json().status)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await call('getVerificationJob', 'GET', `/api/v1/integrity/jobs/${job.json().job_id}`, { headers: user });
    await call('getIntegrityReport', 'GET', '/api/v1/integrity/report', { headers: user });
    await call('getCheckpoint', 'GET', '/api/v1/integrity/checkpoint', { headers: api });
    await call('listCheckpoints', 'GET', '/api/v1/integrity/checkpoints?limit=2', { headers: api });
    await t.inject({ method: 'POST', url: '/api/v1/logs', headers: api, payload: { event_type: 'agent.completed', trace_id: trace, data: { status: 'succeeded' } } });
    await call('getConsistencyProof', 'GET', '/api/v1/integrity/consistency?first=3&second=6', { headers: api });
    await call('listSigningKeys', 'GET', '/api/v1/integrity/keys', { headers: api });
    await call('listCheckpointTimestamps', 'GET', '/api/v1/integrity/timestamps?limit=10', { headers: api });
    await call('getTlogSettings', 'GET', '/api/v1/tlog/settings', { headers: api });
    await call('setTlogSettings', 'PUT', '/api/v1/tlog/settings', { headers: user, payload: { public: true } });
    const tlogSize = (await call('getTlogCheckpoint', 'GET', '/api/v1/tlog/checkpoint', { headers: api })).body.split('\n')[1] as string;
    const width = Math.min(256, Number(tlogSize));
    await call('getTlogTile', 'GET', `/api/v1/tlog/tile/0/000.p/${width}`, { headers: api });
    await call('getTlogEntryBodies', 'GET', '/api/v1/tlog/entries/000.p/2', { headers: api });
    await call('getPublicTlogCheckpoint', 'GET', `/api/v1/public/tlog/${acct.companyId}/checkpoint`);
    await call('getPublicTlogTile', 'GET', `/api/v1/public/tlog/${acct.companyId}/tile/entries/000.p/2`);
    await call('exportLogs', 'GET', `/api/v1/exports/logs?format=jsonl&trace_id=${trace}`, { headers: api });
    await call('getEvidenceBundle', 'GET', `/api/v1/exports/evidence?trace_id=${trace}`, { headers: api });

    const replay = await call('createReplay', 'POST', '/api/v1/forensics/replays', { headers: api, payload: { trace_id: trace, metadata: { ticket: 'INC-2291' } } });
    const rid = replay.json().id as string;
    await call('listReplays', 'GET', '/api/v1/forensics/replays?limit=2', { headers: api });
    await call('listTraces', 'GET', '/api/v1/traces?limit=2', { headers: api });
    await call('getReplay', 'GET', `/api/v1/forensics/replays/${rid}`, { headers: api });
    for (const [op, p] of [['getReplayTimeline', 'timeline'], ['getReplayCausalGraph', 'causal-graph'], ['getReplayStaleness', 'staleness'], ['getReplayRootCause', 'root-cause']] as const) {
      await call(op, 'GET', `/api/v1/forensics/replays/${rid}/${p}`, { headers: api });
    }
    await call('rejectDecision', 'POST', '/api/v1/hitl/reject', { headers: user, payload: { reviewer: 'maria.gonzalez@acme.example', rejection_reason: 'Order placed on a market feed 74 s old; the desk limit is 30 s', decision_id: decisionId } });
    const overrides = await call('listOverrides', 'GET', `/api/v1/hitl/overrides?trace_id=${trace}`, { headers: user });
    await call('getOverride', 'GET', `/api/v1/hitl/overrides/${overrides.json().items[0].id}`, { headers: user });

    // Governance (docs/governance.md): Ana (a reviewer) decides what the agent asks for.
    const reviewer = { authorization: `Bearer ${ana}` };
    await t.inject({ method: 'PUT', url: '/api/v1/approval-teams/risk-office', headers: user, payload: { members: ['ana.lima@acme.example'] } });
    await call('putApprovalTeam', 'PUT', '/api/v1/approval-teams/trading-desk', { headers: user, payload: { members: ['ana.lima@acme.example'], sla_minutes: 30, escalation_target: 'risk-office', match_actions: ['place_order*'], match_risks: ['critical'], limits: { min_risk: 'high', max_uses: 1, max_expires_in_seconds: 3600 } } });
    await call('listApprovalTeams', 'GET', '/api/v1/approval-teams', { headers: user });
    await t.inject({ method: 'PUT', url: '/api/v1/approval-teams/night-shift', headers: user, payload: { members: [] } });
    await call('deleteApprovalTeam', 'DELETE', '/api/v1/approval-teams/night-shift', { headers: user });
    await call('putPolicy', 'PUT', '/api/v1/policies/order-limit', { headers: user, payload: { content: 'package orders\n\ndefault allow := false\nallow if input.quantity <= 1000\n', format: 'rego', description: 'Desk order limit' } });
    await call('listPolicies', 'GET', '/api/v1/policies', { headers: api });
    await call('listPolicyVersions', 'GET', '/api/v1/policies/order-limit/versions', { headers: api });
    await call('getPolicyVersion', 'GET', '/api/v1/policies/order-limit/versions/1', { headers: api });
    const orderArgs = { symbol: 'ACME', side: 'buy', quantity: 5000, limit_price: 41.2 };
    const approval = await call('requestApproval', 'POST', '/api/v1/approvals', {
      headers: api,
      payload: { action: 'place_order', tool: 'broker-api', arguments: orderArgs, trace_id: trace, decision_id: decisionId, agent_id: 'equities-trader', risk: 'high', reason: 'Quantity 5000 is above the desk limit of 1000', policy: { policy_id: 'order-limit', version: 1 }, expires_in_seconds: 900 },
    });
    const aid = approval.json().id as string;
    await call('listApprovals', 'GET', '/api/v1/approvals?status=pending&team=trading-desk', { headers: reviewer });
    await call('checkApproval', 'POST', `/api/v1/approvals/${aid}/check`, { headers: api, payload: { arguments: orderArgs, action: 'place_order', agent_id: 'equities-trader' } });
    await call('approveApproval', 'POST', `/api/v1/approvals/${aid}/approve`, { headers: reviewer, payload: { reason: 'Client mandate FX-22 allows 5000' } });
    await call('getApproval', 'GET', `/api/v1/approvals/${aid}?wait=30`, { headers: api });
    await t.inject({ method: 'POST', url: '/api/v1/logs', headers: api, payload: { event_type: 'action.executed', trace_id: trace, agent_id: 'equities-trader', data: { action: 'place_order', tool: 'broker-api', approval_id: aid, arguments: orderArgs, order_id: 'ord-55121' } } });
    const other = (await t.inject({ method: 'POST', url: '/api/v1/approvals', headers: api, payload: { action: 'cancel_all_orders', risk: 'critical', trace_id: trace, reason: 'Volatility halt' } })).json().id as string;
    await call('escalateApproval', 'POST', `/api/v1/approvals/${other}/escalate`, { headers: user, payload: { to: 'risk-office', reason: 'Desk head is away' } });
    await call('rejectApproval', 'POST', `/api/v1/approvals/${other}/reject`, { headers: reviewer, payload: { reason: 'The halt is already handled by the exchange' } });
    await call('runApprovalSweep', 'POST', '/api/v1/approvals/sweep', { headers: user });
    const standing = await call('grantStandingApproval', 'POST', '/api/v1/approvals/standing', {
      headers: user,
      payload: { action: 'place_order', agent_id: 'equities-trader', constraints: { type: 'object', properties: { quantity: { type: 'integer', maximum: 100 } }, required: ['quantity'] }, valid_until: '2026-12-31T23:59:59Z', max_uses: 500, reason: 'Small orders need no review this quarter' },
    });
    await call('listStandingApprovals', 'GET', '/api/v1/approvals/standing', { headers: api });
    await call('revokeStandingApproval', 'POST', `/api/v1/approvals/standing/${standing.json().id}/revoke`, { headers: user, payload: { reason: 'Quarter closed' } });
    await call('hitlApprove', 'POST', '/api/v1/hitl/approve', { headers: api, payload: { decision_id: decisionId, reason: 'Second opinion on the ACME order', reviewer: 'trading-desk', metadata: { ticket: 'INC-2291' } } });
    await call('hitlEscalate', 'POST', '/api/v1/hitl/escalate', { headers: api, payload: { current_reviewer: 'trading-desk', escalation_target: 'risk-office', escalation_reason: 'Exceeds the desk mandate', decision_id: decisionId, trace_id: trace } });
    await call('hitlAuditTrail', 'GET', `/api/v1/hitl/audit-trail?trace_id=${trace}&limit=2`, { headers: user });
    await call('listDecisions', 'GET', '/api/v1/decisions?limit=2', { headers: api });
    await call('getDecision', 'GET', `/api/v1/decisions/${decisionId}`, { headers: api });
    const incident = await call('openIncident', 'POST', '/api/v1/incidents', { headers: reviewer, payload: { title: 'Order placed on a stale market feed', severity: 'high', description: 'The ACME buy used a feed 74 s old.', trace_ids: [trace], decision_ids: [decisionId], art73: 'serious' } });
    const iid = incident.json().id as string;
    await call('assignIncident', 'POST', `/api/v1/incidents/${iid}/assign`, { headers: user, payload: { assignee: 'ana.lima@acme.example' } });
    await call('commentIncident', 'POST', `/api/v1/incidents/${iid}/comments`, { headers: reviewer, payload: { text: 'Feed vendor confirms a 70 s outage at 09:20.' } });
    await call('setIncidentStatus', 'POST', `/api/v1/incidents/${iid}/status`, { headers: reviewer, payload: { status: 'investigating', note: 'Replaying the trace' } });
    await call('listIncidents', 'GET', '/api/v1/incidents?limit=2', { headers: api });
    await call('getIncident', 'GET', `/api/v1/incidents/${iid}`, { headers: api });
    const incidentReport = await call('createIncidentReport', 'POST', `/api/v1/incidents/${iid}/report`, { headers: user });
    await call('getIncidentReport', 'GET', `/api/v1/incidents/${iid}/reports/${incidentReport.json().report.report_id}`, { headers: user });

    await call('signInMethods', 'GET', '/api/v1/auth/methods');
    await call('getHealth', 'GET', '/api/v1/health');
    await call('getLiveness', 'GET', '/api/v1/health/live');
    await call('getReadiness', 'GET', '/api/v1/health/ready');
    await call('getMetrics', 'GET', '/api/v1/metrics');
    const metrics = examples.getMetrics as { response: string };
    metrics.response = metrics.response.split('\n').filter((l) => l.includes('audit_ledger_events_appended_total')).join('\n');
    await call('getUsage', 'GET', '/api/v1/usage', { headers: user });

    const endpoint = await call('createWebhookEndpoint', 'POST', '/api/v1/webhooks/endpoints', {
      headers: user,
      payload: { url: 'https://hooks.acme.example/audit-ledger', event_types: ['integrity.violation_detected', 'hitl.rejected'], description: 'SOC on-call' },
    });
    const eid = endpoint.json().id as string;
    await call('listWebhookEndpoints', 'GET', '/api/v1/webhooks/endpoints', { headers: user });
    await call('getWebhookEndpoint', 'GET', `/api/v1/webhooks/endpoints/${eid}`, { headers: user });
    await call('updateWebhookEndpoint', 'PATCH', `/api/v1/webhooks/endpoints/${eid}`, { headers: user, payload: { event_types: ['integrity.violation_detected', 'hitl.rejected', 'forensics.anomaly_detected'] } });
    await call('listWebhookDeliveries', 'GET', `/api/v1/webhooks/endpoints/${eid}/deliveries`, { headers: user });
    await call('listWebhookEvents', 'GET', '/api/v1/webhooks/events?limit=2', { headers: user });
    await call('deleteWebhookEndpoint', 'DELETE', `/api/v1/webhooks/endpoints/${eid}`, { headers: user });

    const stream = await call('createStream', 'POST', '/api/v1/streams', {
      headers: user,
      payload: { name: 'SOC syslog', destination: { type: 'syslog', host: 'siem.acme.example', port: 6514 }, format: 'cef', filter: { event_types: ['tool.called', 'hitl.rejected', 'approval.decided'] }, start: 'now' },
    });
    const sid = stream.json().id as string;
    await call('listStreams', 'GET', '/api/v1/streams', { headers: user });
    await call('getStream', 'GET', `/api/v1/streams/${sid}`, { headers: user });
    await call('updateStream', 'PATCH', `/api/v1/streams/${sid}`, { headers: user, payload: { filter: { event_types: ['tool.called', 'tool.failed', 'hitl.rejected'] }, retry_window_seconds: 172800 } });
    await call('pauseStream', 'POST', `/api/v1/streams/${sid}/pause`, { headers: user });
    await call('resumeStream', 'POST', `/api/v1/streams/${sid}/resume`, { headers: user });
    await call('listStreamBatches', 'GET', `/api/v1/streams/${sid}/batches`, { headers: user });
    await call('deleteStream', 'DELETE', `/api/v1/streams/${sid}`, { headers: user });

    await call('setRetention', 'PUT', '/api/v1/compliance/retention', { headers: user, payload: { content_days: 365, by_event_type: { 'llm.call': 90 } } });
    await call('getRetention', 'GET', '/api/v1/compliance/retention', { headers: user });
    await call('previewRetention', 'GET', '/api/v1/compliance/retention/preview', { headers: user });
    await call('runRetention', 'POST', '/api/v1/compliance/retention/run', { headers: user, payload: {} });
    const hold = await call('placeHold', 'POST', '/api/v1/compliance/holds', { headers: user, payload: { scope: { agent_id: 'trading-agent-2' }, reason: 'Regulator inquiry into the 1 March ACME order', case_reference: 'FCA-2026-0412' } });
    await call('listHolds', 'GET', '/api/v1/compliance/holds', { headers: user });
    await call('releaseHold', 'POST', `/api/v1/compliance/holds/${hold.json().id}/release`, { headers: user, payload: { reason: 'Inquiry closed without findings' } });
    await t.inject({ method: 'POST', url: '/api/v1/logs', headers: api, payload: { event_type: 'tool.called', data: { tool: 'send_email', subject_id: 'customer-8812', to: 'c.8812@mail.example' } } });
    await call('requestErasure', 'POST', '/api/v1/compliance/erasures', { headers: user, payload: { subject: 'customer-8812', legal_basis: 'GDPR Art. 17(1)(a): request DSR-2026-118' } });
    await call('listErasures', 'GET', '/api/v1/compliance/erasures', { headers: user });
    const report = await call('createReport', 'POST', '/api/v1/compliance/reports', { headers: user, payload: { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' } });
    await call('listReports', 'GET', '/api/v1/compliance/reports', { headers: user });
    await call('getReport', 'GET', `/api/v1/compliance/reports/${report.json().id}`, { headers: user });

    const agent = await agentSigner('equities-trader', generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
    await call('registerAgentKey', 'POST', '/api/v1/agent-keys', { headers: user, payload: await agentKeyRegistration(agent, acct.companyId) });
    const signedEvent = await signAgentEvent({ event_type: 'action.executed', trace_id: trace, data: { action: 'cancel_order', order_id: 'ord-55120' } }, agent);
    await t.inject({ method: 'POST', url: '/api/v1/logs', headers: api, payload: signedEvent });
    await call('listAgentKeys', 'GET', '/api/v1/agent-keys', { headers: api });
    await call('revokeAgentKey', 'POST', `/api/v1/agent-keys/${agent.keyId}/revoke`, { headers: user, payload: { reason: 'The trading host was reimaged; a new key is registered' } });
    await call('rotateSigningKey', 'POST', '/api/v1/integrity/keys/rotate', { headers: { authorization: 'Bearer operator-token-from-the-secret-store' } });
    const key2 = key.json().id as string;
    await call('revokeApiKey', 'DELETE', `/api/v1/auth/api_keys/${key2}`, { headers: user });
    await call('logout', 'POST', '/api/v1/auth/logout', { headers: user });
    const session = await call('createSession', 'POST', '/api/v1/auth/session', { payload: { email: acct.email, password: acct.password } });
    const cookie = `al_session=${/al_session=([^;]+)/.exec(String(session.headers['set-cookie']))?.[1]}`;
    await call('getSession', 'GET', '/api/v1/auth/session', { headers: { cookie } });
    await call('deleteSession', 'DELETE', '/api/v1/auth/session', { headers: { cookie, 'x-csrf-token': session.json().csrf_token } });
  } finally {
    await t.close();
  }
  const sorted = Object.fromEntries(Object.entries(examples).sort(([a], [b]) => a.localeCompare(b)));
  const out = path.join(import.meta.dirname, '..', 'src', 'http', 'openapi-examples.json');
  fs.writeFileSync(out, `${JSON.stringify(sorted, null, 2)}\n`);
  console.log(`wrote ${Object.keys(sorted).length} operations' examples to ${path.relative(process.cwd(), out)}`);
}

await main();
