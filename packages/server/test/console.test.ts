// The web console in a real browser (Debian's Chromium, driven by playwright-core) against the
// real service process, on both stores: sign in, find an entry, pin the signing key, verify the
// entry in the page (hash, signature, inclusion proof, checkpoint signature), then tamper with the
// stored row and see the badge turn red naming the hash mismatch. Every page is scanned with
// axe-core (no serious or critical violation) and screenshotted into test-results/console/ for a
// reviewer. The page runs under the console's CSP: any script or style it refuses fails the test.
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openStore } from '../src/store/open.js';
import { BOOTSTRAP, bootstrapKey, killLeftovers, type Service, startService } from './fault/harness.js';
import { axe, freePort, launchChromium, noContentReceiver, requireBrowserAndConsole, SHOTS, signIn } from './helpers/console-browser.js';
import { call, getRawPath } from './helpers/http.js';
import { STORE_KINDS } from './helpers/env.js';
import { createTestDatabase, type TestDatabase } from './helpers/stores.js';
import { agentKeyRegistration, agentSigner, signAgentEvent } from '@audit-ledger/sdk';

const OPERATOR_TOKEN = 'operator-token-for-the-console-test-0123456789';

describe.each(STORE_KINDS)('the console in Chromium on %s', (kind) => {
  let db: TestDatabase;
  let svc: Service;
  let browser: Browser;
  let key: string;
  let receiver: { url: string; close: () => Promise<void> } | undefined;
  const cspErrors: string[] = [];

  beforeAll(async () => {
    requireBrowserAndConsole();
    db = await createTestDatabase(kind);
    svc = await startService({ LEDGER_DATA_DIR: db.dataDir, ...(db.databaseUrl ? { DATABASE_URL: db.databaseUrl } : {}), ...BOOTSTRAP, PORT: '0', CHECKPOINT_INTERVAL_MS: '100', LEDGER_OPERATOR_TOKEN: OPERATOR_TOKEN, WEBHOOK_ALLOW_PRIVATE: 'true' });
    receiver = await noContentReceiver();
    key = await bootstrapKey(svc.url);
    const batch = await call(`${svc.url}/api/v1/logs/batch`, 'POST', {
      logs: [
        { event_type: 'context.retrieved', source: 'trading-runtime', agent_id: 'equities-trader', data: { source_id: 'feed:NASDAQ:ACME', as_of: '2026-03-01T09:20:01.000Z' } },
        { event_type: 'decision.made', source: 'trading-runtime', agent_id: 'equities-trader', data: { decision: 'buy', symbol: 'ACME', quantity: 100 } },
        { event_type: 'action.executed', source: 'trading-runtime', agent_id: 'equities-trader', data: { action: 'place_order', order_id: 'ord-55120' } },
      ],
    }, { 'x-api-key': key });
    expect(batch.status, batch.body).toBe(200);
    // The entries are covered by a signed checkpoint before the browser verifies them.
    await vi.waitFor(async () => expect((await call(`${svc.url}/api/v1/integrity/checkpoint`, 'GET', undefined, { 'x-api-key': key })).json().tree_size).toBeGreaterThanOrEqual(4), { timeout: 10_000, interval: 50 });
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await receiver?.close(); // none when setup failed before it started
    killLeftovers();
    await db?.drop();
  });

  const newPage = async () => {
    const page = await browser.newPage({ viewport: { width: 1366, height: 800 } });
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) cspErrors.push(m.text());
    });
    return page;
  };
  const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `${kind}-${name}.png`), fullPage: true });

  it('signs in, lists entries, pins the key and verifies an entry in the page; a tampered row turns the badge red (5. each check apart, the changed content marked, and a copy of what the agent sent shows what changed)', async () => {
    const page = await newPage();
    await page.goto(`${svc.url}/`);
    expect(page.url()).toBe(`${svc.url}/console/`); // the bare address sends a browser to the console
    await page.getByLabel('Email').fill(BOOTSTRAP.LEDGER_BOOTSTRAP_EMAIL);
    await page.getByLabel('Password').fill(BOOTSTRAP.LEDGER_BOOTSTRAP_PASSWORD);
    expect(await axe(page)).toEqual([]);
    await shot(page, 'sign-in');
    await page.getByRole('button', { name: 'Sign in' }).click();
    // The overview is the page after sign-in; the logs are one click away.
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByRole('link', { name: 'Logs', exact: true }).click();

    // Logs: the three entries, the API key's creation (api_key.created, seq 1) and the bootstrap
    // admin's (user.created, seq 0), newest first; the session cookie is HttpOnly (no script sees it).
    const rows = page.getByRole('table', { name: 'Ledger entries' }).locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(5);
    expect(await page.evaluate('document.cookie')).toBe('');
    const [cookie] = await page.context().cookies();
    expect(cookie).toMatchObject({ name: 'al_session', httpOnly: true, sameSite: 'Strict' });
    expect(await axe(page)).toEqual([]);
    await shot(page, 'logs');

    // The column chooser: a column added, in the URL too.
    await page.getByText('Columns', { exact: true }).click();
    await page.getByRole('checkbox', { name: 'Session' }).check();
    await expect.poll(() => page.url()).toContain('cols=');
    await page.getByRole('columnheader', { name: 'Session' }).waitFor();

    // Filtering is in the URL (shareable).
    await page.getByRole('combobox', { name: /Event type/ }).fill('decision.made');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => page.url()).toMatch(/#\/logs\?.*event_type=decision\.made/);
    await expect.poll(() => rows.count()).toBe(1);

    // The entry: every field; Verify asks to pin a key first.
    await rows.first().getByRole('link').click();
    await page.getByRole('heading', { name: /Entry 3: decision.made/ }).waitFor();
    const entryUrl = page.url();
    expect(await page.getByTestId('canonical-json').textContent()).toContain('"event_type":"decision.made"');
    const logId = entryUrl.split('/').at(-1) as string;
    await page.getByRole('button', { name: 'Verify in this browser' }).click();
    await page.getByRole('heading', { name: 'Pinned keys' }).waitFor();
    expect(await axe(page)).toEqual([]);
    await shot(page, 'keys');
    // Without a pinned key the page says why it is here; after pinning it goes back and the check runs by itself.
    expect(await page.getByRole('status').filter({ hasText: 'pinned none yet' }).count()).toBe(1);
    await page.getByRole('button', { name: /^Pin key / }).click();
    await page.waitForURL(`${entryUrl}?verify=1`);
    const badge = page.getByTestId('verify-badge');
    await expect.poll(() => badge.textContent()).toContain('Verified in this browser');
    const text = (await badge.textContent()) as string;
    expect(text).toContain("recomputed from the entry's fields");
    expect(text).toMatch(/signature checked with pinned key [0-9a-f]+/);
    expect(text).toMatch(/included in the tree of checkpoint \d+/);
    expect(await axe(page)).toEqual([]);
    await shot(page, 'entry-verified');

    // Someone with database access changes the stored entry: the page says so.
    const store = openStore({ dataDir: db.dataDir, databaseUrl: db.databaseUrl });
    try {
      await store.db.updateTable('log_entries').set({ data: JSON.stringify({ decision: 'sell', symbol: 'ACME', quantity: 100 }) }).where('log_id', '=', logId).execute();
    } finally {
      await store.close();
    }
    await page.reload();
    await page.getByRole('button', { name: 'Verify in this browser' }).click();
    await expect.poll(() => badge.textContent()).toContain('Verification FAILED');
    expect(await badge.textContent()).toContain('✗ data and extra match the content commitment the hash covers');
    expect(await badge.textContent()).toContain('content does not match its commitment');
    // The signature over the stored hash still holds: only the content check fails.
    expect(await badge.textContent()).toMatch(/✓ signature checked with pinned key [0-9a-f]{16}✗ included/);
    // Defect 5: the changed content is marked, and a copy of what the agent sent shows exactly what changed.
    expect(await page.getByTestId('entry-data').getAttribute('class')).toContain('changed');
    const changed = page.getByRole('region', { name: 'Changed content' });
    expect(await changed.innerText()).toContain('cannot say which field changed');
    await changed.getByLabel('Your copy of data (JSON)').fill(JSON.stringify({ decision: 'buy', symbol: 'ACME', quantity: 99 }));
    await changed.getByRole('button', { name: 'Compare with what is stored' }).click();
    await expect.poll(() => changed.getByRole('status').innerText()).toContain('does not rebuild the commitment either');
    await changed.getByLabel('Your copy of data (JSON)').fill(JSON.stringify({ decision: 'buy', symbol: 'ACME', quantity: 100 }));
    await changed.getByRole('button', { name: 'Compare with what is stored' }).click();
    await expect.poll(() => changed.getByRole('status').innerText()).toContain('it is what was recorded');
    const diff = changed.getByTestId('content-diff');
    expect(await diff.locator('.removed').allInnerTexts()).toEqual([`−   "decision": "buy",`]);
    expect(await diff.locator('.added').allInnerTexts()).toEqual([`+   "decision": "sell",`]);
    expect(await axe(page)).toEqual([]);
    await shot(page, 'entry-tampered');

    // Integrity: a full verification run from the page finds the changed entry and names it.
    await page.getByRole('link', { name: 'Integrity' }).click();
    await page.getByRole('heading', { name: 'Integrity' }).waitFor();
    await page.getByTestId('tree-chart').waitFor();
    await page.getByRole('button', { name: 'Run a full verification' }).click();
    await expect.poll(() => page.getByTestId('job-status').textContent(), { timeout: 30_000 }).toMatch(/: completed$/);
    const violations = page.getByRole('region', { name: 'Violations' });
    await expect.poll(() => violations.getByRole('link', { name: 'entry 3' }).getAttribute('href')).toBe(`#/logs/${logId}`);
    expect(await page.getByTestId('integrity-badge').getAttribute('class')).toContain('bad');
    expect(await axe(page)).toEqual([]);
    await shot(page, 'integrity');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    const me = await page.evaluate(async () => (await fetch('/api/v1/auth/me')).status);
    expect(me).toBe(401);
    expect(cspErrors).toEqual([]);
    await page.close();
  }, 120_000);

  it('lists traces, opens a replay of a fixture trace, and shows its root cause, timeline and causal graph', async () => {
    const fixture = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, 'fixtures', 'traces', 'stale-market-feed.json'), 'utf8')) as { events: Array<Record<string, unknown>> };
    const traceId = crypto.randomUUID();
    const ingest = await call(`${svc.url}/api/v1/logs/batch`, 'POST', { logs: fixture.events.map((e) => ({ ...e, trace_id: traceId })) }, { 'x-api-key': key });
    expect(ingest.status, ingest.body).toBe(200);
    await vi.waitFor(async () => expect((await call(`${svc.url}/api/v1/exports/evidence?trace_id=${traceId}`, 'GET', undefined, { 'x-api-key': key })).json().entries_after_checkpoint).toBe(0), { timeout: 10_000, interval: 50 });
    const page = await newPage();
    await signIn(page, svc.url, BOOTSTRAP.LEDGER_BOOTSTRAP_EMAIL, BOOTSTRAP.LEDGER_BOOTSTRAP_PASSWORD);
    await page.getByRole('link', { name: 'Pinned keys' }).click();
    await page.getByRole('button', { name: /^Pin key / }).click();
    await page.getByRole('link', { name: 'Traces' }).click();
    await page.getByRole('button', { name: `Replay trace ${traceId}` }).waitFor();
    expect(await axe(page)).toEqual([]);
    await shot(page, 'traces');
    await page.getByRole('button', { name: `Replay trace ${traceId}` }).click();
    const card = page.getByTestId('root-cause');
    await expect.poll(() => card.textContent()).toContain('Root cause: STALE_CONTEXT');
    // The whole trace, verified in the page from its evidence bundle.
    await page.getByRole('button', { name: 'Verify this trace in the browser' }).click();
    const traceBadge = page.getByRole('region', { name: 'Trace verification' }).getByTestId('verify-badge');
    await expect.poll(() => traceBadge.textContent()).toContain('Verified in this browser');
    expect(await traceBadge.textContent()).toContain(`${fixture.events.length} entries`);
    const graph = page.getByTestId('causal-graph');
    await graph.waitFor();
    const sources = new Set(fixture.events.filter((e) => e.event_type === 'context.retrieved').map((e) => (e.data as { source_id: string }).source_id));
    expect(await graph.locator('g.node').count()).toBe(fixture.events.length + sources.size); // the events and the sources they read
    expect(await graph.locator('line.edge').count()).toBeGreaterThanOrEqual(fixture.events.length - 1);
    expect(await page.getByRole('table', { name: 'Timeline' }).locator('tbody tr').count()).toBe(fixture.events.length);
    expect(await axe(page)).toEqual([]);
    await shot(page, 'replay');
    // The evidence links to the entries.
    await card.getByRole('link').first().click();
    await page.getByRole('heading', { name: /^Entry \d+: / }).waitFor();

    // Evidence: download the trace's bundle and the pinned keys, verify offline with the verify package.
    await page.goto(`${svc.url}/console/#/evidence?trace_id=${traceId}`);
    await page.getByRole('heading', { name: 'Evidence' }).waitFor();
    expect(await axe(page)).toEqual([]);
    await shot(page, 'evidence');
    const dir = fs.mkdtempSync(path.join(SHOTS, `${kind}-download-`));
    const save = async (click: () => Promise<void>, name: string) => {
      const [download] = await Promise.all([page.waitForEvent('download'), click()]);
      const file = path.join(dir, name);
      await download.saveAs(file);
      return file;
    };
    const bundle = await save(() => page.getByRole('link', { name: 'Evidence bundle' }).click(), 'evidence.json');
    const keys = await save(() => page.getByRole('button', { name: 'Download the keys you pinned' }).click(), 'pinned-keys.json');
    expect(JSON.parse(fs.readFileSync(bundle, 'utf8')).entries).toHaveLength(fixture.events.length);
    const verify = spawnSync(process.execPath, [path.join(import.meta.dirname, '..', '..', 'verify', 'bin', 'audit-ledger-verify.js'), bundle, '--public-key', keys], { encoding: 'utf8' });
    expect(verify.status, verify.stdout + verify.stderr).toBe(0);
    expect(verify.stdout).toContain('VERIFIED');
    expect(cspErrors).toEqual([]);
    await page.close();
  }, 120_000);

  it('an admin invites an auditor and records a review; the auditor sets a password and reaches no admin or review action (UI and API); a reviewer reaches the review form but not admin', async () => {
    const admin = await newPage();
    await signIn(admin, svc.url, BOOTSTRAP.LEDGER_BOOTSTRAP_EMAIL, BOOTSTRAP.LEDGER_BOOTSTRAP_PASSWORD);
    await admin.getByRole('link', { name: 'Admin' }).click();
    await admin.getByRole('heading', { name: 'Administration' }).waitFor();
    const invite = admin.getByRole('form', { name: 'Invite a user' });
    const email = `auditor-${kind}@example.com`;
    await invite.getByLabel('Email').fill(email);
    await invite.getByLabel('Role').selectOption('auditor');
    await invite.getByRole('button', { name: 'Invite' }).click();
    const shown = admin.getByRole('status');
    await expect.poll(() => shown.textContent()).toContain(`One-time password for ${email}`);
    const otp = ((await shown.textContent()) as string).split(': ').at(-1)?.trim() as string;
    await admin.getByRole('table', { name: 'Users and roles' }).getByRole('cell', { name: email, exact: true }).waitFor();
    await admin.getByText(/Service: ok\. Requests \d+, events \d+/).waitFor();
    await admin.getByTestId('usage-chart').waitFor();
    // A webhook endpoint for review events; its signing secret is shown once.
    const hook = `${receiver?.url}/hook`;
    const addHook = admin.getByRole('form', { name: 'Add a webhook endpoint' });
    await addHook.getByLabel('URL').fill(hook);
    await addHook.getByRole('checkbox', { name: 'hitl.rejected' }).check();
    await addHook.getByRole('button', { name: 'Add endpoint' }).click();
    await expect.poll(() => admin.getByRole('status').textContent()).toContain(`Signing secret for ${hook} (shown once): whsec_`);
    // The list is read again after the secret is shown: the new endpoint's row, then the picture.
    await admin.getByRole('table', { name: 'Webhook endpoints' }).getByRole('cell', { name: hook, exact: true }).waitFor();
    expect(await axe(admin)).toEqual([]);
    await shot(admin, 'admin');

    await admin.getByRole('link', { name: 'Human review' }).click();
    const form = admin.getByRole('form', { name: 'Reject a decision' });
    await form.getByLabel('Reason').fill('Placed on a feed ten minutes old');
    await form.getByRole('button', { name: 'Record the rejection' }).click();
    await admin.getByRole('table', { name: 'Rejections' }).getByText('Placed on a feed ten minutes old').waitFor();
    expect(await axe(admin)).toEqual([]);
    await shot(admin, 'reviews');
    // The review was delivered to the endpoint: its delivery is listed on the admin page.
    await admin.getByRole('link', { name: 'Admin' }).click();
    await expect
      .poll(
        async () => {
          await admin.getByRole('button', { name: `Deliveries of ${hook}` }).click();
          return admin.getByRole('table', { name: 'Deliveries' }).getByText('hitl.rejected').count();
        },
        { timeout: 15_000 },
      )
      .toBeGreaterThan(0);
    await admin.close();

    const auditor = await newPage();
    await signIn(auditor, svc.url, email, otp);
    await auditor.getByRole('heading', { name: 'Set your own password' }).waitFor();
    await auditor.getByLabel('One-time password').fill(otp);
    await auditor.getByLabel('New password').fill('the auditor chose this');
    await auditor.getByRole('button', { name: 'Save' }).click();
    await auditor.getByRole('heading', { name: 'Overview' }).waitFor();
    expect(await auditor.getByRole('link', { name: 'Admin' }).count()).toBe(0);
    await auditor.goto(`${svc.url}/console/#/admin`);
    await auditor.getByText('Administration is for admins; your role is auditor.').waitFor();
    await auditor.goto(`${svc.url}/console/#/reviews`);
    await auditor.getByRole('table', { name: 'Rejections' }).waitFor();
    expect(await auditor.getByRole('form', { name: 'Reject a decision' }).count()).toBe(0);
    // The API refuses them too, whatever the page shows.
    const statuses = await auditor.evaluate(`(async () => {
      const s = await (await fetch('/api/v1/auth/session')).json();
      const post = (url, body) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': s.csrf_token }, body: JSON.stringify(body) }).then((r) => r.status);
      return [await post('/api/v1/users', { email: 'x@example.com', role: 'admin' }), await post('/api/v1/hitl/reject', { reviewer: 'a', rejection_reason: 'b' }), await post('/api/v1/auth/api_keys', { name: 'k', rate_limit_per_minute: 1 })];
    })()`);
    expect(statuses).toEqual([403, 403, 403]);
    await auditor.close();

    // A reviewer: the review form, no admin page.
    const adminLogin = await call(`${svc.url}/api/v1/auth/login`, 'POST', { email: BOOTSTRAP.LEDGER_BOOTSTRAP_EMAIL, password: BOOTSTRAP.LEDGER_BOOTSTRAP_PASSWORD });
    const reviewerEmail = `reviewer-${kind}@example.com`;
    const created = await call(`${svc.url}/api/v1/users`, 'POST', { email: reviewerEmail, role: 'reviewer', password: 'the reviewer password' }, { authorization: `Bearer ${adminLogin.json().access_token}` });
    expect(created.status, created.body).toBe(201);
    const reviewer = await newPage();
    await signIn(reviewer, svc.url, reviewerEmail, 'the reviewer password');
    await reviewer.getByRole('heading', { name: 'Overview' }).waitFor();
    expect(await reviewer.getByRole('link', { name: 'Admin' }).count()).toBe(0);
    await reviewer.getByRole('link', { name: 'Human review' }).click();
    await reviewer.getByRole('form', { name: 'Reject a decision' }).waitFor();
    expect(cspErrors).toEqual([]);
    await reviewer.close();
  }, 120_000);

  it('a key rotated with a signed transition is trusted through the pinned key (green); entries signed with it verify', async () => {
    const page = await newPage();
    await signIn(page, svc.url, BOOTSTRAP.LEDGER_BOOTSTRAP_EMAIL, BOOTSTRAP.LEDGER_BOOTSTRAP_PASSWORD);
    await page.getByRole('link', { name: 'Pinned keys' }).click();
    await page.getByRole('button', { name: /^Pin key / }).click();
    const rotated = await call(`${svc.url}/api/v1/integrity/keys/rotate`, 'POST', {}, { authorization: `Bearer ${OPERATOR_TOKEN}` });
    expect(rotated.status, rotated.body).toBe(200);
    const newKey = rotated.json().new_key_id as string;
    const after = await call(`${svc.url}/api/v1/logs`, 'POST', { event_type: 'tool.called', data: { tool: 'after-rotation' } }, { 'x-api-key': key });
    expect(after.status, after.body).toBe(200);
    const seq = after.json().seq as number;
    await vi.waitFor(async () => expect((await call(`${svc.url}/api/v1/integrity/checkpoint`, 'GET', undefined, { 'x-api-key': key })).json().tree_size).toBeGreaterThan(seq), { timeout: 10_000, interval: 50 });
    await page.reload();
    const row = page.getByRole('row', { name: new RegExp(newKey) });
    await expect.poll(() => row.textContent()).toContain('Trusted: endorsed by');
    await shot(page, 'keys-rotated');
    await page.goto(`${svc.url}/console/#/logs/${after.json().log_id}`);
    await page.getByRole('button', { name: 'Verify in this browser' }).click();
    const badge = page.getByTestId('verify-badge');
    await expect.poll(() => badge.textContent()).toContain('Verified in this browser');
    expect(await badge.textContent()).toContain(`key ${newKey} (endorsed by`);
    expect(cspErrors).toEqual([]);
    await page.close();
  }, 120_000);

  it("an entry the agent signed itself says so, checked in the page against the agent key register", async () => {
    const login = await call(`${svc.url}/api/v1/auth/login`, 'POST', { email: BOOTSTRAP.LEDGER_BOOTSTRAP_EMAIL, password: BOOTSTRAP.LEDGER_BOOTSTRAP_PASSWORD });
    const signer = await agentSigner('equities-trader', generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
    const me = (await call(`${svc.url}/api/v1/auth/me`, 'GET', undefined, { authorization: `Bearer ${login.json().access_token}` })).json();
    const registered = await call(`${svc.url}/api/v1/agent-keys`, 'POST', await agentKeyRegistration(signer, me.company_id), { authorization: `Bearer ${login.json().access_token}` });
    expect(registered.status, registered.body).toBe(201);
    const sent = await call(`${svc.url}/api/v1/logs`, 'POST', await signAgentEvent({ event_type: 'action.executed', data: { action: 'cancel_order', order_id: 'ord-55120' } }, signer), { 'x-api-key': key });
    expect(sent.status, sent.body).toBe(200);
    const page = await newPage();
    await signIn(page, svc.url, BOOTSTRAP.LEDGER_BOOTSTRAP_EMAIL, BOOTSTRAP.LEDGER_BOOTSTRAP_PASSWORD);
    await page.goto(`${svc.url}/console/#/logs/${sent.json().log_id}`);
    const line = page.getByTestId('agent-signature');
    await expect.poll(() => line.textContent()).toContain(`Signed by the agent itself: equities-trader, with its key ${signer.keyId}`);
    await shot(page, 'agent-signed-entry');
    await page.close();
  }, 120_000);

  it('pages through the logs 100 at a time with the cursor in the URL, never holding more than a page', async () => {
    for (let b = 0; b < 3; b++) {
      const r = await call(`${svc.url}/api/v1/logs/batch`, 'POST', { logs: Array.from({ length: 100 }, (_, i) => ({ event_type: 'tool.called', data: { b, i } })) }, { 'x-api-key': key });
      expect(r.status, r.body).toBe(200);
    }
    const page = await newPage();
    await signIn(page, svc.url, BOOTSTRAP.LEDGER_BOOTSTRAP_EMAIL, BOOTSTRAP.LEDGER_BOOTSTRAP_PASSWORD);
    await page.getByRole('link', { name: 'Logs', exact: true }).click();
    const rows = page.getByRole('table', { name: 'Ledger entries' }).locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(100);
    const firstSeq = async () => Number(await rows.first().locator('td').first().textContent());
    const newest = await firstSeq();
    await page.getByRole('button', { name: 'Older' }).click();
    await expect.poll(firstSeq).toBe(newest - 100);
    expect(page.url()).toContain('page=');
    expect(await rows.count()).toBe(100);
    await page.getByRole('button', { name: 'Newest' }).click();
    await expect.poll(firstSeq).toBe(newest);
    expect(await axe(page)).toEqual([]);
    await page.close();
  }, 120_000);

  it('a console page cannot be framed and loads nothing from elsewhere (security headers)', async () => {
    const res = await call(`${svc.url}/console/`, 'GET');
    expect(res.status).toBe(200);
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    // An API client asking for JSON at / still gets the index.
    expect((await call(`${svc.url}/`, 'GET')).json()).toMatchObject({ name: 'audit-ledger', docs: '/api/v1/docs' });
    // Source maps map to file and line but carry no source (sourcesContent).
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(String(res.body))?.[1] as string;
    expect(script).toBeDefined();
    const map = (await call(`${svc.url}${script}.map`, 'GET')).json();
    expect(map.mappings.length).toBeGreaterThan(0);
    expect((map.sourcesContent ?? []).filter((c: string | null) => c !== null)).toEqual([]);
    // A path that climbs out of /console is refused with the code of its status (403 forbidden).
    const climbed = await getRawPath(svc.url, '/console/../x');
    expect([climbed.status, JSON.parse(climbed.body).code]).toEqual([403, 'forbidden']);
  });
});

