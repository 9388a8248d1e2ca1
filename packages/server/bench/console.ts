// Bench part for the console's budgets (issue 16): the JavaScript it ships (gzipped, from the
// built files), the first meaningful paint of the logs page (navigation start to the first table
// rows, in Chromium against the local service), and in-browser verification of one entry and of
// a 1,000-event trace (the time the page reports for its own checks). Needs the console built
// (npm run build) and Debian's Chromium.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { chromium } from 'playwright-core';
import { createUser } from '../src/users/accounts.js';
import { buildApp } from '../src/app.js';
import { consoleDir } from '../src/console.js';
import { loadConfig } from '../src/kernel/config.js';
import { MemoryCounterStore } from '../src/ratelimit/counter.js';
import { openSqliteStore } from '../src/store/sqlite.js';
import { scratchDir } from './scratch.js';

export interface ConsoleBudgets {
  initialJsGzipKb: number;
  replayChunkGzipKb: number;
  logsFirstPaintMs: number[];
  /** The overview (the page after sign-in) with its charts drawn, from a full load. */
  overviewFirstPaintMs: number[];
  verifyEntryMs: number[];
  verifyTraceMs: number[];
  traceEvents: number;
  /** Entries in the ledger when the logs page was measured. */
  ledgerEntries: number;
  /** Clicking "Older" until the next page's rows are shown. */
  nextPageMs: number[];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

export function consoleLine(b: ConsoleBudgets): string {
  return `initial JS ${b.initialJsGzipKb.toFixed(1)} KB gzipped (+${b.replayChunkGzipKb.toFixed(1)} KB on the replay page); on a ${b.ledgerEntries.toLocaleString('en-US')}-entry ledger: overview first paint median ${median(b.overviewFirstPaintMs).toFixed(0)} ms, logs first paint median ${median(b.logsFirstPaintMs).toFixed(0)} ms, next page median ${median(b.nextPageMs).toFixed(0)} ms; verify one entry median ${median(b.verifyEntryMs).toFixed(0)} ms; verify a ${b.traceEvents}-event trace median ${median(b.verifyTraceMs).toFixed(0)} ms`;
}

export async function consoleBudgets(): Promise<ConsoleBudgets> {
  const dist = consoleDir();
  const assets = fs.readdirSync(path.join(dist, 'assets'));
  const gz = (f: string) => zlib.gzipSync(fs.readFileSync(path.join(dist, 'assets', f))).length / 1024;
  const initialJsGzipKb = assets.filter((f) => /^index-.*\.js$/.test(f)).reduce((s, f) => s + gz(f), 0);
  const replayChunkGzipKb = assets.filter((f) => /^graph-.*\.js$/.test(f)).reduce((s, f) => s + gz(f), 0);

  const dir = scratchDir('al-bench-console-');
  const store = openSqliteStore(path.join(dir, 'ledger.db'));
  await store.migrate();
  const config = { ...loadConfig({ LOG_LEVEL: 'silent', CHECKPOINT_INTERVAL_MS: '0', HOST: '127.0.0.1', PORT: '0' }), dataDir: dir, databaseUrl: undefined };
  const app = await buildApp({ config, store, counters: new MemoryCounterStore(), logger: false });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const email = 'bench@example.com';
    const password = 'bench password 123';
    await createUser(store, { company: 'bench', email, password });
    const token = (await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password } })).json().access_token;
    const key = (await app.inject({ method: 'POST', url: '/api/v1/auth/api_keys', headers: { authorization: `Bearer ${token}` }, payload: { name: 'bench', rate_limit_per_minute: 1_000_000 } })).json().key;
    const traceId = randomUUID();
    const traceEvents = 1000;
    const logs = Array.from({ length: traceEvents }, (_, i) => ({ event_type: i % 2 ? 'tool.called' : 'llm.call', trace_id: traceId, agent_id: 'bench-agent', data: { i, tool: 'search', model: 'gpt-4.1' } }));
    const ingested = await app.inject({ method: 'POST', url: '/api/v1/logs/batch', headers: { 'x-api-key': key }, payload: { logs } });
    const firstLog = ingested.json().log_ids[0] as string;
    // Fill the ledger to 100,000 entries, so the logs page is measured where it must stay smooth.
    const ledgerEntries = 100_000;
    for (let b = 0; b < (ledgerEntries - traceEvents) / 1000; b++) {
      const batch = Array.from({ length: 1000 }, (_, i) => ({ event_type: 'tool.called', agent_id: `agent-${b % 7}`, data: { b, i, tool: 'search' } }));
      const r = await app.inject({ method: 'POST', url: '/api/v1/logs/batch', headers: { 'x-api-key': key }, payload: { logs: batch } });
      if (r.statusCode !== 200) throw new Error(`bench ingest: ${r.statusCode} ${r.body}`);
    }
    const session = (await app.inject({ method: 'POST', url: '/api/v1/forensics/replays', headers: { 'x-api-key': key }, payload: { trace_id: traceId, metadata: {} } })).json().id;

    const page = await browser.newPage({ viewport: { width: 1366, height: 800 } });
    await page.goto(`${url}/console/`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    const keys = (await app.inject({ method: 'GET', url: '/api/v1/integrity/keys' })).json().items as Array<{ key_id: string; public_key: string }>;
    await page.evaluate((k) => localStorage.setItem('audit-ledger.pinned-keys', JSON.stringify(k.map((x) => ({ key_id: x.key_id, public_key: x.public_key, pinned_at: new Date().toISOString() })))), keys);

    const overviewFirstPaintMs: number[] = [];
    for (let i = 0; i < 5; i++) {
      await page.goto('about:blank');
      await page.goto(`${url}/console/#/`);
      await page.getByTestId('entries-per-agent').waitFor();
      await page.getByTestId('events-per-day').locator('canvas').waitFor(); // uPlot drawn (its chunk loaded)
      overviewFirstPaintMs.push(await page.evaluate(() => performance.now()));
    }
    const logsFirstPaintMs: number[] = [];
    for (let i = 0; i < 5; i++) {
      // A full load each time (a hash-only change would keep the first load's time origin).
      await page.goto('about:blank');
      await page.goto(`${url}/console/#/logs`);
      await page.getByRole('table', { name: 'Ledger entries' }).locator('tbody tr').first().waitFor();
      logsFirstPaintMs.push(await page.evaluate(() => performance.now()));
    }
    const nextPageMs: number[] = [];
    for (let i = 0; i < 5; i++) {
      const firstCell = page.getByRole('table', { name: 'Ledger entries' }).locator('tbody tr').first().locator('td').first();
      const before = await firstCell.textContent();
      const t0 = Date.now();
      await page.getByRole('button', { name: 'Older' }).click();
      // Polled from outside: the page's CSP (rightly) refuses the string evaluation waitForFunction would use.
      while ((await firstCell.textContent()) === before) await new Promise((r) => setTimeout(r, 5));
      nextPageMs.push(Date.now() - t0);
    }
    const badgeMs = async (button: string, scope?: string) => {
      await page.getByRole('button', { name: button }).click();
      const badge = (scope ? page.getByRole('region', { name: scope }) : page).getByTestId('verify-badge');
      await badge.waitFor();
      const text = (await badge.textContent()) ?? '';
      if (!text.includes('Verified in this browser')) throw new Error(`verification failed in the bench: ${text}`);
      return Number(/\((\d+) ms\)/.exec(text)?.[1]);
    };
    const verifyEntryMs: number[] = [];
    for (let i = 0; i < 5; i++) {
      await page.goto(`${url}/console/#/logs/${firstLog}?r=${i}`);
      verifyEntryMs.push(await badgeMs('Verify in this browser'));
    }
    const verifyTraceMs: number[] = [];
    for (let i = 0; i < 3; i++) {
      // A full load: the page keeps a trace's verdict while it lives, and each run must check anew.
      await page.goto('about:blank');
      await page.goto(`${url}/console/#/replays/${session}?r=${i}`);
      await page.getByTestId('root-cause').waitFor();
      verifyTraceMs.push(await badgeMs('Verify this trace in the browser', 'Trace verification'));
    }
    return { initialJsGzipKb, replayChunkGzipKb, overviewFirstPaintMs, logsFirstPaintMs, verifyEntryMs, verifyTraceMs, traceEvents, ledgerEntries, nextPageMs };
  } finally {
    await browser.close();
    await app.close();
    await store.close();
  }
}
