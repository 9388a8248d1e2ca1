// Worker threads run compiled modules, typed and linted like the rest (never JavaScript in a
// string). Built, a module's worker is the `.js` beside it in dist. Run from the sources (the test
// runner, `--import tsx`), it is still the built `.js`, in dist/src: a worker thread does not load
// TypeScript on every Node we support (tsx's hooks do not reach a worker on Node 22.14), so the
// test suite's global setup builds first (scripts/build.mjs, a digest check when nothing changed),
// and the worker is started without the source condition and loader of its parent.
import { Worker, type WorkerOptions } from 'node:worker_threads';

const SOURCE_CONDITION = '@audit-ledger/source';

/** The parent's flags without the source condition and the tsx loader (set when running from the sources). */
function withoutSourceFlags(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    const next = argv[i + 1];
    if ((a === '-C' || a === '--conditions') && next === SOURCE_CONDITION) i++;
    else if (a === '--import' && next !== undefined && /(^|[/\\])tsx([/\\]|$)|^tsx$/.test(next)) i++;
    else if (a !== `--conditions=${SOURCE_CONDITION}` && a !== `-C=${SOURCE_CONDITION}` && !/^--import=.*\btsx\b/.test(a)) out.push(a);
  }
  return out;
}

/** Starts the worker module `name` (a file name without extension) that sits beside `moduleUrl` (the caller's import.meta.url). */
export function startWorker(moduleUrl: string, name: string, options: WorkerOptions = {}): Worker {
  if (!moduleUrl.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, moduleUrl), options);
  const built = new URL(`./${name}.js`, moduleUrl.replace(/\/packages\/server\/src\//, '/packages/server/dist/src/'));
  return new Worker(built, { ...options, execArgv: withoutSourceFlags(options.execArgv ?? process.execArgv) });
}
