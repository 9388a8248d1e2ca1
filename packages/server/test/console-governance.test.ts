// The console's governance pages in Chromium (playwright-core) against the real service: a
// reviewer's approval queue shows the arguments exactly as they will be checked, approving takes
// an explicit confirmation (the first click changes nothing), an incident is opened, worked and
// reported, and two policy versions are compared line by line. axe-core finds no serious or
// critical violation; screenshots go to test-results/console/.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOTSTRAP, killLeftovers, type Service, startService } from './fault/harness.js';
import { axe, launchChromium, requireBrowserAndConsole, SHOTS, signIn } from './helpers/console-browser.js';
import { call } from './helpers/http.js';
import { createTestDatabase, type TestDatabase } from './helpers/stores.js';

describe('the console governance pages in Chromium', () => {
  let db: TestDatabase;
  let svc: Service;
  let browser: Browser;
  let key: string;
  let admin: Record<string, string>;
  const reviewerEmail = 'rita.reviewer@example.com';
  const reviewerPassword = 'rita reviews every refund';
  const api = (method: string, p: string, headers: Record<string, string>, body?: unknown) => call(`${svc.url}/api/v1${p}`, method, body, headers);

  beforeAll(async () => {
    requireBrowserAndConsole();
    db = await createTestDatabase('sqlite');
    svc = await startService({ LEDGER_DATA_DIR: db.dataDir, ...BOOTSTRAP, PORT: '0', CHECKPOINT_INTERVAL_MS: '100' });
    admin = { authorization: `Bearer ${(await api('POST', '/auth/login', {}, { email: BOOTSTRAP.LEDGER_BOOTSTRAP_EMAIL, password: BOOTSTRAP.LEDGER_BOOTSTRAP_PASSWORD })).json().access_token}` };
    key = (await api('POST', '/auth/api_keys', admin, { name: 'agents', rate_limit_per_minute: 100_000 })).json().key;
    const invited = (await api('POST', '/users', admin, { email: reviewerEmail, role: 'reviewer' })).json();
    const first = (await api('POST', '/auth/login', {}, { email: reviewerEmail, password: invited.one_time_password })).json().access_token;
    await api('POST', '/auth/password', { authorization: `Bearer ${first}` }, { current_password: invited.one_time_password, new_password: reviewerPassword });
    await api('PUT', '/approval-teams/payments', admin, { members: [reviewerEmail], sla_minutes: 30, match_actions: ['refund.*'] });
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    killLeftovers();
    await db?.drop();
  });

  const page = async (): Promise<Page> => browser.newPage({ viewport: { width: 1366, height: 900 } });

  it('the approval queue shows the exact arguments; approving needs an explicit confirmation', async () => {
    const args = { order: 'A-1001', amount: 250.5, currency: 'EUR' };
    const asked = await api('POST', '/approvals', { 'x-api-key': key }, { action: 'refund.issue', tool: 'payments', arguments: args, risk: 'high', reason: 'customer complaint' });
    expect(asked.status, asked.body).toBe(201);
    const id = asked.json().id;
    const p = await page();
    await signIn(p, svc.url, reviewerEmail, reviewerPassword);
    await p.getByRole('link', { name: 'Approvals', exact: true }).click();
    const card = p.getByTestId('approval-request');
    await expect.poll(() => card.count()).toBe(1);
    expect(JSON.parse(await p.getByTestId('approval-arguments').innerText())).toEqual(args);
    expect(await card.innerText()).toContain(asked.json().arguments_hash);
    expect(await card.innerText()).toMatch(/SLA: 30 min left/);
    expect(await axe(p)).toEqual([]);
    await p.screenshot({ path: path.join(SHOTS, 'governance-approval-queue.png'), fullPage: true });

    // The first click only opens the confirmation: nothing is decided yet.
    await card.getByRole('button', { name: 'Approve' }).click();
    const dialog = p.getByRole('dialog', { name: 'Approve refund.issue' });
    await expect.poll(() => dialog.isVisible()).toBe(true);
    expect(await dialog.innerText()).toContain('exactly the arguments above');
    expect((await api('GET', `/approvals/${id}`, { 'x-api-key': key })).json().status).toBe('pending');
    await p.keyboard.press('Tab');
    await p.screenshot({ path: path.join(SHOTS, 'governance-approve-confirm.png'), fullPage: true });
    await dialog.getByLabel('Reason (optional)').fill('matches the ticket');
    await dialog.getByRole('button', { name: 'Confirm: approve' }).click();
    await expect.poll(async () => (await api('GET', `/approvals/${id}`, { 'x-api-key': key })).json().status).toBe('approved');
    const decided = (await api('GET', `/approvals/${id}`, { 'x-api-key': key })).json();
    expect(decided).toMatchObject({ decided_by: { email: reviewerEmail }, decision_reason: 'matches the ticket' });
    await expect.poll(() => p.getByTestId('approval-request').count()).toBe(0);
    expect(await p.getByRole('table', { name: 'Decided approvals' }).innerText()).toContain('matches the ticket');

    // An execution with other arguments: its entry page shows the failed check beside the entry.
    const run = (await api('POST', '/logs', { 'x-api-key': key }, { event_type: 'action.executed', data: { action: 'refund.issue', approval_id: id, arguments: { ...args, amount: 2500.5 } } })).json();
    await p.goto(`${svc.url}/console/#/logs/${run.log_id}`);
    const check = p.getByTestId('approval-check');
    await expect.poll(() => check.isVisible()).toBe(true);
    expect(await check.innerText()).toMatch(/Approval check .*: mismatch for approval/);
    expect(await axe(p)).toEqual([]);
    await p.close();
  });

  it('an incident is opened, commented, moved to investigating behind a confirmation, and reported', async () => {
    const p = await page();
    await signIn(p, svc.url, reviewerEmail, reviewerPassword);
    await p.getByRole('link', { name: 'Incidents', exact: true }).click();
    const form = p.getByRole('form', { name: 'Open an incident' });
    await form.getByLabel('Title').fill('Refund ran with a changed amount');
    await form.getByLabel('Art. 73').selectOption('serious');
    await form.getByRole('button', { name: 'Open the incident' }).click();
    const detail = p.getByRole('region', { name: 'Incident Refund ran with a changed amount' });
    await expect.poll(() => detail.isVisible()).toBe(true);
    expect(await detail.innerText()).toMatch(/serious: report due by/);
    await detail.getByRole('button', { name: 'Comment' }).click();
    await p.getByRole('dialog', { name: 'Add a comment' }).getByLabel('Comment').fill('Looking at the trace');
    await p.getByRole('dialog', { name: 'Add a comment' }).getByRole('button', { name: 'Confirm: comment' }).click();
    await expect.poll(async () => await p.getByRole('list', { name: 'Incident timeline' }).innerText()).toContain('Looking at the trace');
    await detail.getByRole('button', { name: 'Mark investigating' }).click();
    expect(await p.getByTestId('incident-status').innerText()).toBe('open');
    await p.getByRole('dialog', { name: 'Move the incident to investigating' }).getByRole('button', { name: 'Confirm: mark investigating' }).click();
    await expect.poll(() => p.getByTestId('incident-status').innerText()).toBe('investigating');
    await detail.getByRole('button', { name: 'Make the signed report' }).click();
    const status = p.getByRole('status').filter({ hasText: 'signed' });
    await expect.poll(() => status.isVisible()).toBe(true);
    const pdfHref = await status.getByRole('link', { name: 'PDF' }).getAttribute('href');
    const pdf = await p.evaluate(async (href) => {
      const r = await fetch(href as string);
      return { type: r.headers.get('content-type'), head: new TextDecoder().decode((await r.arrayBuffer()).slice(0, 5)) };
    }, pdfHref);
    expect(pdf).toEqual({ type: 'application/pdf', head: '%PDF-' });
    expect(await axe(p)).toEqual([]);
    await p.screenshot({ path: path.join(SHOTS, 'governance-incident.png'), fullPage: true });
    const incidents = (await api('GET', '/incidents', admin)).json().items;
    expect(incidents).toMatchObject([{ title: 'Refund ran with a changed amount', status: 'investigating', opened_by: { email: reviewerEmail } }]);
    await p.close();
  });

  it('the decision register lists a decision and opens it with its model, prompt, inputs and tools', async () => {
    const decisionId = randomUUID();
    const made = await api('POST', '/logs', { 'x-api-key': key }, {
      event_type: 'decision.made', trace_id: randomUUID(), agent_id: 'underwriter',
      data: { decision_id: decisionId, action: 'loan.approve', outcome: 'approve', model: 'gpt-5', model_version: '2026-08-01', confidence: 0.82, prompt_template_version: 'v12', prompt_hash: 'cd'.repeat(32), inputs_hash: 'ef'.repeat(32), retrieved_documents: ['doc-1', 'doc-2'], tools_used: ['credit_bureau'] },
    });
    expect(made.status, made.body).toBe(200);
    const p = await page();
    await signIn(p, svc.url, reviewerEmail, reviewerPassword);
    await p.goto(`${svc.url}/console/#/decisions`);
    const register = p.getByRole('table', { name: 'Decision register' });
    await expect.poll(() => register.innerText()).toContain(decisionId);
    await register.getByRole('link', { name: decisionId }).click();
    const one = p.getByRole('region', { name: `Decision ${decisionId}` });
    await expect.poll(() => one.innerText()).toContain('loan.approve → approve');
    expect(await one.innerText()).toContain('credit_bureau');
    expect(await one.innerText()).toContain('doc-1, doc-2');
    expect(await axe(p)).toEqual([]);
    await p.screenshot({ path: path.join(SHOTS, 'governance-decision.png'), fullPage: true });
    await p.close();
  });

  it('compares two policy versions line by line', async () => {
    await api('PUT', '/policies/refunds', admin, { content: 'package refunds\ndefault allow := false\nallow if input.amount <= 100\n', format: 'rego' });
    await api('PUT', '/policies/refunds', admin, { content: 'package refunds\ndefault allow := false\nallow if input.amount <= 50\nallow if input.vip\n', format: 'rego' });
    const p = await page();
    await signIn(p, svc.url, reviewerEmail, reviewerPassword);
    await p.getByRole('link', { name: 'Policies', exact: true }).click();
    await p.getByRole('link', { name: 'refunds' }).click();
    const diff = p.getByTestId('policy-diff');
    await expect.poll(() => diff.isVisible()).toBe(true);
    const lines = await diff.locator('div').evaluateAll((els) => els.map((e) => [e.className, e.textContent]));
    expect(lines).toEqual([
      ['same', '  package refunds'],
      ['same', '  default allow := false'],
      ['removed', '- allow if input.amount <= 100'],
      ['added', '+ allow if input.amount <= 50'],
      ['added', '+ allow if input.vip'],
      ['same', '  '],
    ]);
    expect(await axe(p)).toEqual([]);
    await p.screenshot({ path: path.join(SHOTS, 'governance-policy-diff.png'), fullPage: true });
    await p.close();
  });
});
