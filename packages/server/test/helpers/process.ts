// Runs the real CLI as a child process: the built one (bin/audit-ledger.js, dist/src), which the
// suites' global setup has just built from the sources (a digest check when nothing changed).
// Through tsx it took about 0.4 s longer to start, each time (docs/performance.md, "Start to ready").
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';

const ROOT = path.join(import.meta.dirname, '..', '..');
const CLI = path.join(ROOT, 'bin', 'audit-ledger.js');

/** Every CLI process a test file started and that has not exited: killed when the file ends (setup.ts), whatever failed. */
const spawned = new Set<ChildProcessWithoutNullStreams>();

export function spawnCli(args: string[], env: Record<string, string>): ChildProcessWithoutNullStreams {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(DATABASE_URL|REDIS_URL|LEDGER_|TLS_|PORT|HOST)/.test(k)));
  const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: { ...base, LOG_LEVEL: 'info', ...env }, stdio: 'pipe' });
  spawned.add(child);
  child.on('exit', () => spawned.delete(child));
  return child;
}

/** Kills every CLI process this file started that still runs (a failed test never leaves one behind, as it did). */
export function killSpawned(): void {
  for (const c of spawned) c.kill('SIGKILL');
  spawned.clear();
}

/** Runs to completion; returns exit code and output. */
export async function runCli(args: string[], env: Record<string, string>, stdin?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnCli(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  child.stdin.end(stdin ?? '');
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stdout, stderr };
}

/** Collects a child's JSON log lines and waits for one that matches, however early it came. */
export class LogWatcher {
  readonly lines: Array<Record<string, unknown>> = [];
  private waiters: Array<{ from: number; match: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void; reject: (e: Error) => void }> = [];
  private stderr = '';
  private exitCode: number | null | undefined;

  constructor(child: ChildProcessWithoutNullStreams) {
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      let obj: Record<string, unknown>;
      try {
        obj = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return; // not a JSON line
      }
      this.lines.push(obj);
      this.waiters = this.waiters.filter((w) => {
        if (this.lines.length - 1 >= w.from && w.match(obj)) {
          w.resolve(obj);
          return false;
        }
        return true;
      });
    });
    child.stderr.on('data', (d) => (this.stderr += d));
    child.on('exit', (code) => {
      this.exitCode = code;
      // Whoever still waits would wait forever: tell them why.
      for (const w of this.waiters.splice(0)) w.reject(this.failure(`process exited (${code})`));
    });
  }

  private failure(what: string): Error {
    const last = this.lines.slice(-5).map((l) => JSON.stringify(l)).join('\n');
    return new Error(`${what}; stderr: ${this.stderr.slice(-2000)}\nlast log lines:\n${last}`);
  }

  /** The first line at index >= from that matches. Rejects if the process exits first, or after `timeoutMs` with what it logged. */
  waitFor(match: (l: Record<string, unknown>) => boolean, from = 0, timeoutMs = 90_000): Promise<Record<string, unknown>> {
    const found = this.lines.slice(from).find(match);
    if (found) return Promise.resolve(found);
    if (this.exitCode !== undefined) return Promise.reject(this.failure(`process exited (${this.exitCode})`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(this.failure(`no matching log line within ${timeoutMs} ms`));
      }, timeoutMs);
      const waiter = { from, match, resolve: (l: Record<string, unknown>) => (clearTimeout(timer), resolve(l)), reject: (e: Error) => (clearTimeout(timer), reject(e)) };
      this.waiters.push(waiter);
    });
  }
}

/** A port nothing listens on now (one definition, with the Citus cluster maker). */
export { freePort } from '../../bench/citus-cluster.js';
