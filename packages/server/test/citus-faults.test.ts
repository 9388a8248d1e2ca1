// The ledger on a Citus cluster under node faults (issue 45): the real service (LEDGER_STORE=citus)
// on a cluster of the suite's own (a coordinator and two workers, helpers/citus.ts), with one
// witness, companies spread over both workers and every company's client appending singles and
// batches the whole time.
// - A worker stopped under load: the companies on the other worker keep getting 200; those on
//   the stopped one get 503 with Retry-After, never a 500; when it is back, everyone gets 200.
// - A company's shards moved to the other worker while it is written to
//   (citus_move_shard_placement, logical replication), then a third worker added and the cluster
//   rebalanced under the same load.
// After each: every acknowledged entry is stored exactly as sent, seq has no gap, every kept
// checkpoint is consistent with the next (the proofs verify), the witness cosigned across the
// move, and a full verification with signatures is clean. (kill -9 of the service is
// fault/crash.test.ts, which the citus project runs on its cluster too.)
// `npm run test:all` (the citus tier): a short load; `npm run chaos`: longer phases.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { canonicalJson, verifierKey, verifyConsistency } from '@audit-ledger/core';
import { rawPublicKey } from '../src/crypto/signing.js';
import { openPostgresStore } from '../src/store/postgres.js';
import type { Store } from '../src/store/store.js';
import { BOOTSTRAP, call, fullVerification, killLeftovers, scale, type Service, startService } from './fault/harness.js';
import { type CitusCluster, citusCluster } from './helpers/citus.js';
import { assertChainIntact } from './helpers/ledger.js';
import { LogWatcher, spawnCli } from './helpers/process.js';

/** Answers each company's client must get in a phase (a stopped worker, a move, a rebalance). */
const PER_PHASE = scale(8, 200);
const hex = (s: string) => Uint8Array.from(Buffer.from(s, 'hex'));

interface Company {
  name: string;
  id: string;
  key: string;
  /** The worker (index) its shards are on. */
  worker: number;
  acked: Map<string, { event_type: string; data: Record<string, unknown> }>;
  /** Every answer: the phase it came in, its status, and Retry-After. */
  answers: Array<{ phase: string; status: number; retryAfter: string | null; body: string }>;
}

