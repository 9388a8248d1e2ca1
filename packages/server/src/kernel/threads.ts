// Worker threads run compiled modules, typed and linted like the rest (never JavaScript in a
// string). Built, a module's worker is the `.js` beside it in dist; run from the sources (tests,
// `--import tsx`), it is the `.ts` beside it, loaded through tsx with the same source condition.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** Starts the worker module `name` (a file name without extension) that sits beside `moduleUrl` (the caller's import.meta.url). */
export function startWorker(moduleUrl: string, name: string, options: WorkerOptions = {}): Worker {
  const fromSource = moduleUrl.endsWith('.ts');
  const url = new URL(`./${name}.${fromSource ? 'ts' : 'js'}`, moduleUrl);
  if (!fromSource) return new Worker(url, options);
  const tsx = pathToFileURL(createRequire(moduleUrl).resolve('tsx')).href;
  return new Worker(url, { ...options, execArgv: [...(options.execArgv ?? []), '--import', tsx, '--conditions=@audit-ledger/source'] });
}
