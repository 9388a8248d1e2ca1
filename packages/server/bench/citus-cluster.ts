// A Citus cluster of its own, for the bench's Citus part and the tests (test/helpers/citus.ts
// re-exports it) (issue 45): a coordinator and N workers made with pg_createcluster on free
// ports, each with shared_preload_libraries = 'citus', the extension created in one database on
// every node and the workers added on the coordinator; dropped after. The shared server on 5432 is
// never touched. The extension comes from scripts/install-citus.sh, which .ci/run calls; a machine
// without it fails here, it never skips.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import net, { type AddressInfo } from 'node:net';
import pg from 'pg';

/** A port nothing listens on now (for a server a test or the bench starts). */
export function freePort(): Promise<number> {
  return new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

const VERSION = fs.existsSync('/etc/postgresql') ? (fs.readdirSync('/etc/postgresql').sort().at(-1) ?? '') : '';
const run = (cmd: string, ...args: string[]) => execFileSync(cmd, args, { stdio: 'pipe' }).toString();


export interface CitusCluster {
  /** The coordinator's database, as the service would be given it (DATABASE_URL). */
  url: string;
  ports: { coordinator: number; workers: number[] };
  /** Runs one statement on the coordinator (or on a worker by index), in the cluster's database or another, and gives its rows. */
  query<T extends Record<string, unknown>>(text: string, params?: unknown[], worker?: number, database?: string): Promise<T[]>;
  /** Stops worker i (fast shutdown: its sessions are cut, as when a machine goes away), and starts it again. */
  stopWorker(i: number): void;
  startWorker(i: number): void;
  /** Makes one more worker and adds it to the cluster (no shards yet: a rebalance moves some there); answers its index. */
  addWorker(): Promise<number>;
  drop(): void;
}

/** Whether this machine's PostgreSQL has the Citus extension (scripts/install-citus.sh). */
export function citusInstalled(): boolean {
  try {
    const dir = run('pg_config', '--sharedir').trim();
    return fs.existsSync(path.join(dir, 'extension', 'citus.control'));
  } catch {
    return false;
  }
}

async function on<T>(port: number, db: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: db });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export interface CitusPorts {
  coordinator: number;
  workers: number[];
}

/**
 * A database of its own on every node of a cluster, with the extension, and the workers added on
 * the coordinator: what a suite's store is made on (helpers/stores.ts). Answers its DATABASE_URL.
 */
export async function createCitusDatabase(ports: CitusPorts, database: string): Promise<string> {
  const all = [ports.coordinator, ...ports.workers];
  await Promise.all(
    all.map(async (port) => {
      await on(port, 'postgres', (c) => c.query(`CREATE DATABASE "${database}"`));
      await on(port, database, (c) => c.query('CREATE EXTENSION citus'));
    }),
  );
  await on(ports.coordinator, database, async (c) => {
    // Suites inject faults with triggers (separation-of-duties.test.ts): Citus creates them on
    // the shards only when allowed. The service itself makes no trigger.
    await c.query(`ALTER DATABASE "${database}" SET citus.enable_unsafe_triggers = on`);
    await c.query('SELECT citus_set_coordinator_host($1, $2)', ['127.0.0.1', ports.coordinator]);
    for (const w of ports.workers) await c.query('SELECT citus_add_node($1, $2)', ['127.0.0.1', w]);
  });
  return `postgres://postgres@127.0.0.1:${ports.coordinator}/${database}`;
}

/** Drops a database made by createCitusDatabase on every node (the coordinator first: its connections to the workers go with it). */
export async function dropCitusDatabase(ports: CitusPorts, database: string): Promise<void> {
  for (const port of [ports.coordinator, ...ports.workers]) await on(port, 'postgres', (c) => c.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`));
}

/** Drops the clusters of test processes that are gone (al_citus_<pid>_…): a run killed before its teardown leaves its own. */
export function dropLeftoverCitusClusters(): void {
  if (!VERSION || !fs.existsSync(`/etc/postgresql/${VERSION}`)) return;
  for (const name of fs.readdirSync(`/etc/postgresql/${VERSION}`)) {
    const pid = Number(/^al_citus_(\d+)_/.exec(name)?.[1]);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    try {
      process.kill(pid, 0);
      continue; // its process still runs
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EPERM') continue;
    }
    try {
      run('pg_dropcluster', '--stop', VERSION, name);
    } catch {
      // gone meanwhile
    }
  }
}

/** Makes one node (pg_createcluster with the extension preloaded) and starts it. */
function makeNode(name: string, port: number): void {
  run('pg_createcluster', '-p', String(port), VERSION, name, '--', '--auth=trust');
  const conf = `/etc/postgresql/${VERSION}/${name}/conf.d/citus.conf`;
  fs.mkdirSync(path.dirname(conf), { recursive: true });
  // wal_level = logical: Citus moves a shard that is being written to with logical replication.
  fs.writeFileSync(conf, "shared_preload_libraries = 'citus'\nlisten_addresses = '127.0.0.1'\nmax_connections = 200\nwal_level = logical\n");
  run('pg_ctlcluster', VERSION, name, 'start');
}

export async function citusCluster(tag: string, workers = 2, database = 'ledger'): Promise<CitusCluster> {
  if (!VERSION) throw new Error('no PostgreSQL cluster tools (pg_createcluster) on this machine: the Citus suites must run');
  if (!citusInstalled()) throw new Error('the Citus extension is not installed: run scripts/install-citus.sh (.ci/run does)');
  const ports = { coordinator: await freePort(), workers: [] as number[] };
  for (let i = 0; i < workers; i++) ports.workers.push(await freePort());
  const nameOf = (i: number | 'c') => `al_citus_${process.pid}_${tag}_${i === 'c' ? 'c' : `w${i}`}`;
  const names = [nameOf('c'), ...ports.workers.map((_, i) => nameOf(i))];
  const drop = () => {
    for (const n of names) {
      try {
        run('pg_dropcluster', '--stop', VERSION, n);
      } catch {
        // not made, or already gone
      }
    }
  };
  try {
    names.forEach((name, i) => makeNode(name, [ports.coordinator, ...ports.workers][i] as number));
    await createCitusDatabase(ports, database);
  } catch (err) {
    drop();
    throw err;
  }
  return {
    url: `postgres://postgres@127.0.0.1:${ports.coordinator}/${database}`,
    ports,
    query: async <T extends Record<string, unknown>>(text: string, params: unknown[] = [], worker?: number, db = database) =>
      on(worker === undefined ? ports.coordinator : (ports.workers[worker] as number), db, async (c) => (await c.query(text, params)).rows as T[]),
    stopWorker: (i) => void run('pg_ctlcluster', '-m', 'fast', VERSION, nameOf(i), 'stop'),
    startWorker: (i) => void run('pg_ctlcluster', VERSION, nameOf(i), 'start'),
    addWorker: async () => {
      const i = ports.workers.length;
      const port = await freePort();
      names.push(nameOf(i));
      makeNode(nameOf(i), port);
      await on(port, 'postgres', (c) => c.query(`CREATE DATABASE "${database}"`));
      await on(port, database, (c) => c.query('CREATE EXTENSION citus'));
      await on(ports.coordinator, database, (c) => c.query('SELECT citus_add_node($1, $2)', ['127.0.0.1', port]));
      ports.workers.push(port);
      return i;
    },
    drop,
  };
}
