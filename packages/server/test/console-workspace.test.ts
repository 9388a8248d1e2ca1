// The console defects a new compliance officer hit (issue 30), each reproduced in Chromium and
// held fixed: a role changed by one arrow key, a huge causal graph widening the page, an expired
// session shown as an empty ledger, root-cause findings announced but not shown, a cycle drawn
// without its closing edge, logs filters that refuse a day and match types only exactly, and
// pages wider than a 375 px phone.
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOTSTRAP, bootstrapKey, killLeftovers, type Service, startService } from './fault/harness.js';
import { axe, launchChromium, requireBrowserAndConsole, SHOTS, signIn } from './helpers/console-browser.js';
import { call } from './helpers/http.js';
import { createTestDatabase, type TestDatabase } from './helpers/stores.js';

describe('console defects found by a new user, in Chromium', () => {
  let db: TestDatabase;
  let svc: Service;
  let browser: Browser;
  let key: string;
  let admin: Record<string, string>;
  const longTrace = randomUUID();
  const cycleTrace = randomUUID();
  const api = (method: string, p: string, headers: Record<string, string>, body?: unknown) => call(`${svc.url}/api/v1${p}`, method, body, headers);

  beforeAll(async () => {
    requireBrowserAndConsole();
    db = await createTestDatabase('sqlite');
    svc = await startService({ LEDGER_DATA_DIR: db.dataDir, ...BOOTSTRAP, PORT: '0', CHECKPOINT_INTERVAL_MS: '100' });
    key = await bootstrapKey(svc.url);
    admin = { authorization: `Bearer ${(await api('POST', '/auth/login', {}, { email: BOOTSTRAP.LEDGER_BOOTSTRAP_EMAIL, password: BOOTSTRAP.LEDGER_BOOTSTRAP_PASSWORD })).json().access_token}` };
    await api('POST', '/users', admin, { email: 'ana.auditor@example.com', role: 'auditor' });
    // A 200-event run of one agent, and a 3-event causal cycle.
    // Every tenth step reads one of two knowledge bases: the run is still one group, which reads both.
    const long = Array.from({ length: 200 }, (_, i) => ({
      event_type: i % 10 === 5 ? 'context.retrieved' : i % 3 === 0 ? 'decision.made' : 'tool.called',
      trace_id: longTrace, agent_id: 'planner', event_id: `s-${i}`, ...(i > 0 ? { parent_event_id: `s-${i - 1}` } : {}),
      data: i % 10 === 5 ? { source_id: `kb-${i % 20 === 5 ? 'policies' : 'prices'}`, source_type: 'vector_store' } : { tool: `t${i % 7}`, step: i },
    }));
    expect((await api('POST', '/logs/batch', { 'x-api-key': key }, { logs: long })).status).toBe(200);
    const cycle = [
      { event_type: 'tool.called', trace_id: cycleTrace, event_id: 'a', parent_event_id: 'c', data: { tool: 'crm' } },
      { event_type: 'tool.called', trace_id: cycleTrace, event_id: 'b', parent_event_id: 'a', data: { tool: 'mail' } },
      { event_type: 'tool.called', trace_id: cycleTrace, event_id: 'c', parent_event_id: 'b', data: { tool: 'crm' } },
      { event_type: 'hitl.rejected', trace_id: cycleTrace, data: { reviewer: 'r@example.com', rejection_reason: 'loop' } },
    ];
    expect((await api('POST', '/logs/batch', { 'x-api-key': key }, { logs: cycle })).status).toBe(200);
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    killLeftovers();
    await db?.drop();
  });

  const signedIn = async (width = 1366): Promise<Page> => {
    const p = await browser.newPage({ viewport: { width, height: 900 } });
    // A step that waits in vain fails with its own name, before the test's 30 s end hides which one it was.
    p.setDefaultTimeout(15_000);
    await signIn(p, svc.url, BOOTSTRAP.LEDGER_BOOTSTRAP_EMAIL, BOOTSTRAP.LEDGER_BOOTSTRAP_PASSWORD);
    await p.getByRole('heading', { name: 'Overview' }).waitFor();
    await p.goto(`${svc.url}/console/#/logs`);
    await p.getByRole('table', { name: 'Ledger entries' }).waitFor();
    return p;
  };

  it('1. a role changes only after Save and a confirmation; revoking a key and disabling a user ask first', async () => {
    const p = await signedIn();
    await p.getByRole('link', { name: 'Admin', exact: true }).click();
    const role = p.getByLabel('Role of ana.auditor@example.com');
    await role.focus();
    await p.keyboard.press('ArrowUp');
    const users = async () => (await api('GET', '/users', admin)).json().items.find((u: { email: string }) => u.email === 'ana.auditor@example.com');
    expect((await users()).role).toBe('auditor');
    await p.getByRole('button', { name: 'Save role of ana.auditor@example.com' }).click();
    const dialog = p.getByRole('dialog', { name: 'Change the role of ana.auditor@example.com' });
    expect(await dialog.innerText()).toMatch(/From auditor to \w+: it takes effect/);
    expect((await users()).role).toBe('auditor');
    await dialog.getByRole('button', { name: /^Confirm/ }).click();
    await expect.poll(async () => (await users()).role).not.toBe('auditor');
    // The dialog closes once the page has read the users again (after the API has answered).
    await dialog.waitFor({ state: 'detached' });

    await p.getByRole('button', { name: 'Disable ana.auditor@example.com' }).click();
    expect((await users()).disabled).toBe(false);
    const disable = p.getByRole('dialog', { name: 'Disable ana.auditor@example.com' });
    await disable.getByRole('button', { name: /^Confirm/ }).click();
    await expect.poll(async () => (await users()).disabled).toBe(true);
    await disable.waitFor({ state: 'detached' });

    await p.getByRole('button', { name: /^Revoke / }).click();
    expect((await api('GET', '/auth/api_keys', admin)).json().items.filter((k: { status: string }) => k.status === 'active')).toHaveLength(1);
    await p.getByRole('button', { name: 'Cancel' }).click();
    expect(await p.getByRole('dialog').count()).toBe(0);
    expect(await p.getByText(/from \d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2} \(UTC days\)/).count()).toBe(1);
    expect(await axe(p)).toEqual([]);
    await p.close();
  });

  it('2 and 4. a 200-event graph stays inside its box; findings are listed; a cycle is drawn with its closing edge', async () => {
    const p = await signedIn();
    const replay = (await api('POST', '/forensics/replays', { 'x-api-key': key }, { trace_id: longTrace, metadata: {} })).json();
    await p.goto(`${svc.url}/console/#/replays/${replay.id}`);
    await p.getByTestId('causal-graph').waitFor();
    // One agent's 200 steps are one node until opened.
    const group = p.locator('[data-testid="causal-graph"] g.node.group');
    await expect.poll(() => group.count()).toBe(1);
    expect(await group.locator('title').textContent()).toContain('planner: 200 steps');
    const nodes = p.locator('[data-testid="causal-graph"] g.node');
    // The group and the two sources its steps read, with the group's reads drawn to each.
    expect(await nodes.count()).toBe(3);
    expect(await p.locator('[data-testid="causal-graph"] .edge[data-type="reads"]').count()).toBe(2);
    await group.click();
    await expect.poll(() => nodes.count()).toBe(202);
    await p.getByRole('button', { name: 'Group the steps again' }).click();
    await expect.poll(() => nodes.count()).toBe(3);
    // From the keyboard alone: the group is a button, Enter opens it.
    await p.getByRole('button', { name: 'planner: 200 steps: show each step' }).focus();
    await p.keyboard.press('Enter');
    await expect.poll(() => nodes.count()).toBe(202);
    expect(await axe(p)).toEqual([]);
    expect(await p.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(1366);
    const box = await p.getByTestId('graph-box').boundingBox();
    expect(box?.width).toBeLessThanOrEqual(1366);
    await p.getByRole('button', { name: 'Zoom in' }).click();
    expect(await p.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(1366);
    expect(await p.getByTestId('graph-box').evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
    await p.screenshot({ path: path.join(SHOTS, 'workspace-long-graph.png') });

    const cyc = (await api('POST', '/forensics/replays', { 'x-api-key': key }, { trace_id: cycleTrace, metadata: {} })).json();
    await p.goto(`${svc.url}/console/#/replays/${cyc.id}`);
    await p.getByTestId('causal-graph').waitFor();
    const rc = (await api('GET', `/forensics/replays/${cyc.id}/root-cause`, { 'x-api-key': key })).json();
    expect(rc.findings.length).toBeGreaterThan(0);
    const findings = p.getByRole('region', { name: 'Findings' });
    await expect.poll(() => findings.locator('li').count()).toBe(rc.findings.length);
    expect(await findings.innerText()).toContain('loop');
    const graph = (await api('GET', `/forensics/replays/${cyc.id}/causal-graph`, { 'x-api-key': key })).json();
    const caused = graph.edges.filter((e: { type: string }) => e.type === 'caused_by').length;
    await expect.poll(() => p.locator('[data-testid="causal-graph"] .edge[data-type="caused_by"]').count()).toBe(caused);
    expect(await p.locator('[data-testid="causal-graph"] path.edge.back').count()).toBeGreaterThanOrEqual(1);
    expect(await axe(p)).toEqual([]);
    await p.close();
  });

  it('3. a session that ended goes to sign-in, says so, and comes back to the page', async () => {
    const p = await signedIn();
    await p.getByRole('link', { name: 'Integrity', exact: true }).click();
    await p.getByRole('heading', { name: 'Integrity' }).waitFor();
    await p.context().clearCookies(); // the session is gone (idle timeout, signed out elsewhere)
    await p.getByRole('link', { name: 'Logs', exact: true }).click();
    const notice = p.getByRole('status').filter({ hasText: 'Your session expired' });
    await expect.poll(() => notice.count()).toBe(1);
    expect(await p.getByText(/0 entries on this page/).count()).toBe(0);
    await p.getByLabel('Email').fill(BOOTSTRAP.LEDGER_BOOTSTRAP_EMAIL);
    await p.getByLabel('Password').fill(BOOTSTRAP.LEDGER_BOOTSTRAP_PASSWORD);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => p.getByRole('table', { name: 'Ledger entries' }).locator('tbody tr').count()).toBeGreaterThan(0);
    expect(p.url()).toMatch(/#\/logs/);
    await p.close();
  });

  it('8. logs: a type prefix, a day from a date picker, no Older on an empty page, and an export of the selection', async () => {
    const p = await signedIn();
    await p.getByRole('combobox', { name: /Event type/ }).fill('hitl.*');
    await p.getByRole('button', { name: 'Filter' }).click();
    const rows = p.getByRole('table', { name: 'Ledger entries' }).locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(1);
    await expect.poll(() => rows.first().innerText()).toContain('hitl.rejected');
    const today = new Date().toISOString().slice(0, 10);
    await p.getByLabel('From (UTC day)').fill(today);
    await p.getByLabel('To (UTC day, included)').fill(today);
    await p.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => p.url()).toContain(`from=${today}`);
    await expect.poll(() => rows.count()).toBe(1);
    expect(await p.getByRole('alert').count()).toBe(0);
    const href = await p.getByRole('link', { name: 'JSON Lines (verifiable)' }).getAttribute('href');
    expect(new URL(href as string, svc.url).searchParams.get('event_type')).toBe('hitl.*');
    const exported = await p.evaluate(async (h) => (await fetch(h as string)).text(), href);
    expect(exported.trim().split('\n').map((l) => JSON.parse(l).event_type)).toEqual(['hitl.rejected']);
    await p.goto(`${svc.url}/console/#/logs?event_type=nothing.here`);
    await expect.poll(() => p.getByText('0 entries on this page').count()).toBe(1);
    expect(await p.getByRole('button', { name: 'Older' }).isDisabled()).toBe(true);
    await p.close();
  });

  it('search inside events from the Logs page: words and a JSON-path condition', async () => {
    const p = await signedIn();
    await p.getByLabel('Search inside events (words)').fill('mail');
    await p.getByLabel('Conditions on data (one a line)').fill('data.tool = "mail"');
    await p.getByRole('button', { name: 'Filter' }).click();
    const rows = p.getByRole('table', { name: 'Ledger entries' }).locator('tbody tr');
    await expect.poll(() => p.url()).toContain('where=');
    await expect.poll(() => rows.count()).toBe(1);
    await expect.poll(() => rows.first().innerText()).toContain('tool.called');
    // A condition that holds for no entry finds none; a malformed one says what is wrong.
    await p.getByLabel('Conditions on data (one a line)').fill('data.tool = "fax"');
    await p.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => rows.count()).toBe(0);
    await p.getByLabel('Conditions on data (one a line)').fill('tool = mail');
    await p.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => p.getByRole('alert').innerText()).toContain('must be data.<key>');
    expect(await axe(p)).toEqual([]);
    await p.close();
  });

  it('7. every page fits a 375 px screen: no horizontal scroll, navigation and Sign out reachable', async () => {
    const p = await signedIn(375);
    for (const hash of ['#/', '#/compliance', '#/logs', '#/traces', '#/integrity', '#/evidence', '#/approvals', '#/reviews', '#/decisions', '#/policies', '#/incidents', '#/admin', '#/keys']) {
      await p.goto(`${svc.url}/console/${hash}`);
      await p.waitForLoadState('networkidle');
      const width = await p.evaluate<number>('document.documentElement.scrollWidth');
      expect(width, `${hash} is ${width} px wide`).toBeLessThanOrEqual(375);
      const out = await p.getByRole('button', { name: 'Sign out' }).boundingBox();
      expect(out && out.x + out.width <= 375, `${hash}: Sign out on screen`).toBe(true);
    }
    await p.screenshot({ path: path.join(SHOTS, 'workspace-375.png'), fullPage: true });
    await p.close();
  });

  it('the overview is the page after sign-in: events per day and per agent, integrity, what waits, holds', async () => {
    const p = await browser.newPage({ viewport: { width: 1366, height: 900 } });
    await signIn(p, svc.url, BOOTSTRAP.LEDGER_BOOTSTRAP_EMAIL, BOOTSTRAP.LEDGER_BOOTSTRAP_PASSWORD);
    await p.getByRole('heading', { name: 'Overview' }).waitFor();
    const refused: string[] = [];
    p.on('console', (m) => void (m.type() === 'error' && refused.push(m.text())));
    await p.getByTestId('events-per-day').waitFor();
    // The chart (uPlot, from its own chunk) is drawn inside its box, under the page's CSP, with its legend.
    const chart = p.getByTestId('events-per-day');
    await chart.locator('canvas').waitFor();
    expect(await chart.innerText()).toMatch(/Events[\s\S]*API requests/);
    const box = await chart.boundingBox();
    expect(box && box.width <= 1366).toBe(true);
    expect(await chart.getAttribute('aria-label')).toMatch(/Events per day: \d{4}-\d{2}-\d{2}: \d+ events/);
    // each section loads on its own: wait for each one's answer, never read a placeholder
    await expect.poll(() => p.getByTestId('entries-per-agent').getAttribute('aria-label')).toContain('planner: 200');
    await expect.poll(() => p.getByRole('region', { name: 'Integrity' }).innerText()).toMatch(/Chain \w+: 0 violations/);
    await expect.poll(() => p.getByRole('region', { name: 'Waiting for a person' }).innerText()).toMatch(/\d+ approval requests? pending/);
    expect(await axe(p)).toEqual([]);
    expect(refused).toEqual([]);
    await p.screenshot({ path: path.join(SHOTS, 'workspace-overview.png'), fullPage: true });
    await p.close();
  });

  it('compliance: a hold placed and released, retention set, an erasure refused under the hold, a report made and verified in the browser, each behind a confirmation', async () => {
    const p = await signedIn();
    await p.getByRole('link', { name: 'Pinned keys', exact: true }).click();
    await p.getByRole('button', { name: /^Pin key / }).click();
    await p.getByRole('link', { name: 'Compliance', exact: true }).click();
    await p.getByRole('heading', { name: 'Compliance' }).waitFor();
    const holdForm = p.getByRole('form', { name: 'Place a legal hold' });
    await holdForm.getByLabel('Which').fill(cycleTrace);
    await holdForm.getByRole('button', { name: 'Place the hold' }).click();
    expect((await api('GET', '/compliance/holds', admin)).json().items).toHaveLength(0);
    const dialog = p.getByRole('dialog', { name: 'Place a legal hold' });
    await dialog.getByLabel('Reason').fill('regulator inquiry');
    await dialog.getByLabel('Case reference (optional)').fill('FCA-9');
    await dialog.getByRole('button', { name: /^Confirm/ }).click();
    await expect.poll(async () => (await api('GET', '/compliance/holds', admin)).json().items.length).toBe(1);
    await expect.poll(() => p.getByRole('table', { name: 'Legal holds list' }).innerText()).toContain('FCA-9');

    // An erasure inside the hold is refused, and the page says why.
    const hitl = (await api('GET', `/logs?trace_id=${cycleTrace}&event_type=hitl.rejected`, admin)).json().items[0].log_id;
    const eraseForm = p.getByRole('form', { name: 'Request an erasure' });
    await eraseForm.getByLabel('By').selectOption('log_ids');
    await eraseForm.getByLabel('Log ids', { exact: true }).fill(hitl);
    await eraseForm.getByRole('button', { name: 'Erase' }).click();
    const erase = p.getByRole('dialog', { name: 'Erase content' });
    expect(await erase.innerText()).toContain('skeleton');
    await erase.getByLabel('Legal basis').fill('GDPR Art. 17');
    await erase.getByRole('button', { name: /^Confirm/ }).click();
    await expect.poll(() => erase.innerText()).toContain('legal hold');
    expect((await api('GET', '/compliance/erasures', admin)).json().items).toHaveLength(0);
    await erase.getByRole('button', { name: 'Cancel' }).click();

    await p.getByRole('table', { name: 'Legal holds list' }).getByRole('button', { name: 'Release' }).click();
    await p.getByRole('dialog', { name: /Release the hold/ }).getByLabel('Reason').fill('closed');
    await p.getByRole('dialog', { name: /Release the hold/ }).getByRole('button', { name: /^Confirm/ }).click();
    await expect.poll(async () => (await api('GET', '/compliance/holds', admin)).json().items[0].status).toBe('released');

    await p.getByRole('button', { name: 'Set retention' }).click();
    await p.getByRole('dialog', { name: 'Set the retention of content' }).getByLabel(/Days content is kept/).fill('3650');
    await p.getByRole('dialog', { name: 'Set the retention of content' }).getByRole('button', { name: /^Confirm/ }).click();
    await expect.poll(async () => (await api('GET', '/compliance/retention', admin)).json().content_days).toBe(3650);
    await expect.poll(() => p.getByTestId('retention-preview').innerText()).toMatch(/The next run would erase the content of 0 entries/);

    const today = new Date().toISOString().slice(0, 10);
    const reportForm = p.getByRole('form', { name: 'Make a period report' });
    await reportForm.getByLabel('From (UTC day)').fill(today);
    await reportForm.getByLabel('To (UTC day, included)').fill(today);
    await reportForm.getByRole('button', { name: 'Make the report' }).click();
    await p.getByRole('dialog', { name: 'Make a signed period report' }).getByRole('button', { name: /^Confirm/ }).click();
    const reports = p.getByRole('table', { name: 'Reports list' });
    await expect.poll(() => reports.locator('tbody tr').count()).toBe(1);
    await reports.getByRole('button', { name: 'Verify in this browser' }).click();
    await expect.poll(() => reports.getByRole('status').innerText()).toContain('Verified in this browser: compliance report of company');
    expect(await axe(p)).toEqual([]);
    await p.screenshot({ path: path.join(SHOTS, 'workspace-compliance.png'), fullPage: true });
    await p.close();
  });

  it('9. Replay opens the trace\'s replay when nothing was added since, lists the others, and a trace verified is not asked for again on the next visit', async () => {
    const p = await signedIn();
    const sessions = async () => (await api('GET', `/forensics/replays?trace_id=${cycleTrace}&limit=100`, admin)).json().items.length as number;
    const before = await sessions();
    await p.goto(`${svc.url}/console/#/traces`);
    await p.getByRole('button', { name: `Replay trace ${cycleTrace}` }).click();
    await p.getByTestId('causal-graph').waitFor();
    expect(await sessions()).toBe(before === 0 ? 1 : before);
    await p.goto(`${svc.url}/console/#/traces`);
    await p.getByRole('button', { name: `Replay trace ${cycleTrace}` }).click();
    await p.getByTestId('causal-graph').waitFor();
    expect(await sessions()).toBe(Math.max(1, before));
    // Pin the key, verify the trace, leave and come back: the verdict is shown, no new bundle asked for.
    const replayUrl = p.url();
    await p.getByRole('link', { name: 'Pinned keys', exact: true }).click();
    await p.getByRole('button', { name: /^Pin key / }).click(); // a new browser context: nothing pinned yet
    await p.goto(replayUrl);
    const bundles = async () => (await api('GET', '/logs?event_type=evidence.generated&limit=1000', admin)).json().items.length as number;
    const n = await bundles();
    await p.getByRole('button', { name: 'Verify this trace in the browser' }).click();
    await p.getByTestId('verify-badge').waitFor();
    expect(await bundles()).toBe(n + 1);
    await p.goto(`${svc.url}/console/#/logs`);
    await p.goto(replayUrl);
    await p.getByTestId('verify-badge').waitFor();
    expect(await p.getByRole('button', { name: 'Verify this trace again' }).count()).toBe(1);
    expect(await bundles()).toBe(n + 1);
    await p.close();
  });

  it('9. a problem names an identifier by its first characters, not a raw UUID, and is gone once the page moves on', async () => {
    const p = await signedIn();
    const missing = '0193abcd-1234-7abc-8def-0123456789ab';
    await p.goto(`${svc.url}/console/#/logs/${missing}`);
    const alert = p.getByRole('alert');
    await expect.poll(() => alert.innerText()).toContain('0193abcd…');
    expect(await alert.innerText()).not.toContain(missing);
    await p.goto(`${svc.url}/console/#/logs`);
    await p.getByRole('table', { name: 'Ledger entries' }).waitFor();
    expect(await p.getByRole('alert').count()).toBe(0);
    await p.close();
  });

  it('log streams on the Administration page: one added from the form delivers and shows caught up; pausing asks first', async () => {
    const p = await signedIn();
    await p.getByRole('link', { name: 'Admin', exact: true }).click();
    const form = p.getByRole('form', { name: 'Add a log stream' });
    await form.getByLabel('Name').fill('evidence archive');
    await form.getByLabel('Destination').selectOption('directory');
    await form.getByLabel('Folder').fill('archive');
    await form.getByLabel('Format').selectOption('ledger');
    await form.getByLabel('Start').selectOption('beginning');
    await form.getByRole('button', { name: 'Add stream' }).click();
    const table = p.getByRole('table', { name: 'Log streams' });
    const row = table.getByRole('row').filter({ hasText: 'evidence archive' });
    await row.waitFor();
    expect(await row.innerText()).toContain('directory archive');
    const streams = async () => (await api('GET', '/streams', admin)).json().items as Array<{ name: string; status: string; lag: { entries: number } }>;
    await expect.poll(async () => (await streams())[0]?.lag.entries, { timeout: 20_000 }).toBe(0);
    // The page shows what the API says, after a reload of the page.
    await p.reload();
    await expect.poll(() => p.getByRole('table', { name: 'Log streams' }).getByRole('row').filter({ hasText: 'evidence archive' }).innerText()).toContain('caught up');
    await p.getByRole('button', { name: 'Pause evidence archive' }).click();
    expect((await streams())[0]?.status).toBe('active');
    const dialog = p.getByRole('dialog', { name: 'Pause the stream evidence archive' });
    expect(await dialog.innerText()).toContain('continues from where it stopped');
    await dialog.getByRole('button', { name: /^Confirm/ }).click();
    await expect.poll(async () => (await streams())[0]?.status).toBe('paused');
    await p.getByRole('button', { name: 'Resume evidence archive' }).waitFor();
    expect(await axe(p)).toEqual([]);
    await p.getByRole('region', { name: 'Log streams' }).screenshot({ path: path.join(SHOTS, 'workspace-streams.png') });
    await p.close();
  });

  it('9. the console has a favicon', async () => {
    const res = await fetch(`${svc.url}/console/favicon.svg`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('image/svg+xml');
  });
});
