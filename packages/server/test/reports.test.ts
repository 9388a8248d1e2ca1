// Period reports (issue 17) on both stores: generated for a time range with every section a
// regulator asks for, kept and listed; the signed JSON verifies offline with the verify CLI and a
// changed byte fails; the PDF is produced and rendered to an image (test-results/compliance/) that
// a person can look at; bad requests are clear 4xx problems and store nothing.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, problem, startTestApp, type TestApp } from './helpers/app.js';
import { STORE_KINDS } from './helpers/env.js';
import { ingestBatch } from './helpers/ledger.js';
import { runCli } from './helpers/process.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'audit-ledger-reports-'));
const OUT = path.join(import.meta.dirname, '..', '..', '..', 'test-results', 'compliance');
const DAY = 86_400_000;

describe.each(STORE_KINDS)('period reports on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind, { env: { CHECKPOINT_INTERVAL_MS: '0', INTEGRITY_VERIFY_INTERVAL_SECONDS: '0', RETENTION_INTERVAL_SECONDS: '0' } });
  });
  afterAll(() => t.close());

  it('a report of three days: every section, a signed JSON that verifies offline, and a PDF rendered to an image', async () => {
    const start = t.clock.ms;
    const acct: Account = await t.newAccount();
    const { key } = await t.createKey(acct.token, 1_000_000);
    const admin = { authorization: `Bearer ${acct.token}` };
    const call = (method: string, url: string, payload?: object, headers: Record<string, string> = admin) => t.inject({ method: method as 'GET', url: `/api/v1${url}`, headers, ...(payload ? { payload } : {}) });
    const trace = randomUUID();
    // Day 1: a trading agent's run and a human rejection; day 2: nothing; day 3: more.
    const day1 = (await ingestBatch(t, key, Array.from({ length: 12 }, (_, i) => ({ event_type: i % 3 === 0 ? 'decision.made' : 'tool.called', agent_id: i % 2 ? 'trader-1' : 'trader-2', trace_id: trace, data: { i, subject_id: i === 4 ? 'customer-1' : undefined } })))).json().log_ids as string[];
    expect((await call('POST', '/hitl/reject', { reviewer: 'maria@bank.example', rejection_reason: 'stale market data', decision_id: day1[0] })).statusCode).toBe(201);
    expect((await call('POST', '/compliance/erasures', { log_ids: [day1[4]], legal_basis: 'GDPR Art. 17' })).statusCode).toBe(201);
    expect((await call('POST', '/compliance/holds', { scope: { trace_id: trace }, reason: 'regulator inquiry', case_reference: 'FCA-7' })).statusCode).toBe(201);
    t.clock.advance(2 * DAY);
    await ingestBatch(t, key, Array.from({ length: 5 }, (_, i) => ({ event_type: 'tool.called', agent_id: 'trader-1', data: { later: i } })));
    const login = await t.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: acct.email, password: acct.password } });
    admin.authorization = `Bearer ${login.json().access_token}`;

    const from = new Date(start - (start % DAY)).toISOString();
    const to = new Date(start - (start % DAY) + 3 * DAY).toISOString();
    const created = await call('POST', '/compliance/reports', { from, to });
    expect(created.statusCode, created.body).toBe(201);
    const { id } = created.json();
    expect(created.json()).toMatchObject({ status: 'completed', from, to, created_by: { kind: 'user', email: acct.email }, digest: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect((await call('GET', '/compliance/reports')).json().items.map((r: { id: string }) => r.id)).toEqual([id]);

    const json = await call('GET', `/compliance/reports/${id}`);
    expect(json.statusCode).toBe(200);
    const doc = json.json();
    const r = doc.report;
    expect(r).toMatchObject({ company_id: acct.companyId, period: { from, to }, summary: { agents: 2 } });
    expect(r.entries_by_type).toEqual(expect.arrayContaining([{ event_type: 'decision.made', count: 4 }, { event_type: 'hitl.rejected', count: 1 }]));
    expect(r.entries_by_agent).toEqual(expect.arrayContaining([{ agent_id: 'trader-1', count: 11 }, { agent_id: 'trader-2', count: 6 }]));
    expect(r.events_per_day.map((d: { count: number }) => d.count > 0)).toEqual([true, false, true]);
    expect(r.ingestion_gaps.days_without_events).toHaveLength(1);
    expect(r.integrity).toMatchObject({ status: 'valid', problems: [], entries_erased: 1, entries_checked: r.summary.entries, signatures_checked: r.summary.entries });
    expect(r.checkpoints.signed_in_period).toBeGreaterThan(0);
    expect(r.keys).toHaveLength(1);
    expect(r.legal_holds).toMatchObject([{ case_reference: 'FCA-7', status: 'active' }]);
    expect(r.erasures).toMatchObject([{ kind: 'request', erased_count: 1, legal_basis: 'GDPR Art. 17' }]);
    expect(r.hitl_rejections).toMatchObject({ count: 1, items: [{ data: { rejection_reason: 'stale market data' } }] });
    expect(r.retention).toMatchObject({ content_days: null });

    // Offline: the signed JSON verifies against the pinned key; one changed byte fails.
    const keys = path.join(tmp, `${kind}-keys.json`);
    fs.writeFileSync(keys, (await t.inject({ method: 'GET', url: '/api/v1/integrity/keys' })).body);
    const file = path.join(tmp, `${kind}-report.json`);
    fs.writeFileSync(file, json.body);
    const ok = await runCli(['verify-bundle', file, '--public-key', keys], {});
    expect(ok.stdout).toContain(`OK   compliance report of company ${acct.companyId} for ${from} to ${to}`);
    expect(ok.code).toBe(0);
    fs.writeFileSync(file, json.body.replace('"stale market data"', '"fresh market data"'));
    const bad = await runCli(['verify-bundle', file, '--public-key', keys], {});
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain('the report was changed');

    // The PDF, and page 1 as an image for a person to look at.
    const pdf = await call('GET', `/compliance/reports/${id}?format=pdf`);
    expect(pdf.statusCode).toBe(200);
    expect(pdf.headers['content-type']).toBe('application/pdf');
    expect(pdf.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
    fs.mkdirSync(OUT, { recursive: true });
    const pdfFile = path.join(OUT, `report-${kind}.pdf`);
    fs.writeFileSync(pdfFile, pdf.rawPayload);
    const text = execFileSync('pdftotext', [pdfFile, '-'], { encoding: 'utf8' });
    for (const s of ['Compliance report', 'Events per day', 'Verification coverage', 'FCA-7', 'stale market data', 'audit-ledger-verify report.json']) expect(text).toContain(s);
    execFileSync('pdftoppm', ['-png', '-r', '60', '-f', '1', '-l', '1', pdfFile, path.join(OUT, `report-${kind}`)]);
    const png = fs.readdirSync(OUT).find((f) => f.startsWith(`report-${kind}-`) && f.endsWith('.png')) as string;
    expect(png, 'page 1 rendered').toBeDefined();
    expect(fs.statSync(path.join(OUT, png)).size).toBeGreaterThan(5000);
    console.log(`report page 1: ${path.join(OUT, png)}`);

    // Recorded in the administrators' trail.
    const trail = (await call('GET', `/logs?source=${encodeURIComponent('audit-ledger/admin')}&event_type=compliance.report_generated`)).json().items;
    expect(trail).toMatchObject([{ data: { report_id: id, digest: created.json().digest } }]);
  });

  it('a period running into the future lists no day after today as a gap, and names each anomaly by its root cause type', async () => {
    const acct: Account = await t.newAccount();
    const { key } = await t.createKey(acct.token, 1_000_000);
    const admin = { authorization: `Bearer ${acct.token}` };
    const call = (method: string, url: string, payload?: object, headers: Record<string, string> = admin) => t.inject({ method: method as 'GET', url: `/api/v1${url}`, headers, ...(payload ? { payload } : {}) });
    const fixture = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, 'fixtures', 'traces', 'stale-market-feed.json'), 'utf8')) as { events: object[] };
    const trace = randomUUID();
    expect((await ingestBatch(t, key, fixture.events.map((e) => ({ ...e, trace_id: trace })))).statusCode).toBe(200);
    const session = (await call('POST', '/forensics/replays', { trace_id: trace, metadata: {} }, { 'x-api-key': key })).json();
    expect((await call('GET', `/forensics/replays/${session.id}/root-cause`, undefined, { 'x-api-key': key })).json().root_cause_type).toBe('STALE_CONTEXT');

    const today = t.clock.ms - (t.clock.ms % DAY);
    const from = new Date(today - DAY).toISOString();
    const to = new Date(today + 5 * DAY).toISOString();
    const created = await call('POST', '/compliance/reports', { from, to });
    expect(created.statusCode, created.body).toBe(201);
    const r = (await call('GET', `/compliance/reports/${created.json().id}`)).json().report;
    expect(r.events_per_day.map((d: { day: string }) => d.day)).toEqual([new Date(today - DAY).toISOString().slice(0, 10), new Date(today).toISOString().slice(0, 10)]);
    expect(r.ingestion_gaps.days_without_events).toEqual([new Date(today - DAY).toISOString().slice(0, 10)]);
    expect(r.anomalies.traces_with_anomalies).toMatchObject([{ trace_id: trace, root_cause_type: 'STALE_CONTEXT' }]);
    const pdf = await call('GET', `/compliance/reports/${created.json().id}?format=pdf`);
    const file = path.join(tmp, `${kind}-future.pdf`);
    fs.writeFileSync(file, pdf.rawPayload);
    expect(execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' }).replace(/\s+/g, ' ')).toContain(`root cause STALE_CONTEXT`);
  });

  it('refuses bad periods and the wrong people, and shows no company another company\'s reports', async () => {
    const acct = await t.newAccount();
    const admin = { authorization: `Bearer ${acct.token}` };
    const call = (method: string, url: string, payload?: object, headers: Record<string, string> = admin) => t.inject({ method: method as 'GET', url: `/api/v1${url}`, headers, ...(payload ? { payload } : {}) });
    for (const body of [{ from: '2026-03-02T00:00:00Z', to: '2026-03-01T00:00:00Z' }, { from: '2026-03-01T00:00:00Z', to: '2026-03-01T00:00:00Z' }, { from: '2025-01-01T00:00:00Z', to: '2026-03-01T00:00:00Z' }, { from: 'yesterday', to: '2026-03-01T00:00:00Z' }, { from: '2026-03-01T00:00:00Z' }]) {
      problem(await call('POST', '/compliance/reports', body), 400, 'validation_failed');
    }
    const reviewer = await t.newAccount({ role: 'reviewer', company: acct.companyName });
    problem(await call('POST', '/compliance/reports', { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' }, { authorization: `Bearer ${reviewer.token}` }), 403, 'forbidden');
    const auditor = await t.newAccount({ role: 'auditor', company: acct.companyName });
    const made = await call('POST', '/compliance/reports', { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' }, { authorization: `Bearer ${auditor.token}` });
    expect(made.statusCode).toBe(201);
    expect((await call('GET', '/compliance/reports')).json().items).toHaveLength(1);
    const other = await t.newAccount();
    problem(await call('GET', `/compliance/reports/${made.json().id}`, undefined, { authorization: `Bearer ${other.token}` }), 404, 'not_found');
    expect((await call('GET', '/compliance/reports', undefined, { authorization: `Bearer ${other.token}` })).json().items).toEqual([]);
    problem(await call('GET', `/compliance/reports/${made.json().id}?format=docx`), 400, 'validation_failed');
  });
});