describe('the ledger on a Citus cluster under node faults', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'audit-ledger-citus-faults-'));
  let cluster: CitusCluster;
  let svc: Service;
  let store: Store;
  const companies: Company[] = [];
  const children: Array<() => void> = [];
  let phase = 'before';
  let running = false;
  let load: Promise<void> | undefined;

  const workerOf = async (companyId: string): Promise<number> => {
    const rows = await cluster.query<{ nodeport: number }>("SELECT nodeport FROM pg_dist_shard_placement WHERE shardid = get_shard_id_for_distribution_column('log_entries', $1::text)", [companyId]);
    return cluster.ports.workers.indexOf(Number(rows[0]?.nodeport));
  };

  /** Each company's client: singles and batches of 1–20, one request at a time, until stopped. */
  const client = async (c: Company) => {
    for (let i = 0; running; i++) {
      const batch = i % 3 === 2;
      const events = Array.from({ length: batch ? 1 + (i % 20) : 1 }, (_, j) => ({ event_type: batch ? 'citus.batch' : 'citus.single', data: { phase, i, j, nonce: randomUUID() } }));
      const at = phase;
      let res;
      try {
        res = batch
          ? await call(`${svc.url}/api/v1/logs/batch`, 'POST', { logs: events }, { 'x-api-key': c.key })
          : await call(`${svc.url}/api/v1/logs`, 'POST', events[0], { 'x-api-key': c.key });
      } catch (err) {
        c.answers.push({ phase: at, status: 0, retryAfter: null, body: String(err) });
        continue;
      }
      c.answers.push({ phase: at, status: res.status, retryAfter: (res.headers['retry-after'] as string | undefined) ?? null, body: res.body.slice(0, 300) });
      if (res.status === 200) {
        const ids: string[] = batch ? res.json().log_ids : [res.json().log_id];
        ids.forEach((id, k) => c.acked.set(id, events[k] as { event_type: string; data: Record<string, unknown> }));
      } else await new Promise((r) => setTimeout(r, 50)); // a refused client waits a little, as Retry-After asks
    }
  };
  const startLoad = () => {
    running = true;
    load = Promise.all(companies.map(client)).then(() => undefined);
  };
  const stopLoad = async () => {
    running = false;
    await load;
  };
  const answersIn = (c: Company, p: string) => c.answers.filter((a) => a.phase === p);
  /** Waits until every company (or those given) has had `n` answers of `status` in phase p. */
  const waitForAnswers = (p: string, n: number, status = 200, which = companies) =>
    vi.waitFor(() => {
      for (const c of which) expect(answersIn(c, p).filter((a) => a.status === status).length, `${c.name} in ${p}: ${JSON.stringify(answersIn(c, p).slice(-2))}`).toBeGreaterThanOrEqual(n);
    }, { timeout: 90_000, interval: 50 });

  /** Everything acknowledged is stored as sent, seq has no gap, checkpoints are consistent one to the next, and a full verification is clean. */
  const assertIntact = async () => {
    for (const c of companies) {
      const n = await assertChainIntact(store, c.id);
      expect(n).toBeGreaterThanOrEqual(c.acked.size);
      const rows = await store.db.selectFrom('log_entries').select(['log_id', 'event_type', 'data']).where('company_id', '=', c.id).execute();
      const stored = new Map(rows.map((r) => [r.log_id, r]));
      for (const [id, sent] of c.acked) {
        expect(stored.get(id), `${c.name}: acknowledged ${id} is missing`).toBeDefined();
        expect(stored.get(id)?.event_type).toBe(sent.event_type);
        expect(stored.get(id)?.data).toBe(canonicalJson(sent.data));
      }
      const sizes = (await store.db.selectFrom('checkpoints').select(['tree_size', 'root_hash']).where('company_id', '=', c.id).orderBy('tree_size').execute());
      expect(sizes.length).toBeGreaterThan(1);
      for (let k = 1; k < sizes.length; k++) {
        const [a, b] = [sizes[k - 1], sizes[k]] as [(typeof sizes)[number], (typeof sizes)[number]];
        const res = await call(`${svc.url}/api/v1/integrity/consistency?first=${a.tree_size}&second=${b.tree_size}`, 'GET', undefined, { 'x-api-key': c.key });
        expect(res.status, res.body).toBe(200);
        expect(verifyConsistency(a.tree_size, b.tree_size, (res.json().proof as string[]).map(hex), hex(a.root_hash), hex(b.root_hash)), `${c.name}: ${a.tree_size} → ${b.tree_size}`).toBe(true);
      }
      const report = await fullVerification(svc.url, c.key, svc.logs);
      expect(report.violation_count, c.name).toBe(0);
      expect(report.entries_checked).toBeGreaterThanOrEqual(n); // and the verification's own entry
    }
  };

  beforeAll(async () => {
    cluster = await citusCluster('faults');
    // 8 shards per table, not Citus's 32: a rebalance under load moves a few shard groups instead of ten (the suite's time).
    await cluster.query('ALTER DATABASE ledger SET citus.shard_count = 8');
    // The service's key, known to the witness before the service starts.
    const keyFile = path.join(tmp, 'service-key.pem');
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    fs.writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    const logsFile = path.join(tmp, 'witness-logs.json');
    fs.writeFileSync(logsFile, JSON.stringify({ logs: [{ origin_prefix: 'audit-ledger.local/', verifier_keys: [verifierKey('audit-ledger.local', rawPublicKey(publicKey))] }] }));
    const witness = spawnCli(['witness', 'serve', '--name', 'witness.test/citus', '--logs', logsFile, '--key-file', path.join(tmp, 'witness-key.pem'), '--state', path.join(tmp, 'witness.db'), '--port', '0'], {});
    children.push(() => witness.kill('SIGKILL'));
    const w = await new LogWatcher(witness).waitFor((l) => l.msg === 'witness listening');
    svc = await startService({
      DATABASE_URL: cluster.url,
      LEDGER_STORE: 'citus',
      LEDGER_DATA_DIR: tmp,
      LEDGER_SIGNING_KEY_FILE: keyFile,
      ...BOOTSTRAP,
      CHECKPOINT_INTERVAL_MS: '100',
      WITNESSES: `${String(w.url)} ${String(w.verifier_key)}`,
      WITNESS_ALLOW_PRIVATE: 'true',
      WITNESS_QUORUM: '1',
    });
    store = openPostgresStore(cluster.url, 4);
    // Companies until each worker holds at least two.
    const { createUser } = await import('../src/users/accounts.js');
    for (let i = 0; i < 24 && [0, 1].some((w) => companies.filter((c) => c.worker === w).length < 2); i++) {
      const name = `citus-${i}`;
      const email = `${name}@example.com`;
      const password = 'citus fault suite 123';
      const { company } = await createUser(store as never, { company: name, email, password, role: 'admin' }, Date.now, null);
      const login = await call(`${svc.url}/api/v1/auth/login`, 'POST', { email, password });
      expect(login.status, login.body).toBe(200);
      const key = await call(`${svc.url}/api/v1/auth/api_keys`, 'POST', { name: 'fault', rate_limit_per_minute: 1_000_000 }, { authorization: `Bearer ${login.json().access_token}` });
      expect(key.status, key.body).toBe(201);
      companies.push({ name, id: company.company_id, key: key.json().key, worker: await workerOf(company.company_id), acked: new Map(), answers: [] });
    }
    for (const w of [0, 1]) expect(companies.filter((c) => c.worker === w).length, `companies on worker ${w}`).toBeGreaterThanOrEqual(2);
    startLoad();
    await waitForAnswers('before', 3);
  }, 240_000);

  afterAll(async () => {
    await stopLoad();
    await store?.close();
    killLeftovers();
    for (const kill of children) kill();
    cluster?.drop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }, 120_000);

  it('a worker stopped under load: its companies get 503 with Retry-After, never a 500; the others keep getting 200; nothing acknowledged is lost, and all resume when it returns', async () => {
    const [on0, on1] = [companies.filter((c) => c.worker === 0), companies.filter((c) => c.worker === 1)];
    cluster.stopWorker(1);
    phase = 'worker 1 stopped';
    await waitForAnswers(phase, PER_PHASE, 200, on0);
    await waitForAnswers(phase, PER_PHASE, 503, on1);
    // A sign-in writes a reference table (access_tokens), on every node: 503 for everyone while a worker is away (docs/scaling.md).
    const login = await call(`${svc.url}/api/v1/auth/login`, 'POST', { email: `${(on0[0] as Company).name}@example.com`, password: 'citus fault suite 123' });
    expect(login.status, login.body).toBe(503);
    expect(login.headers['retry-after']).toMatch(/^\d+$/);
    cluster.startWorker(1);
    phase = 'worker 1 back';
    await waitForAnswers(phase, PER_PHASE);
    for (const c of companies) {
      const down = answersIn(c, 'worker 1 stopped');
      // Never a 500, and no answer other than 200 or 503 (a request cut by the stop is a 503 too).
      expect(down.filter((a) => a.status !== 200 && a.status !== 503), c.name).toEqual([]);
      for (const a of down.filter((x) => x.status === 503)) {
        expect(a.retryAfter, c.name).toMatch(/^\d+$/);
        expect(JSON.parse(a.body).code).toBe('service_unavailable');
      }
      // The other worker's companies: 200 throughout.
      if (c.worker === 0) expect(down.every((a) => a.status === 200), `${c.name}: ${JSON.stringify(down.filter((a) => a.status !== 200).slice(0, 2))}`).toBe(true);
      // The stopped worker's: nothing but 503 once the stop was seen (one request may have been in flight).
      else expect(down.slice(1).every((a) => a.status === 503), c.name).toBe(true);
    }
    expect(on1.length).toBeGreaterThan(0);
    // Checked with the load stopped (the chain read whole, and the head with it).
    await stopLoad();
    await assertIntact();
  }, 300_000);

  it("a company's shards moved to the other worker while it is written to, then a third worker added and the cluster rebalanced: nothing lost, no gap, checkpoints consistent across, and the witness cosigns after", async () => {
    startLoad();
    const moved = companies[0] as Company;
    const shard = Number((await cluster.query<{ shardid: string }>("SELECT get_shard_id_for_distribution_column('log_entries', $1::text) AS shardid", [moved.id]))[0]?.shardid);
    const from = cluster.ports.workers[moved.worker] as number;
    const to = cluster.ports.workers[1 - moved.worker] as number;
    phase = 'moving';
    await waitForAnswers(phase, 2);
    // Logical replication (shard_transfer_mode auto): writes go on during the copy and are blocked only for the switch.
    await cluster.query("SELECT citus_move_shard_placement($1, '127.0.0.1', $2, '127.0.0.1', $3)", [shard, from, to]);
    expect(await workerOf(moved.id)).toBe(1 - moved.worker);
    const sizeAtMove = Number((await cluster.query<{ n: string }>('SELECT max(tree_size) AS n FROM checkpoints WHERE company_id = $1', [moved.id]))[0]?.n);
    phase = 'moved';
    await waitForAnswers(phase, PER_PHASE);

    const third = await cluster.addWorker();
    phase = 'rebalancing';
    await waitForAnswers(phase, 2);
    await cluster.query('SELECT citus_rebalance_start()');
    await cluster.query('SELECT citus_rebalance_wait()');
    const onThird = await cluster.query<{ n: string }>('SELECT count(*) AS n FROM pg_dist_shard_placement WHERE nodeport = $1', [cluster.ports.workers[third]]);
    expect(Number(onThird[0]?.n), 'shards on the new worker after the rebalance').toBeGreaterThan(0);
    phase = 'rebalanced';
    await waitForAnswers(phase, PER_PHASE);

    // Every answer during the move and the rebalance was a 200 or, while a shard switched over, a 503 with Retry-After.
    for (const c of companies) {
      for (const a of [...answersIn(c, 'moving'), ...answersIn(c, 'moved'), ...answersIn(c, 'rebalancing'), ...answersIn(c, 'rebalanced')]) {
        expect([200, 503], `${c.name}: ${a.body}`).toContain(a.status);
      }
    }
    // The witness cosigned the moved company's checkpoints after the move: its newest cosigned size passed the size at the move.
    await vi.waitFor(async () => {
      const status = (await call(`${svc.url}/api/v1/integrity/status`, 'GET', undefined, { 'x-api-key': moved.key })).json();
      expect(status.witnesses.items[0]?.refusals).toBe(0);
      expect(status.witnesses.items[0]?.tree_size).toBeGreaterThanOrEqual(sizeAtMove);
    }, { timeout: 30_000, interval: 100 });
    await stopLoad();
    await assertIntact();
    const total = companies.reduce((n, c) => n + c.acked.size, 0);
    const refused = companies.reduce((n, c) => n + c.answers.filter((a) => a.status === 503 && !a.phase.startsWith('worker')).length, 0);
    console.log(`citus faults: ${companies.length} companies, ${total} entries acknowledged, all present, chains gap-free and verified; ${refused} answers 503 during the move and the rebalance`);
  }, 600_000);
});
