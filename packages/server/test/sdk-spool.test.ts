// The SDK's durable spool: an agent process that logs in a loop is killed with SIGKILL; a new
// process on the same spool sends what the first left. Every event whose log() resolved reaches
// the ledger, exactly once. (The real service, SQLite.)
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './helpers/stores.js';
import { BOOTSTRAP, bootstrapKey, killLeftovers, type Service, startService } from './fault/harness.js';

const LOGGER = path.join(import.meta.dirname, 'fixtures', 'sdk-logger.ts');

function runLogger(args: string[]): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, ['--conditions=@audit-ledger/source', '--import', 'tsx', LOGGER, ...args], { cwd: path.join(import.meta.dirname, '..'), stdio: 'pipe' });
}

describe('the SDK spool through a kill -9 of the agent', () => {
  let db: TestDatabase;
  let svc: Service;
  let key: string;
  let spool: string;
  beforeAll(async () => {
    db = await createTestDatabase('sqlite');
    svc = await startService({ LEDGER_DATA_DIR: db.dataDir, ...BOOTSTRAP, CHECKPOINT_INTERVAL_MS: '100' });
    key = await bootstrapKey(svc.url);
    spool = fs.mkdtempSync(path.join(os.tmpdir(), 'al-spool-'));
  }, 120_000);
  afterAll(async () => {
    killLeftovers();
    await db?.drop();
    if (spool) fs.rmSync(spool, { recursive: true, force: true });
  });

  const stored = async (trace: string): Promise<number[]> => {
    const out: number[] = [];
    for (let cursor: string | null = null, first = true; first || cursor; first = false) {
      const res = await fetch(`${svc.url}/api/v1/logs?trace_id=${trace}&limit=1000${cursor ? `&cursor=${cursor}` : ''}`, { headers: { 'x-api-key': key } });
      const page = (await res.json()) as { items: Array<{ data: { i: number } }>; next_cursor: string | null };
      out.push(...page.items.map((e) => e.data.i));
      cursor = page.next_cursor;
    }
    return out;
  };

  it('loses nothing log() accepted and duplicates nothing', async () => {
    const trace = randomUUID();
    const baseUrl = `${svc.url}/api/v1`;
    const agent = runLogger([baseUrl, key, spool, trace]);
    let accepted = -1;
    await new Promise<void>((resolve, reject) => {
      agent.on('exit', (code) => reject(new Error(`the agent exited (${code}) before it was killed`)));
      readline.createInterface({ input: agent.stdout }).on('line', (line) => {
        const m = /^accepted (\d+)$/.exec(line);
        if (m) accepted = Number(m[1]);
        if (accepted >= 250) resolve();
      });
    });
    agent.removeAllListeners('exit');
    const exited = new Promise((r) => agent.on('exit', r));
    agent.kill('SIGKILL');
    await exited;

    // Some accepted events had not been sent: only the spool holds them.
    const before = await stored(trace);
    expect(before.length).toBeLessThan(accepted + 1);

    const drain = runLogger([baseUrl, key, spool, trace, 'drain']);
    let out = '';
    drain.stdout.on('data', (d) => (out += d));
    drain.stderr.on('data', (d) => (out += d));
    expect(await new Promise((r) => drain.on('exit', r)), out).toBe(0);

    const after = await stored(trace);
    expect(new Set(after).size, 'no event twice').toBe(after.length);
    for (let i = 0; i <= accepted; i++) expect(after, `accepted event ${i}`).toContain(i);
    // The spool is empty: a third process has nothing to send.
    const again = runLogger([baseUrl, key, spool, trace, 'drain']);
    let said = '';
    again.stdout.on('data', (d) => (said += d));
    expect(await new Promise((r) => again.on('exit', r))).toBe(0);
    expect(said.trim()).toBe('drained 0');
  }, 120_000);
});
