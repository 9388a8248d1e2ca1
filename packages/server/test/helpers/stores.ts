// A fresh, migrated store per suite: a temp SQLite file, or a new database on the
// local PostgreSQL that is dropped afterwards. A migrated store is copied from a template the
// global setup builds once per set of migrations (PostgreSQL: CREATE DATABASE … TEMPLATE; SQLite:
// the file copied), instead of running every migration again for each suite.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openPostgresStore } from '../../src/store/postgres.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/store.js';
import { createCitusDatabase, dropCitusDatabase } from './citus.js';
import { type StoreKind, TEST_PG_URL } from './env.js';

export interface TestDatabase {
  kind: StoreKind;
  /** DATABASE_URL for PostgreSQL, or the data dir for SQLite: enough to open more stores on the same data. */
  databaseUrl: string | undefined;
  dataDir: string;
  open(): Store;
  drop(): Promise<void>;
}

/**
 * The store code's identity (every file of src/store, where the migrations and what they call
 * live): the templates are named by it, so any change there makes new ones.
 */
export function migrationsDigest(): string {
  const dir = path.join(import.meta.dirname, '..', '..', 'src', 'store');
  const h = createHash('sha256');
  for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.ts')).sort()) h.update(f).update(fs.readFileSync(path.join(dir, f)));
  return h.digest('hex').slice(0, 12);
}

/** Where the migrated templates are: a PostgreSQL database name, and a SQLite file. */
export const templateOf = (digest = migrationsDigest()) => ({ pg: `al_tpl_${digest}`, sqlite: path.join(os.tmpdir(), `al-tpl-${digest}`, 'ledger.db') });

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: TEST_PG_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export async function createTestDatabase(kind: StoreKind, opts: { fromTemplate?: boolean } = {}): Promise<TestDatabase> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-test-'));
  // AUDIT_LEDGER_TEST_TEMPLATES=off migrates every store itself (to compare, or to rule the templates out).
  const template = opts.fromTemplate && process.env.AUDIT_LEDGER_TEST_TEMPLATES !== 'off' ? templateOf() : undefined;
  if (kind === 'sqlite') {
    if (template && fs.existsSync(template.sqlite)) fs.copyFileSync(template.sqlite, path.join(dataDir, 'ledger.db'));
    return {
      kind,
      databaseUrl: undefined,
      dataDir,
      open: () => openSqliteStore(path.join(dataDir, 'ledger.db')),
      drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  // The creating process's pid is in the name: global-setup.ts drops only the databases of processes that are gone.
  const name = `al_test_${process.pid}_${randomBytes(6).toString('hex')}`;
  if (kind === 'citus') {
    // A database of its own on the run's cluster (helpers/citus-setup.ts), migrated by the suite
    // (no template: a distributed schema lives on every node, and is made by the migrations).
    // (vitest imported here, not at the top: the global setup, where it cannot be, imports this module)
    const ports = (await import('vitest')).inject('citus');
    const url = await createCitusDatabase(ports, name);
    return {
      kind,
      databaseUrl: url,
      dataDir,
      open: () => openPostgresStore(url, 20),
      drop: async () => {
        await dropCitusDatabase(ports, name);
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  await admin(async (c) => {
    const hasTemplate = template !== undefined && (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [template.pg])).rowCount === 1;
    await c.query(hasTemplate ? `CREATE DATABASE "${name}" TEMPLATE "${template?.pg}"` : `CREATE DATABASE "${name}"`);
  });
  const url = new URL(TEST_PG_URL);
  url.pathname = `/${name}`;
  return {
    kind,
    databaseUrl: url.toString(),
    dataDir,
    open: () => openPostgresStore(url.toString(), 20),
    drop: async () => {
      await admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A migrated store on a fresh database, and how to dispose of both. */
export async function createTestStore(kind: StoreKind): Promise<{ store: Store; db: TestDatabase; dispose(): Promise<void> }> {
  const db = await createTestDatabase(kind, { fromTemplate: true });
  const store = db.open();
  await store.migrate();
  return {
    store,
    db,
    dispose: async () => {
      await store.close();
      await db.drop();
    },
  };
}

/**
 * Builds the migrated templates when they are missing (the global setup calls it once per run):
 * made under a private name, then published by a rename, so a concurrent run never copies a half
 * migrated one; templates of other migrations are dropped.
 */
export async function ensureTemplates(): Promise<void> {
  const t = templateOf();
  if (!fs.existsSync(t.sqlite)) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-tpl-making-'));
    const store = openSqliteStore(path.join(dir, 'ledger.db'));
    await store.migrate();
    await store.close();
    try {
      fs.renameSync(dir, path.dirname(t.sqlite));
    } catch {
      fs.rmSync(dir, { recursive: true, force: true }); // another run published it first
    }
  }
  await admin(async (c) => {
    for (const r of (await c.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE 'al_tpl_%' AND datname <> $1", [t.pg])).rows) {
      await c.query(`DROP DATABASE IF EXISTS "${r.datname}" WITH (FORCE)`);
    }
    if ((await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [t.pg])).rowCount === 1) return;
    const making = `al_test_${process.pid}_tpl_${randomBytes(4).toString('hex')}`;
    await c.query(`CREATE DATABASE "${making}"`);
    const url = new URL(TEST_PG_URL);
    url.pathname = `/${making}`;
    const store = openPostgresStore(url.toString(), 2);
    await store.migrate();
    await store.close();
    try {
      await c.query(`ALTER DATABASE "${making}" RENAME TO "${t.pg}"`);
    } catch {
      await c.query(`DROP DATABASE IF EXISTS "${making}" WITH (FORCE)`);
    }
  });
}
