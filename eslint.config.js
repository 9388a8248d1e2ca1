import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // Generated: build outputs beside the sources (packages/sdk/src/api-types.ts, by scripts/api-types.mjs).
  { ignores: ['**/dist/**', '**/node_modules/**', 'data/**', 'coverage/**', 'packages/sdk/src/api-types.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': ['error', { allow: ['error', 'warn'] }],
    },
  },
  // A cast to never silences every type difference at once: derive the types instead (issue 43).
  // The one body no response schema types is let through by http/raw-body.ts.
  {
    files: ['packages/*/src/**/*.ts', 'packages/*/src/**/*.tsx'],
    rules: { 'no-restricted-syntax': ['error', { selector: 'TSAsExpression > TSNeverKeyword', message: 'No `as never` in src: make the types agree (Static<> of the route schema, or a precise view type).' }] },
  },
  { files: ['**/*.cjs'], languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } } },
  { files: ['packages/server/src/cli.ts', 'packages/server/src/commands/operations.ts', 'packages/*/bench/**', 'packages/*/test/**', 'packages/*/scripts/**'], rules: { 'no-console': 'off' } },
  // Plain JavaScript run by Node before anything is built: the build script and the launchers.
  { files: ['scripts/**/*.mjs', 'packages/*/bin/**/*.js'], languageOptions: { globals: { process: 'readonly', console: 'readonly' } }, rules: { 'no-console': 'off' } },
  // The core is pure and runs in browsers: no Node built-in, no Node global, nothing of the server
  // or its storage. Its one way out is the '#crypto' seam (crypto/node.ts may use node:crypto).
  {
    files: ['packages/core/src/**/*.ts'],
    ignores: ['packages/core/src/crypto/node.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*'], message: 'The core runs in browsers: reach crypto through #crypto, and leave I/O to the caller.' },
            { regex: '^(fs|path|crypto|os|buffer|stream|worker_threads|util)(/.*)?$', message: 'The core runs in browsers: no Node built-ins.' },
            { group: ['audit-ledger', 'audit-ledger/*', '**/server/**', 'kysely', 'pg', 'better-sqlite3', 'ioredis', 'fastify'], message: 'The core never imports the server or storage, not even its types.' },
          ],
        },
      ],
      'no-restricted-globals': ['error', { name: 'Buffer', message: 'Use Uint8Array and the #crypto byte helpers.' }, { name: 'process', message: 'The core reads no environment.' }],
    },
  },
  // Dependencies point inwards: a route never imports another route or the composition root.
  {
    files: ['packages/server/src/routes/**/*.ts'],
    ignores: ['packages/server/src/routes/index.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['./*', '!./index.js'], message: 'A route never imports another route: shared schemas go in http/, auth rules in auth/, logic in a service.' },
            { group: ['../app.js', '../services.js', '../server.js'], allowTypeImports: true, message: 'Routes receive their services; they never import the composition root.' },
          ],
        },
      ],
    },
  },
);
