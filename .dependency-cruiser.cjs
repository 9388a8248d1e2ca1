// Architecture rules checked in CI (npm run deps, part of npm test). See docs/architecture.md.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
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
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['@audit-ledger/source', 'import', 'node', 'default'] },
  },
};
