// Chromium for the console suite: Debian's chromium driven by playwright-core (never skipped: CI
// installs it), the built console, signing in through the form, axe-core's serious and critical
// violations, and where screenshots go.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CONSOLE_DIST = path.join(import.meta.dirname, '..', '..', '..', 'console', 'dist', 'index.html');
/** Screenshots for a reviewer: test-results/console/. */
export const SHOTS = path.join(import.meta.dirname, '..', '..', '..', '..', 'test-results', 'console');
const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Fails (never skips) without Chromium or the built console; makes the screenshot directory. */
export function requireBrowserAndConsole(): void {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: install Debian's chromium package (.ci/run does) or set CHROMIUM_PATH`);
  if (!fs.existsSync(CONSOLE_DIST)) throw new Error('the console is not built: run npm run build');
  fs.mkdirSync(SHOTS, { recursive: true });
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** Opens the console and signs in through its form. */
export async function signIn(page: Page, base: string, email: string, password: string): Promise<void> {
  await page.goto(`${base}/console/`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Runs axe-core in the page; returns the serious and critical violations. */
export async function axe(page: Page): Promise<string[]> {
  const result = (await page.evaluate(`${axeSource}; axe.run(document, { resultTypes: ['violations'] })`)) as { violations: Array<{ id: string; impact: string; help: string; nodes: unknown[] }> };
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.help}, ${v.nodes.length} node(s)`);
}

export { freePort } from './process.js';

/** A webhook receiver that answers 204 to everything, on loopback. */
export async function noContentReceiver(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}
