// The shared security runner and the tenant isolation matrix. The route list comes from the
// OpenAPI document, so a new route is covered without writing its security tests. For every
// route that declares credentials: no credential → 401; a wrong credential of each kind → 401;
// a user without the declared role → 403; and company A's credentials with company B's ids
// (in the path and in every query parameter that takes one) → never B's data: 404 for B's
// objects, and no B identifier anywhere in any answer. Both stores.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { agentKeyRegistration, agentSigner } from '@audit-ledger/sdk';
import { createUser } from '../src/users/accounts.js';
import { STORE_KINDS } from './helpers/env.js';
import { startTestApp, type TestApp } from './helpers/app.js';

interface Operation {
  security?: Array<Record<string, unknown>>;
  'x-required-roles'?: string[];
  parameters?: Array<{ name: string; in: string }>;
}

interface Tenant {
  companyId: string;
  admin: Record<string, string>;
  member: Record<string, string>;
  auditor: Record<string, string>;
  apiKey: Record<string, string>;
  ids: Record<string, string>;
  marker: string;
}

describe.each(STORE_KINDS)('security runner and tenant isolation on %s', (kind) => {
  let t: TestApp;
  let receiver: http.Server;
  let a: Tenant;
  let b: Tenant;
  let operations: Array<{ method: string; path: string; op: Operation }>;

  async function tenant(): Promise<Tenant> {
    const acct = await t.newAccount();
    const admin = { authorization: `Bearer ${acct.token}` };
    const memberEmail = `member-${randomUUID()}@example.com`;
    const { user: reviewer } = await createUser(t.store, { company: acct.companyName, email: memberEmail, password: 'member password 1', role: 'reviewer' }, Date.now, null);
    const memberToken = (await t.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: memberEmail, password: 'member password 1' } })).json().access_token;
    const auditorEmail = `auditor-${randomUUID()}@example.com`;
    await createUser(t.store, { company: acct.companyName, email: auditorEmail, password: 'auditor password 1', role: 'auditor' }, Date.now, null);
    const auditorToken = (await t.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: auditorEmail, password: 'auditor password 1' } })).json().access_token;
    const created = await t.createKey(acct.token, 100_000);
    const apiKey = { 'x-api-key': created.key };
    const marker = `marker-${randomUUID()}`;
    const trace = randomUUID();
    const session = randomUUID();
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const endpoint = (await t.inject({ method: 'POST', url: '/api/v1/webhooks/endpoints', headers: admin, payload: { url, event_types: ['hitl.rejected'], description: marker } })).json();
    const stream = (await t.inject({ method: 'POST', url: '/api/v1/streams', headers: admin, payload: { name: marker, destination: { type: 'directory', folder: `sec-${marker.slice(7, 15)}` }, format: 'ledger' } })).json();
    const logs = (
      await t.inject({
        method: 'POST',
        url: '/api/v1/logs/batch',
        headers: apiKey,
        payload: { logs: Array.from({ length: 6 }, (_, i) => ({ event_type: i === 3 ? 'decision.made' : 'tool.called', data: { marker, i }, trace_id: trace, session_id: session, source: marker })) },
      })
    ).json().log_ids as string[];
    const replay = (await t.inject({ method: 'POST', url: '/api/v1/forensics/replays', headers: apiKey, payload: { trace_id: trace, metadata: { marker } } })).json();
    const override = (await t.inject({ method: 'POST', url: '/api/v1/hitl/reject', headers: apiKey, payload: { reviewer: marker, rejection_reason: marker, decision_id: logs[3], trace_id: trace } })).json();
    const job = (await t.inject({ method: 'POST', url: '/api/v1/integrity/verify', headers: apiKey, payload: {} })).json();
    const hold = (await t.inject({ method: 'POST', url: '/api/v1/compliance/holds', headers: admin, payload: { scope: { trace_id: trace }, reason: marker, case_reference: marker } })).json();
    const report = (await t.inject({ method: 'POST', url: '/api/v1/compliance/reports', headers: admin, payload: { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' } })).json();
    // Governance (docs/governance.md): an approval, a standing approval, a team, a policy, an incident and its report.
    const approval = (await t.inject({ method: 'POST', url: '/api/v1/approvals', headers: apiKey, payload: { action: marker, arguments: { marker }, trace_id: trace, decision_id: logs[3], reason: marker } })).json();
    const standing = (await t.inject({ method: 'POST', url: '/api/v1/approvals/standing', headers: admin, payload: { action: marker, valid_until: '2099-01-01T00:00:00Z', reason: marker } })).json();
    const team = `team-${randomUUID().slice(0, 8)}`;
    await t.inject({ method: 'PUT', url: `/api/v1/approval-teams/${team}`, headers: admin, payload: { members: [memberEmail] } });
    const policy = `policy-${randomUUID().slice(0, 8)}`;
    await t.inject({ method: 'PUT', url: `/api/v1/policies/${policy}`, headers: admin, payload: { content: marker } });
    const incident = (await t.inject({ method: 'POST', url: '/api/v1/incidents', headers: admin, payload: { title: marker, severity: 'low', trace_ids: [trace] } })).json();
    const incidentReport = (await t.inject({ method: 'POST', url: `/api/v1/incidents/${incident.id}/report`, headers: admin })).json();
    const agentSigning = await agentSigner(marker, generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
    const agentKey = (await t.inject({ method: 'POST', url: '/api/v1/agent-keys', headers: admin, payload: await agentKeyRegistration(agentSigning, acct.companyId) })).json();
    for (const v of [endpoint.id, replay.id, override.id, job.job_id, hold.id, report.id, approval.id, standing.id, incident.id, incidentReport.report?.report_id]) expect(v, 'fixture').toEqual(expect.any(String));
    return {
      companyId: acct.companyId,
      admin,
      member: { authorization: `Bearer ${memberToken}` },
      auditor: { authorization: `Bearer ${auditorToken}` },
      apiKey,
      marker,
      ids: { trace, session, log: logs[0] as string, decision: logs[3] as string, endpoint: endpoint.id, stream: stream.id, replay: replay.id, override: override.id, job: job.job_id, key: created.id, user: reviewer.user_id, hold: hold.id, report: report.id, approval: approval.id, standing: standing.id, team, policy, incident: incident.id, incidentReport: incidentReport.report.report_id, agentKey: agentKey.key_id },
    };
  }

  beforeAll(async () => {
    receiver = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(200).end()));
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    t = await startTestApp(kind, { env: { WEBHOOK_ALLOW_PRIVATE: 'true', CHECKPOINT_INTERVAL_MS: '0' } });
    a = await tenant();
    b = await tenant();
    const doc = (await t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as { paths: Record<string, Record<string, Operation>> };
    operations = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase(), path, op })));
    // B's webhook has a delivery before anything is checked.
    await vi.waitFor(async () => expect((await t.inject({ method: 'GET', url: `/api/v1/webhooks/endpoints/${b.ids.endpoint}/deliveries`, headers: b.apiKey })).json().items.length).toBeGreaterThan(0), { timeout: 5000, interval: 20 });
  });
  afterAll(async () => {
    await t.close();
    await new Promise((r) => receiver.close(r));
  });

  /** The id of `owner` a path parameter names. */
  function pathId(path: string, param: string, owner: Tenant): string {
    if (param === 'log_id') return owner.ids.log as string;
    if (param === 'job_id') return owner.ids.job as string;
    if (param === 'replay_session_id') return owner.ids.replay as string;
    if (path.startsWith('/api/v1/auth/api_keys')) return owner.ids.key as string;
    if (param === 'user_id') return owner.ids.user as string;
    if (param === 'hold_id') return owner.ids.hold as string;
    if (param === 'report_id' && !path.startsWith('/api/v1/incidents/')) return owner.ids.report as string;
    if (path.startsWith('/api/v1/webhooks/endpoints')) return owner.ids.endpoint as string;
    if (path.startsWith('/api/v1/streams/')) return owner.ids.stream as string;
    if (path.startsWith('/api/v1/hitl/overrides/')) return owner.ids.override as string;
    if (path.startsWith('/api/v1/approvals/standing/')) return owner.ids.standing as string;
    if (path.startsWith('/api/v1/approvals/')) return owner.ids.approval as string;
    if (path.startsWith('/api/v1/approval-teams/')) return owner.ids.team as string;
    if (param === 'policy_id') return owner.ids.policy as string;
    if (param === 'version') return '1';
    if (param === 'tile_path') return '0/000.p/1'; // the caller's own log's first leaf: not an id of either company
    if (param === 'decision_id') return owner.ids.decision as string;
    if (path.startsWith('/api/v1/incidents/') && param === 'id') return owner.ids.incident as string;
    if (param === 'report_id' && path.startsWith('/api/v1/incidents/')) return owner.ids.incidentReport as string;
    if (param === 'key_id' && path.startsWith('/api/v1/agent-keys/')) return owner.ids.agentKey as string;
    throw new Error(`the security runner does not know what ${param} of ${path} names: teach pathId`);
  }

  /** A URL for the operation, with owner's ids in the path and in every query parameter that takes one. */
  function urlFor(o: (typeof operations)[number], owner: Tenant): string {
    const path = o.path.replace(/\{(\w+)\}/g, (_, p: string) => pathId(o.path, p, owner));
    const query = new URLSearchParams();
    const values: Record<string, string> = { trace_id: owner.ids.trace as string, session_id: owner.ids.session as string, decision_id: owner.ids.decision as string, from_seq: '0', to_seq: '5', first: '1', second: '2', tree_size: '3' };
    for (const p of o.op.parameters ?? []) if (p.in === 'query' && values[p.name] !== undefined) query.set(p.name, values[p.name] as string);
    return query.size ? `${path}?${query}` : path;
  }

  /** A body that reaches the handler (so the check is of the handler, not the validator). */
  function bodyFor(o: (typeof operations)[number], owner: Tenant): Record<string, unknown> | undefined {
    if (o.method === 'GET' || o.method === 'DELETE') return undefined;
    if (o.path === '/api/v1/forensics/replays') return { trace_id: owner.ids.trace, metadata: {} };
    if (o.path.startsWith('/api/v1/webhooks/endpoints/')) return { description: 'changed' };
    if (o.path === '/api/v1/streams') return { name: 'security runner', destination: { type: 'directory', folder: 'security-runner' }, format: 'ledger' };
    if (o.path === '/api/v1/streams/{id}' && o.method === 'PATCH') return { name: 'changed' };
    if (o.path.startsWith('/api/v1/users/') && o.method === 'PATCH') return { disabled: false };
    if (o.path === '/api/v1/compliance/retention') return { content_days: null };
    if (o.path === '/api/v1/tlog/settings') return { public: false };
    if (o.path === '/api/v1/agent-keys') return { agent_id: 'security-runner', public_key: Buffer.alloc(32, 7).toString('base64') };
    if (o.path === '/api/v1/compliance/holds') return { scope: { trace_id: owner.ids.trace }, reason: 'security runner' };
    if (o.path.endsWith('/release')) return { reason: 'security runner' };
    if (o.path === '/api/v1/compliance/reports') return { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' };
    if (o.path === '/api/v1/compliance/erasures') return { log_ids: [owner.ids.log], legal_basis: 'security runner' };
    if (o.path.endsWith('/reject') || o.path.endsWith('/revoke')) return { reason: 'security runner' };
    if (o.path.endsWith('/escalate') && o.path.startsWith('/api/v1/approvals/')) return { to: 'security-runner', reason: 'security runner' };
    if (o.path.endsWith('/check')) return { arguments: {} };
    if (o.path.endsWith('/assign')) return { assignee: 'security-runner@example.com' };
    if (o.path.endsWith('/comments')) return { text: 'security runner' };
    if (o.path.endsWith('/status') && o.path.startsWith('/api/v1/incidents/')) return { status: 'investigating' };
    if (o.path.endsWith('/report')) return undefined;
    return {};
  }

  // Routes that take a company's credential (a user token or an API key). Service-wide tokens
  // (METRICS_TOKEN, LEDGER_OPERATOR_TOKEN) have their own tests (operations, key-rotation).
  const COMPANY_SCHEMES = new Set(['bearerAuth', 'apiKeyAuth', 'apiKeyBearer']);
  const secured = () => operations.filter((o) => (o.op.security ?? []).some((s) => Object.keys(s).some((k) => COMPANY_SCHEMES.has(k))));

  it('the document lists every credentialed route, and the runner knows every id they take', () => {
    expect(secured().length).toBeGreaterThanOrEqual(30);
    for (const o of secured()) urlFor(o, b);
  });

  it('no credential → 401; a wrong credential of either kind → 401', async () => {
    for (const o of secured()) {
      const url = urlFor(o, a);
      const none = await t.inject({ method: o.method as 'GET', url, payload: bodyFor(o, a) });
      expect(none.statusCode, `${o.method} ${o.path} without a credential`).toBe(401);
      for (const wrong of [{ authorization: 'Bearer alt_not-a-real-token-0000000000' }, { 'x-api-key': 'alk_not-a-real-key-00000000000000' }]) {
        const res = await t.inject({ method: o.method as 'GET', url, headers: wrong, payload: bodyFor(o, a) });
        expect(res.statusCode, `${o.method} ${o.path} with ${Object.keys(wrong)[0]}`).toBe(401);
      }
    }
  });

  it('a credential of a kind the route does not accept, or a user without its role → 401/403', async () => {
    for (const o of secured()) {
      const kinds = new Set((o.op.security ?? []).flatMap((s) => Object.keys(s)));
      const url = urlFor(o, a);
      if (!kinds.has('apiKeyAuth')) expect([401, 403], `${o.method} ${o.path} with an API key`).toContain((await t.inject({ method: o.method as 'GET', url, headers: a.apiKey, payload: bodyFor(o, a) })).statusCode);
      if (!kinds.has('bearerAuth')) expect([401, 403], `${o.method} ${o.path} with a bearer token`).toContain((await t.inject({ method: o.method as 'GET', url, headers: a.admin, payload: bodyFor(o, a) })).statusCode);
    }
  });

  it('the role × route matrix, from the document: each role reaches exactly the routes its x-required-roles allow', async () => {
    const roles = { admin: a.admin, reviewer: a.member, auditor: a.auditor } as const;
    let checked = 0;
    for (const o of secured()) {
      const kinds = new Set((o.op.security ?? []).flatMap((s) => Object.keys(s)));
      // Signing out would end the tokens the matrix uses; the console session is cookie-only (test/sessions.test.ts).
      if (!kinds.has('bearerAuth') || o.path === '/api/v1/auth/logout' || o.path === '/api/v1/auth/session') continue;
      for (const [role, headers] of Object.entries(roles)) {
        const allowed = o.op['x-required-roles'] === undefined || o.op['x-required-roles'].includes(role);
        const where = `${o.method} ${o.path} as ${role}`;
        if (o.method === 'GET') {
          const res = await t.inject({ method: 'GET', url: urlFor(o, a), headers });
          // Allowed: past the credential check (a 400 for the runner's query, or a 404 for a size never signed, is an answer, not a refusal).
          if (allowed) expect([200, 400, 404], `${where}: ${res.body.slice(0, 200)}`).toContain(res.statusCode);
          else expect(res.json(), where).toMatchObject({ status: 403, code: 'forbidden' });
        } else {
          // A mutation is sent with ids that name nothing and a body the route refuses: an allowed
          // role gets past the credential check to a 400 or 404 and changes nothing; a refused one gets 403.
          const url = o.path.replace(/\{\w+\}/g, '00000000-0000-4000-8000-000000000000');
          const res = await t.inject({ method: o.method as 'POST', url, headers, payload: { not_a_field_of_any_route: true } });
          if (allowed) expect([400, 404, 409], `${where}: ${res.body.slice(0, 200)}`).toContain(res.statusCode);
          else expect(res.json(), where).toMatchObject({ status: 403, code: 'forbidden' });
        }
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(60);
  });

  it("company A's credentials with company B's ids: 404 for B's objects, and never a B identifier in any answer", async () => {
    const secrets = [b.companyId, b.marker, ...Object.values(b.ids)];
    for (const o of secured()) {
      // Mutations with no id of B in them only act on A's own data; they are covered above.
      if (o.method !== 'GET' && !o.path.includes('{') && o.path !== '/api/v1/forensics/replays') continue;
      if (o.path === '/api/v1/auth/logout') continue;
      // A name-keyed PUT (a team, a policy) creates or replaces under A's own company: B's name is A's namespace too.
      if (o.method === 'PUT' && o.path.includes('{')) continue;
      const url = urlFor(o, b);
      for (const headers of [a.apiKey, a.admin]) {
        const kinds = new Set((o.op.security ?? []).flatMap((s) => Object.keys(s)));
        if (headers === a.apiKey && !kinds.has('apiKeyAuth')) continue;
        if (headers === a.admin && !kinds.has('bearerAuth')) continue;
        const res = await t.inject({ method: o.method as 'GET', url, headers, payload: bodyFor(o, b) });
        const where = `${o.method} ${url} with A's ${headers === a.apiKey ? 'API key' : 'token'}`;
        expect(res.statusCode, where).toBeLessThan(500);
        // (A tile path names a place in the caller's own log, not an object of either company: A's tile.)
        if ((o.path.includes('{') && !o.path.includes('{tile_path}')) || o.method === 'POST') expect([403, 404], `${where}: ${res.body.slice(0, 200)}`).toContain(res.statusCode);
        // An id the request itself carried may be echoed (a problem's instance); nothing else of B's may appear.
        const carried = url + JSON.stringify(bodyFor(o, b) ?? {});
        for (const s of secrets.filter((x) => !carried.includes(x))) expect(res.body.includes(s), `${where} answered B's ${s}`).toBe(false);
      }
    }
    // B's objects are untouched: its key works, its endpoint is still there, unchanged.
    expect((await t.inject({ method: 'GET', url: '/api/v1/auth/me', headers: b.apiKey })).statusCode).toBe(200);
    const endpoint = await t.inject({ method: 'GET', url: `/api/v1/webhooks/endpoints/${b.ids.endpoint}`, headers: b.admin });
    expect(endpoint.json()).toMatchObject({ id: b.ids.endpoint, description: b.marker, enabled: true });
  });
});
