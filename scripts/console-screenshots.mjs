#!/usr/bin/env node
// Copies the console screenshots the browser tests took (test-results/console/, written by
// packages/server/test/console*.test.ts) that docs/console.md shows into docs/img/console/. Run
// after `npm run test:all` (or the browser tier alone) when a page changed: `npm run docs:screenshots`.
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const from = path.join(root, 'test-results', 'console');
const to = path.join(root, 'docs', 'img', 'console');
// The screenshot each page of docs/console.md shows, as the tests name them.
const SHOWN = {
  'overview.png': 'workspace-overview.png',
  'logs.png': 'sqlite-logs.png',
  'entry-verified.png': 'sqlite-entry-verified.png',
  'entry-tampered.png': 'sqlite-entry-tampered.png',
  'traces.png': 'sqlite-traces.png',
  'replay.png': 'sqlite-replay.png',
  'long-graph.png': 'workspace-long-graph.png',
  'integrity.png': 'sqlite-integrity.png',
  'evidence.png': 'sqlite-evidence.png',
  'approvals.png': 'governance-approve-confirm.png',
  'incident.png': 'governance-incident.png',
  'decision.png': 'governance-decision.png',
  'reviews.png': 'sqlite-reviews.png',
  'policy-diff.png': 'governance-policy-diff.png',
  'compliance.png': 'workspace-compliance.png',
  'admin.png': 'sqlite-admin.png',
  'streams.png': 'workspace-streams.png',
  'keys.png': 'sqlite-keys.png',
  'phone-375.png': 'workspace-375.png',
  'sign-in.png': 'sqlite-sign-in.png',
};
fs.mkdirSync(to, { recursive: true });
const missing = Object.values(SHOWN).filter((f) => !fs.existsSync(path.join(from, f)));
if (missing.length > 0) {
  console.error(`no screenshot ${missing.join(', ')} in ${from}: run the browser tests first (npm run test:all, or npx vitest run --project browser)`);
  process.exit(1);
}
for (const [name, file] of Object.entries(SHOWN)) fs.copyFileSync(path.join(from, file), path.join(to, name));
console.log(`copied ${Object.keys(SHOWN).length} screenshots to ${path.relative(root, to)}`);
