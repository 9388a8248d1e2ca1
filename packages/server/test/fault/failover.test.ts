// Failover to a PostgreSQL streaming replica (issue 34), for real: a primary and a standby of the
// test's own (pg_createcluster on free ports, the standby made by pg_basebackup -R, both dropped
// after; the shared server is never touched). Synchronous replication: the primary is killed
// (immediate stop) while clients ingest, the standby promoted, the service started on it: every
// acknowledged entry is there and the ledger verifies. Asynchronous replication: the standby is
// stopped, the primary acknowledges more and signs a checkpoint, the primary dies, the lagging
// standby is promoted: the service detects on start that its ledger is behind a checkpoint it
// signed and refuses appends (503 ledger_behind_checkpoint) until the operator decides; after
// `audit-ledger continuity resolve --accept-loss` it appends again and the chain records the decision.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { STORE_KINDS } from '../helpers/env.js';
import { freePort, runCli } from '../helpers/process.js';
import { runLine, shellBlocks } from '../helpers/doc-blocks.js';
import { BOOTSTRAP, bootstrapKey, call, fullVerification, killLeftovers, type Service, startService } from './harness.js';

const VERSION = fs.existsSync('/etc/postgresql') ? (fs.readdirSync('/etc/postgresql').sort().at(-1) ?? '') : '';
const PREFIX = 'al_failover_';
const run = (cmd: string, ...args: string[]) => execFileSync(cmd, args, { stdio: 'pipe' }).toString();


/** A primary and its streaming standby; `sync`: the primary waits for the standby to flush each commit. */
async function pair(tag: string, sync: boolean): Promise<{ primary: string; standby: string; url: (which: 'primary' | 'standby') => string; stop(which: 'primary' | 'standby', mode?: string): void; start(which: 'primary' | 'standby'): void; promote(): Promise<void>; drop(): void }> {
  const [p1, p2] = [await freePort(), await freePort()];
  const primary = `${PREFIX}${process.pid}_${tag}_p`;
  const standby = `${PREFIX}${process.pid}_${tag}_s`;
  run('pg_createcluster', '-p', String(p1), VERSION, primary, '--', '--auth=trust');
  const conf = `/etc/postgresql/${VERSION}/${primary}/conf.d/replication.conf`;
  fs.mkdirSync(path.dirname(conf), { recursive: true });
  fs.writeFileSync(conf, `wal_level = replica\nmax_wal_senders = 5\nlisten_addresses = '127.0.0.1'\n${sync ? "synchronous_standby_names = '*'\nsynchronous_commit = on\n" : ''}`);
  run('pg_ctlcluster', VERSION, primary, 'start');
  run('pg_createcluster', '-p', String(p2), VERSION, standby, '--', '--auth=trust');
  const dataDir = `/var/lib/postgresql/${VERSION}/${standby}`;
  // Emptied, not removed: the directory stays the postgres user's (its parent is root's).
  for (const f of fs.readdirSync(dataDir)) fs.rmSync(path.join(dataDir, f), { recursive: true, force: true });
  // The standby is made by docs/operations.md's own command, run as written.
  await runDocBlock(0, { PRIMARY_HOST: '127.0.0.1', PRIMARY_PORT: String(p1), STANDBY_DATA: dataDir }, 'postgres');
  run('pg_ctlcluster', VERSION, standby, 'start');
  const ports = { primary: p1, standby: p2 };
  const names = { primary, standby };
  return {
    primary,
    standby,
    url: (which) => `postgres://postgres@127.0.0.1:${ports[which]}/postgres`,
    stop: (which, mode = 'fast') => run('pg_ctlcluster', VERSION, names[which], 'stop', '-m', mode),
    start: (which) => run('pg_ctlcluster', VERSION, names[which], 'start'),
    promote: () => runDocBlock(1, { STANDBY_HOST: '127.0.0.1', STANDBY_PORT: String(p2) }),
    drop: () => {
      for (const n of [primary, standby]) {
        try {
          run('pg_dropcluster', '--stop', VERSION, n);
        } catch {
          // already gone
        }
      }
    },
  };
}

