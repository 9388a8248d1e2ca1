// Shared by the fault suites: the real service as a child process, plain HTTP against it, and
// the sizes of a run (small in `npm run test:all`, long in `npm run chaos`, which sets CHAOS=1).
import type { ChildProcess } from 'node:child_process';
import { expect, vi } from 'vitest';
import { call } from '../helpers/http.js';
import { LogWatcher, spawnCli } from '../helpers/process.js';

export const CHAOS = process.env.CHAOS === '1';
/** A size for `npm run test:all` and one for `npm run chaos`. */
export const scale = (ci: number, chaos: number): number => (CHAOS ? chaos : ci);

export { type Answer, call } from '../helpers/http.js';

export interface Service {
  url: string;
  pid: number;
  /** SIGKILL: no shutdown of any kind. */
  kill9(): Promise<void>;
  /** SIGTERM, and the exit code. */
  stop(): Promise<number | null>;
  logs: LogWatcher;
}

/** Services still running: killed after each suite (afterAll(killLeftovers)), so a failed assertion leaves no process behind. */
const live = new Set<ChildProcess>();
export function killLeftovers(): void {
  for (const c of live) c.kill('SIGKILL');
  live.clear();
}

export async function startService(env: Record<string, string>): Promise<Service> {
  const child = spawnCli(['serve'], { PORT: '0', ...env });
  live.add(child);
  child.on('exit', () => live.delete(child));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const logs = new LogWatcher(child);
  const url = String((await logs.waitFor((l) => l.msg === 'audit-ledger listening')).url);
  return {
    url,
    pid: child.pid as number,
    logs,
    kill9: async () => {
      child.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

export const BOOTSTRAP = { LEDGER_BOOTSTRAP_EMAIL: 'fault@example.com', LEDGER_BOOTSTRAP_PASSWORD: 'fault suite password' };

/** Logs in as the bootstrap admin and creates the company's API key. */
export async function bootstrapKey(url: string): Promise<string> {
  const login = await call(`${url}/api/v1/auth/login`, 'POST', { email: BOOTSTRAP.LEDGER_BOOTSTRAP_EMAIL, password: BOOTSTRAP.LEDGER_BOOTSTRAP_PASSWORD });
  expect(login.status, login.body).toBe(200);
  const key = await call(`${url}/api/v1/auth/api_keys`, 'POST', { name: 'fault', rate_limit_per_minute: 1_000_000 }, { authorization: `Bearer ${login.json().access_token}` });
  expect(key.status, key.body).toBe(201);
  return key.json().key as string;
}

/** Runs a full verification (entry signatures included) and returns its report. */
export async function fullVerification(url: string, key: string, logs?: LogWatcher): Promise<{ violation_count: number; entries_checked: number; chain_status: string }> {
  const started = await call(`${url}/api/v1/integrity/verify`, 'POST', { entry_signatures: true }, { 'x-api-key': key });
  expect(started.status, started.body).toBe(202);
  let job = started.json();
  const jobId = job.job_id as string;
  await vi.waitFor(
    async () => {
      const res = await call(`${url}/api/v1/integrity/jobs/${jobId}`, 'GET', undefined, { 'x-api-key': key });
      // A failed poll says why: the answer, and the service's error lines.
      const errors = (logs?.lines ?? []).filter((l) => Number(l.level) >= 50).slice(-3).map((l) => JSON.stringify(l));
      expect(res.status, `${res.body}\n${errors.join('\n')}`).toBe(200);
      job = res.json();
      expect(job.status).toBe('completed');
    },
    { timeout: 120_000, interval: 100 },
  );
  return job.report;
}

/** A deterministic pseudo-random sequence (a run can be repeated from its seed). */
export function random(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}
