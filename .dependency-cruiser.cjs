// Architecture rules checked in CI (npm run deps, part of npm test). See docs/architecture.md.
/** The server's kernel: leaf modules every layer may use (kernel/: errors, time, files, configuration, event names, worker threads, who acts, and shapes.ts: the API's data shapes, TypeBox only, from which service results are typed; crypto/: signing and password hashing). */
const KERNEL = '^packages/server/src/kernel/|^packages/server/src/crypto/';
/**
 * The service floors, bottom up (docs/architecture.md): a folder imports only folders to its left
 * (types included), so no arrow points up and no folders form a loop. A new folder takes its place
 * here; routes and the composition root stand above them all.
 */
const FLOORS = ['kernel', 'crypto', 'pdf', 'egress', 'http', 'store', 'ledger', 'ratelimit', 'ops', 'ingestion', 'users', 'auth', 'agents', 'exports', 'webhooks', 'integrity', 'compliance', 'governance', 'hitl', 'entries', 'forensics', 'streams', 'otlp', 'continuity', 'witness', 'programs', 'commands'];
const floorRules = FLOORS.slice(0, -1).map((folder, i) => ({
  name: `floor-${folder}`,
  severity: 'error',
  comment: `${folder}/ stands on floor ${i}: it imports no folder above it (${FLOORS.slice(i + 1).join(', ')}), nor a route or the root.`,
  from: { path: `^packages/server/src/${folder}/` },
  to: { path: `^packages/server/src/(${FLOORS.slice(i + 1).join('|')})/` },
}));
/** The composition root and the process: only the entry points import them. */
const ROOT = '^packages/server/src/(app|server|services|cli|console|logger|openapi-document)\\.ts$';
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...floorRules,
    {
      name: 'every-folder-has-a-floor',
      severity: 'error',
      comment: 'A folder of packages/server/src is on FLOORS (or is routes/): add a new one where it stands.',
      from: { path: '^packages/server/src/' },
      to: { path: `^packages/server/src/(?!(${[...FLOORS, 'routes'].join('|')})/)[^/]+/` },
    },
    { name: 'no-circular', severity: 'error', comment: 'No import cycle, types included.', from: {}, to: { circular: true } },
    {
      name: 'nothing-depends-on-the-server',
      severity: 'error',
      comment: 'Dependencies run one way: core ← (verify ← sdk ← console); the server uses the core.',
      from: { path: '^packages/(?!server/)' },
      to: { path: '^packages/server/' },
    },
    {
      name: 'core-is-pure',
      severity: 'error',
      comment: 'The core imports no Node built-in outside its crypto seam, and no storage library.',
      from: { path: '^packages/core/src/', pathNot: '^packages/core/src/crypto/node\\.ts$' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'route-to-route',
      severity: 'error',
      comment: 'A route never imports another route; shared schemas live in http/, auth rules in auth/.',
      from: { path: '^packages/server/src/routes/([^/]+)\\.ts$', pathNot: '^packages/server/src/routes/index\\.ts$' },
      to: { path: '^packages/server/src/routes/', pathNot: ['^packages/server/src/routes/$1\\.ts$'] },
    },
    {
      name: 'route-to-root',
      severity: 'error',
      comment: 'Routes receive their services from the composition root; they never import it.',
      from: { path: '^packages/server/src/routes/' },
      to: { path: '^packages/server/src/(app|services|server)\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    // The server's layers, inside out: kernel ← store ← ledger ← services (auth, compliance,
    // forensics, integrity, ingestion, otlp, webhooks, witness, …) ← http ← routes ← the root.
    {
      name: 'programs-stand-alone',
      severity: 'error',
      comment: 'The programs of their own (the witness, the monitor) run away from the service: of the server they import only the kernel, crypto, the key file loader and the webhook signature.',
      from: { path: '^packages/server/src/programs/' },
      to: { path: '^packages/server/src/', pathNot: '^packages/server/src/(programs|kernel|crypto)/|^packages/server/src/ledger/keyring\\.ts$|^packages/server/src/webhooks/signature\\.ts$' },
    },
    {
      name: 'kernel-is-a-leaf',
      severity: 'error',
      comment: 'The kernel modules import nothing of the server but each other.',
      from: { path: KERNEL },
      to: { path: '^packages/server/src/', pathNot: KERNEL },
    },
    {
      name: 'store-imports-only-store',
      severity: 'error',
      comment: 'The store (repositories, migrations, backends) imports only the core, the kernel and itself: never the ledger, a service or HTTP.',
      from: { path: '^packages/server/src/store/' },
      to: { path: '^packages/server/src/', pathNot: ['^packages/server/src/store/', KERNEL] },
    },
    {
      name: 'ledger-imports-only-store',
      severity: 'error',
      comment: 'The ledger (appends, signing, keys, checkpoints, proofs) imports only the core, the kernel, the store and itself: never HTTP, metrics or a service.',
      from: { path: '^packages/server/src/ledger/' },
      to: { path: '^packages/server/src/', pathNot: ['^packages/server/src/(ledger|store)/', KERNEL] },
    },
    {
      name: 'routes-reach-services-only',
      severity: 'error',
      comment: 'A route parses, calls one service and answers: it never reaches the store or the ledger itself, not even for types (a service re-exports the row types its answers are shaped from).',
      from: { path: '^packages/server/src/routes/' },
      to: { path: '^packages/server/src/(store|ledger)/' },
    },
    {
      name: 'nothing-below-routes-imports-them',
      severity: 'error',
      comment: 'Services and HTTP helpers never import a route or the composition root.',
      from: { path: '^packages/server/src/', pathNot: ['^packages/server/src/routes/', ROOT] },
      to: { path: ['^packages/server/src/routes/', ROOT], dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['@audit-ledger/source', 'import', 'node', 'default'] },
  },
};