/** Runs docs/operations.md's `sh postgres` block number `n` as written (PATH led by the cluster's tools). */
async function runDocBlock(n: number, vars: Record<string, string>, user?: string): Promise<void> {
  const block = shellBlocks('docs/operations.md').filter((b) => b.name === 'postgres')[n];
  if (!block) throw new Error(`docs/operations.md has no sh postgres block number ${n}`);
  for (const line of block.lines) {
    const r = await runLine(line, { cwd: os.tmpdir(), env: vars, bin: `/usr/lib/postgresql/${VERSION}/bin`, ...(user ? { user } : {}) });
    if (r.code !== 0) throw new Error(`${line}: exit ${r.code}\n${r.stdout}\n${r.stderr}`);
  }
}

async function scalar(url: string, query: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return Number((await c.query(query)).rows[0].n);
  } finally {
    await c.end();
  }
}

describe.skipIf(!STORE_KINDS.includes('postgres'))('failover to a PostgreSQL streaming replica', { timeout: 180_000 }, () => {
  const pairs: Array<{ drop(): void }> = [];
  let tmp: string;
  beforeAll(() => {
    if (!VERSION) throw new Error('no PostgreSQL cluster tools (pg_createcluster) on this machine: the failover suite must run');
    for (const old of fs.readdirSync(path.join('/etc/postgresql', VERSION)).filter((n) => n.startsWith(PREFIX) && !n.includes(`_${process.pid}_`))) {
      try {
        run('pg_dropcluster', '--stop', VERSION, old);
      } catch {
        // already gone
      }
    }
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'al-failover-'));
  });
  afterAll(() => {
    try {
      killLeftovers();
    } finally {
      for (const p of pairs) p.drop();
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });

  const envFor = (dataDir: string, url: string) => ({ LEDGER_DATA_DIR: dataDir, DATABASE_URL: url, ...BOOTSTRAP, CHECKPOINT_INTERVAL_MS: '50' });

  it('synchronous replication: the primary dies under load, the promoted standby has every acknowledged entry and verifies', async () => {
    const c = await pair('sync', true);
    pairs.push(c);
    const dataDir = fs.mkdtempSync(path.join(tmp, 'sync-'));
    const svc = await startService(envFor(dataDir, c.url('primary')));
    const key = await bootstrapKey(svc.url);
    const acked = new Set<string>();
    let running = true;
    const client = async (n: number) => {
      for (let i = 0; running; i++) {
        const res = await call(`${svc.url}/api/v1/logs`, 'POST', { event_type: 'failover', data: { n, i } }, { 'x-api-key': key });
        if (res.status === 200) acked.add(res.json().log_id);
        else if (res.status !== 503) throw new Error(`unexpected ${res.status}: ${res.body}`);
        else await new Promise((r) => setTimeout(r, 20));
      }
    };
    const clients = [0, 1, 2, 3].map(client);
    await vi.waitFor(() => expect(acked.size).toBeGreaterThan(300), { timeout: 60_000, interval: 20 });
    c.stop('primary', 'immediate');
    running = false;
    await Promise.all(clients);
    await svc.kill9();
    await c.promote();
    await vi.waitFor(async () => expect(await scalar(c.url('standby'), 'SELECT (NOT pg_is_in_recovery())::int AS n')).toBe(1), { timeout: 30_000, interval: 100 });

    const after = await startService(envFor(dataDir, c.url('standby')));
    const res = await call(`${after.url}/api/v1/logs`, 'POST', { event_type: 'after.failover', data: {} }, { 'x-api-key': key });
    expect(res.status, res.body).toBe(200);
    const stored = (await call(`${after.url}/api/v1/exports/logs?format=jsonl`, 'GET', undefined, { 'x-api-key': key })).body.trim().split('\n').map((l) => JSON.parse(l).log_id as string);
    const ids = new Set(stored);
    const lost = [...acked].filter((id) => !ids.has(id));
    expect(lost).toEqual([]);
    const report = await fullVerification(after.url, key, after.logs);
    expect(report).toMatchObject({ violation_count: 0, chain_status: 'valid' });
    await after.stop();
  });

  it('asynchronous replication: the service on a promoted standby that lagged finds itself behind a checkpoint it signed and refuses appends until the operator decides', async () => {
    const c = await pair('async', false);
    pairs.push(c);
    const dataDir = fs.mkdtempSync(path.join(tmp, 'async-'));
    let svc: Service = await startService(envFor(dataDir, c.url('primary')));
    const key = await bootstrapKey(svc.url);
    const api = { 'x-api-key': key };
    const grow = async (n: number, tag: string) => {
      for (let i = 0; i < n; i += 100) expect((await call(`${svc.url}/api/v1/logs/batch`, 'POST', { logs: Array.from({ length: 100 }, (_, j) => ({ event_type: 'failover', data: { tag, i: i + j } })) }, api)).status).toBe(200);
    };
    await grow(200, 'replicated');
    const replicated = await scalar(c.url('primary'), 'SELECT count(*) AS n FROM log_entries');
    await vi.waitFor(async () => expect(await scalar(c.url('standby'), 'SELECT count(*) AS n FROM log_entries')).toBe(replicated), { timeout: 30_000, interval: 100 });

    // The standby stops receiving; the primary acknowledges more and signs a checkpoint of them.
    c.stop('standby');
    await grow(300, 'lost');
    const signed = await scalar(c.url('primary'), 'SELECT count(*) AS n FROM log_entries');
    const marks = path.join(dataDir, 'checkpoint-marks.json');
    await vi.waitFor(() => expect(Object.values(JSON.parse(fs.readFileSync(marks, 'utf8')).companies).map((m) => (m as { tree_size: number }).tree_size)).toContain(signed), { timeout: 20_000, interval: 50 });
    await svc.kill9();
    c.stop('primary', 'immediate');
    c.start('standby');
    await c.promote();
    await vi.waitFor(async () => expect(await scalar(c.url('standby'), 'SELECT (NOT pg_is_in_recovery())::int AS n')).toBe(1), { timeout: 30_000, interval: 100 });

    svc = await startService(envFor(dataDir, c.url('standby')));
    const warned = await svc.logs.waitFor((l) => String(l.msg).startsWith('continuity:'));
    expect(warned).toMatchObject({ stored_size: replicated, seen_size: signed });
    const refused = await call(`${svc.url}/api/v1/logs`, 'POST', { event_type: 'after.failover', data: {} }, api);
    expect(refused.status, refused.body).toBe(503);
    expect(refused.json()).toMatchObject({ code: 'ledger_behind_checkpoint' });
    expect(refused.json().detail).toContain(`entries seq ${replicated} to ${signed - 1} are missing`);
    expect(await scalar(c.url('standby'), 'SELECT count(*) AS n FROM log_entries')).toBe(replicated);

    const env = envFor(dataDir, c.url('standby'));
    const status = await runCli(['continuity', 'status'], env);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`HOLDING (entries seq ${replicated} to ${signed - 1} missing)`);
    const companyId = /company (\S+):/.exec(status.stdout)?.[1] as string;
    const bad = await runCli(['continuity', 'resolve', '--company', companyId, '--accept-loss'], env);
    expect(bad.code).toBe(2);
    const decided = await runCli(['continuity', 'resolve', '--company', companyId, '--accept-loss', '--reason', 'primary lost with its disk; asynchronous replica promoted'], env);
    expect(decided.code, decided.stderr).toBe(0);

    // The running service follows the decision: it records it in the chain, then appends again.
    await vi.waitFor(async () => expect((await call(`${svc.url}/api/v1/logs`, 'POST', { event_type: 'after.failover', data: {} }, api)).status).toBe(200), { timeout: 20_000, interval: 200 });
    const trail = (await call(`${svc.url}/api/v1/logs?event_type=ledger.continuity_loss_accepted`, 'GET', undefined, api)).json();
    expect(trail.items).toHaveLength(1);
    expect(trail.items[0].data).toMatchObject({ seen_size: signed, stored_size: replicated, reason: 'primary lost with its disk; asynchronous replica promoted', actor: { kind: 'operator' } });
    const report = await fullVerification(svc.url, key, svc.logs);
    expect(report).toMatchObject({ violation_count: 0, chain_status: 'valid' });
    await svc.stop();
  });
});
