// One vitest run over every package. Workspace packages resolve to their TypeScript source
// (the "@audit-ledger/source" export condition), so tests never run stale builds.
// The core's suite runs twice: with the Node crypto implementation, and with '#crypto' aliased to
// the pure-JS one browsers get, so the published vectors hold for both.
import path from 'node:path';
import { defaultClientConditions, defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

const SOURCE_CONDITION = '@audit-ledger/source';
const root = import.meta.dirname;
const resolve = { conditions: [SOURCE_CONDITION, ...defaultClientConditions] };
// Tests run in Node, and vitest hands these conditions to its worker processes (--conditions): so
// never "module", the bundlers' condition, with which Node would load packages' bundler builds
// (older OpenTelemetry packages, which Traceloop's SDK depends on, point "module" at builds whose
// relative imports have no extension, which Node cannot load). As the service runs: plain Node.
const ssr = { resolve: { conditions: [SOURCE_CONDITION, ...defaultServerConditions].filter((c) => c !== 'module') } };

// The server's tests come in three tiers (docs/architecture.md, "Tests"): `service` drives the
// service in process over HTTP (inject or a socket) against real stores; `process` starts
// programs (the service, the CLI, a PostgreSQL cluster, rsyslog, a TSA, npm pack) and waits on
// them; `browser` drives Chromium. `npm test` runs core and service; `npm run test:all`, which CI
// runs, all of them.
/** The server's test files that drive Chromium. */
const BROWSER = ['test/console.test.ts', 'test/console-governance.test.ts', 'test/console-workspace.test.ts', 'test/sso.test.ts'];
/** The server's test files that start and stop programs: services, CLIs, clusters, daemons, package installs. */
const PROCESS = [
  'test/fault/**/*.test.ts',
  'test/backup-restore.test.ts',
  'test/restore-attacks.test.ts',
  'test/process.test.ts',
  'test/monitor.test.ts',
  'test/migrations.test.ts',
  'test/witness.test.ts',
  'test/operations-doc.test.ts',
  'test/release.test.ts',
  'test/packages.test.ts',
  'test/multiprocess.test.ts',
  'test/pkcs11.test.ts',
  'test/tsa.test.ts',
  'test/container.test.ts',
  'test/readme.test.ts',
  'test/first-hour.test.ts',
  'test/sdk-spool.test.ts',
];
/**
 * The suites that also run on Citus (issue 45): the `citus` project runs them again with
 * AUDIT_LEDGER_TEST_STORES=citus, each on a database of its own on one cluster of a coordinator
 * and two workers that its global setup makes (helpers/citus-setup.ts).
 */
const CITUS_ONLY = ['test/citus-cluster.test.ts', 'test/citus-faults.test.ts'];
const CITUS = [
  ...CITUS_ONLY,
  'test/fault/crash.test.ts',
  'test/fault/retention-crash.test.ts',
  'test/backup-restore.test.ts',
  'test/restore-attacks.test.ts',
  'test/store.test.ts',
  'test/ledger.test.ts',
  'test/governance.test.ts',
  'test/separation-of-duties.test.ts',
  'test/compliance.test.ts',
  'test/search-after-commit.test.ts',
  'test/webhooks.test.ts',
  'test/streams.test.ts',
  'test/integrity.test.ts',
  'test/key-rotation.test.ts',
  'test/continuity.test.ts',
  'test/security.test.ts',
  'test/search.test.ts',
  'test/otlp.test.ts',
  'test/traces.test.ts',
  'test/agent-signatures.test.ts',
  'test/token-sweep.test.ts',
  'test/tree-prune.test.ts',
  'test/users.test.ts',
  'test/api-keys.test.ts',
  'test/tamper.test.ts',
  'test/verifiable-log.test.ts',
  'test/evidence.test.ts',
  'test/reports.test.ts',
  'test/time-bounds.test.ts',
  'test/admin-trail.test.ts',
  'test/guarded.test.ts',
];
const SERVER = {
  root: path.join(root, 'packages/server'),
  globalSetup: ['test/helpers/global-setup.ts'],
  setupFiles: ['test/helpers/setup.ts'],
  // Each file gets its own SQLite dir and PostgreSQL database, so files run in parallel.
  pool: 'forks' as const,
  testTimeout: 30_000,
  hookTimeout: 60_000,
  // expect.poll waits for what a page or a background worker will show; its default (1 s) is
  // shorter than a console page's first load on a busy 2-core CI host (a decision register that
  // rendered its header and not yet its rows failed there). A poll still fails on a wrong value,
  // only later.
  expect: { poll: { timeout: 10_000 } },
};

export default defineConfig({
  resolve,
  ssr,
  test: {
    // Two test files at a time. The default (one fewer than the cores) is one on a 2-core machine,
    // and most files wait on child processes, PostgreSQL and Chromium rather than the CPU.
    maxWorkers: 2,
    minWorkers: 1,
    projects: [
      {
        resolve,
        ssr,
        test: { name: 'core', root: path.join(root, 'packages/core'), include: ['test/**/*.test.ts'] },
      },
      {
        resolve: { ...resolve, alias: [{ find: /^#crypto$/, replacement: path.join(root, 'packages/core/src/crypto/browser.ts') }] },
        ssr,
        test: { name: 'core-browser-crypto', root: path.join(root, 'packages/core'), include: ['test/**/*.test.ts'], env: { AUDIT_LEDGER_CRYPTO: 'browser' } },
      },
      {
        resolve,
        ssr,
        test: { ...SERVER, name: 'service', include: ['test/**/*.test.ts'], exclude: [...BROWSER, ...PROCESS, ...CITUS_ONLY, '**/node_modules/**'] },
      },
      {
        resolve,
        ssr,
        // Its tests wait on programs they start (services, CLIs, clusters): on two busy CI cores a
        // start takes several times what it takes here, so a test gets 120 s, not 30 s.
        test: { ...SERVER, name: 'process', include: PROCESS, testTimeout: 120_000 },
      },
      {
        resolve,
        ssr,
        test: {
          ...SERVER,
          name: 'citus',
          include: CITUS,
          globalSetup: [...SERVER.globalSetup, 'test/helpers/citus-setup.ts'],
          env: { AUDIT_LEDGER_TEST_STORES: 'citus' },
          testTimeout: 120_000,
        },
      },
      // Chromium against a spawned service: run on its own, after the rest (a vitest run of its
      // own in scripts/test.mjs), so no other file competes with the browser for the two cores.
      {
        resolve,
        ssr,
        test: { ...SERVER, name: 'browser', include: BROWSER },
      },
    ],
  },
});
