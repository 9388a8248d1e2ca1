// A fresh, migrated store per suite: a temp SQLite file, or a new database on the
// local PostgreSQL that is dropped afterwards.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openPostgresStore } from '../../src/store/postgres.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/store.js';
import { type StoreKind, TEST_PG_URL } from './env.js';

export interface TestDatabase {
  kind: StoreKind;
  /** DATABASE_URL for PostgreSQL, or the data dir for SQLite: enough to open more stores on the same data. */
  databaseUrl: string | undefined;
  dataDir: string;
  open(): Store;
  drop(): Promise<void>;
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: TEST_PG_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export async function createTestDatabase(kind: StoreKind): Promise<TestDatabase> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-test-'));
  if (kind === 'sqlite') {
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
  await admin((c) => c.query(`CREATE DATABASE "${name}"`));
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
  const db = await createTestDatabase(kind);
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
