// The console's build: Vite (already the project's bundler, under Vitest) with Preact's JSX.
// Served by the service at /console (packages/server/src/console.ts); the source packages are
// resolved from their TypeScript (the @audit-ledger/source condition) and the core's browser
// crypto (@noble) is picked by the default (non-node) import condition.
import { defineConfig } from 'vite';

export default defineConfig({
  root: import.meta.dirname,
  base: '/console/',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  resolve: { conditions: ['@audit-ledger/source', 'browser', 'module', 'import', 'default'] },
  // Source maps map stack traces to file and line, without the source itself (sourcesContent):
  // the service serves them publicly, and 374 KB of source is nobody's business but ours.
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true, target: 'es2022', reportCompressedSize: true, rollupOptions: { output: { sourcemapExcludeSources: true } } },
});