describe('the console in Chromium: a signing key replaced without a signed transition', () => {
  it('is a red alert on the pinning page, and entries signed with it fail verification in the page (SQLite)', async () => {
    requireBrowserAndConsole();
    const db = await createTestDatabase('sqlite');
    const port = await freePort();
    const env = { LEDGER_DATA_DIR: db.dataDir, ...BOOTSTRAP, PORT: String(port), CHECKPOINT_INTERVAL_MS: '100' };
    let svc = await startService(env);
    const browser = await launchChromium();
    try {
      const key = await bootstrapKey(svc.url);
      const page = await browser.newPage();
      await signIn(page, svc.url, BOOTSTRAP.LEDGER_BOOTSTRAP_EMAIL, BOOTSTRAP.LEDGER_BOOTSTRAP_PASSWORD);
      await page.getByRole('link', { name: 'Pinned keys' }).click();
      await page.getByRole('button', { name: /^Pin key / }).click();
      // The operator swaps the key file and restarts: the new key becomes active with no transition.
      expect(await svc.stop()).toBe(0);
      const { privateKey } = generateKeyPairSync('ed25519');
      fs.writeFileSync(path.join(db.dataDir, 'signing-key.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
      svc = await startService(env);
      const after = await call(`${svc.url}/api/v1/logs`, 'POST', { event_type: 'tool.called', data: { tool: 'after-swap' } }, { 'x-api-key': key });
      expect(after.status, after.body).toBe(200);
      await vi.waitFor(async () => expect((await call(`${svc.url}/api/v1/integrity/checkpoint`, 'GET', undefined, { 'x-api-key': key })).json().tree_size).toBeGreaterThan(after.json().seq), { timeout: 10_000, interval: 50 });
      // Same origin (same port): the pins are still in this browser, and the session in the database.
      await page.goto('about:blank'); // a full load, not a hash change of the page already open
      await page.goto(`${svc.url}/console/#/keys`);
      await page.getByText('Not trusted: no signed transition from a key you pinned').waitFor();
      await page.screenshot({ path: path.join(SHOTS, 'sqlite-keys-replaced.png'), fullPage: true });
      await page.goto(`${svc.url}/console/#/logs/${after.json().log_id}`);
      await page.getByRole('button', { name: 'Verify in this browser' }).click();
      const badge = page.getByTestId('verify-badge');
      await expect.poll(() => badge.textContent()).toContain('Verification FAILED');
      expect(await badge.textContent()).toContain('is not one of the pinned keys');
    } finally {
      await browser.close();
      killLeftovers();
      await db.drop();
    }
  }, 120_000);
});
