// The search index's cost (issue 30): what it adds to each entry written, and how long a search
// takes on a large ledger, on each store. Rows shaped like the ingestion bench's events (~500
// bytes of data) are written in transactions of 10,000 into a migrated store, the first half
// without the index (SQLite: its triggers dropped; PostgreSQL: its GIN index dropped) and the
// second with it (rebuilt first, so it holds every row), so the difference is the index alone;
// then searches on the full ledger through the store's own query (words and JSON-path
// conditions), each timed, for p50 and p99.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { sql } from 'kysely';
import { openSqliteStore } from '../src/store/sqlite.js';
import { openPostgresStore } from '../src/store/postgres.js';
import type { DataCondition } from '../src/store/ledger.js';
import { SearchTooSlowError } from '../src/kernel/domain-error.js';

export interface SearchBench {
  store: 'sqlite' | 'postgres';
  entries: number;
  /** Seconds to build the index over the first half (PostgreSQL: CREATE INDEX; SQLite: the FTS rebuild). */
  buildIndexS: number;
  /** Microseconds per entry written with the index's triggers, and without. */
  writeUsWithIndex: number;
  writeUsWithoutIndex: number;
  /** p50 and p99 in ms of each search on the full ledger. */
  queries: Array<{ what: string; p50: number; p99: number; found: number }>;
  /** The request thread's longest stall (event loop delay, ms) while the whole-ledger searches ran. */
  eventLoopMaxMs: number;
}

const TRIGGERS = ['log_search_insert', 'log_search_update', 'log_search_delete'];

function row(companyId: string, seq: number) {
  const data = JSON.stringify({ amount: seq % 1000, customer_id: `c-${seq % 5000}`, k: 5, ok: true, query: `${'q'.repeat(300)} ${['refund', 'invoice', 'shipment', 'address'][seq % 4]}`, tool: 'search', user: `u-${seq}` });
  return {
    company_id: companyId, seq, log_id: randomUUID(), format_version: 1, event_type: 'tool.called', data, source: 'bench-agent', trace_id: null, session_id: null, timestamp: null, span_id: null, parent_span_id: null,
    parent_event_id: null, root_event_id: null, agent_id: `agent-${seq % 20}`, workflow_id: null, causality_type: null, idempotency_key: null, schema_version: null, extra: null, created_at: new Date(Date.UTC(2026, 0, 1) + seq).toISOString(),
    prev_hash: '0'.repeat(64), hash: seq.toString(16).padStart(64, '0'), signature: 'AA==', key_id: 'bench', idempotency_conflict_of: null, content_commitment: null, content_salt: null, erased_at: null, erasure_id: null, event_id: null, links: null,
  };
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] as number;

type Store = ReturnType<typeof openSqliteStore> | ReturnType<typeof openPostgresStore>;

/** How each store drops its search index and builds it again over what is there. */
interface Backend {
  kind: SearchBench['store'];
  open(): Store;
  drop(store: Store): Promise<void>;
  restore(store: Store): Promise<void>;
  cleanup(): void;
}

function sqliteBackend(): Backend {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-search-'));
  const file = path.join(dir, 'ledger.db');
  return {
    kind: 'sqlite',
    open: () => openSqliteStore(file),
    drop: async (store) => {
      for (const t of TRIGGERS) await sql.raw(`DROP TRIGGER ${t}`).execute(store.db);
    },
    restore: async (store) => {
      await sql`INSERT INTO log_search(log_search) VALUES ('rebuild')`.execute(store.db);
      for (const s of TRIGGER_TEXT) await sql.raw(s).execute(store.db);
    },
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

function postgresBackend(url: string): Backend {
  return {
    kind: 'postgres',
    open: () => openPostgresStore(url),
    drop: async (store) => void (await sql`DROP INDEX log_entries_search_idx`.execute(store.db)),
    // As migration 0012 creates it.
    restore: async (store) => void (await sql`CREATE INDEX log_entries_search_idx ON log_entries USING gin (to_tsvector('simple', coalesce(data, '')))`.execute(store.db)),
    cleanup: () => undefined,
  };
}

async function write(backend: Backend, companyId: string, from: number, count: number): Promise<number> {
  const store = backend.open();
  try {
    const t0 = process.hrtime.bigint();
    for (let at = from; at < from + count; at += 10_000) {
      const rows = Array.from({ length: Math.min(10_000, from + count - at) }, (_, i) => row(companyId, at + i));
      await store.db.transaction().execute(async (trx) => {
        for (let i = 0; i < rows.length; i += 500) await trx.insertInto('log_entries').values(rows.slice(i, i + 500) as never).execute();
      });
    }
    return Number(process.hrtime.bigint() - t0) / 1000 / count;
  } finally {
    await store.close();
  }
}

/** On SQLite in a scratch file, or on PostgreSQL in the (fresh, empty) database at `pgUrl`. */
export async function searchBench(entries: number, pgUrl?: string): Promise<SearchBench> {
  const backend = pgUrl ? postgresBackend(pgUrl) : sqliteBackend();
  const companyId = randomUUID();
  try {
    const setup = backend.open();
    await setup.migrate();
    await setup.db.insertInto('companies').values({ company_id: companyId, name: `bench-${companyId}`, created_at: new Date().toISOString() } as never).execute();
    // The same number of rows each way, on the same growing ledger: first without the index,
    // then with it (built first over the first half, so it holds every row).
    await backend.drop(setup);
    await setup.close();
    const half = Math.floor(entries / 2);
    const writeUsWithoutIndex = await write(backend, companyId, 0, half);
    const restore = backend.open();
    const b0 = performance.now();
    await backend.restore(restore);
    const buildIndexS = (performance.now() - b0) / 1000;
    if (backend.kind === 'postgres') await sql`ANALYZE log_entries`.execute(restore.db);
    await restore.close();
    const writeUsWithIndex = await write(backend, companyId, half, entries - half);

    const store = backend.open();
    if (backend.kind === 'postgres') await sql`ANALYZE log_entries`.execute(store.db);
    const queries: SearchBench['queries'] = [];
    let eventLoopMaxMs = 0;
    const time = async (what: string, text: string[] | undefined, where: DataCondition[] | undefined, runs = 60) => {
      const ms: number[] = [];
      let found = 0;
      for (let i = 0; i < runs; i++) {
        const t0 = performance.now();
        try {
          const rows = await store.ledger.listEntries(companyId, { ...(text ? { text } : {}), ...(where ? { where } : {}), order: 'desc', limit: 100 });
          found = rows.length;
        } catch (err) {
          // Past the search budget: stopped, answered search_too_slow (found -1 says so).
          if (!(err instanceof SearchTooSlowError)) throw err;
          found = -1;
        }
        ms.push(performance.now() - t0);
      }
      const warm = runs > 10 ? ms.slice(10) : ms;
      queries.push({ what, p50: pct(warm, 50), p99: pct(warm, 99), found });
    };
    try {
      const rare = `u-${Math.min(123_456, entries - 1)}`;
      await time(`a rare word (one entry: ${rare})`, [rare], undefined);
      await time('a common word (a quarter of the ledger: refund), newest 100', ['refund'], undefined);
      await time('a word and a JSON condition (customer_id = "c-40")', ['refund'], [{ path: ['customer_id'], op: '=', value: 'c-40' }]);
      await time('a JSON condition alone (amount > 990), newest 100', undefined, [{ path: ['amount'], op: '>', value: 990 }]);
      // Issue 42 (20): a condition nothing matches reads every entry of the company. Timed with the
      // request thread's longest stall meanwhile (the event loop's delay: SQLite runs it on a
      // thread of its own, PostgreSQL on the server), which is what other tenants would wait.
      const loop = monitorEventLoopDelay({ resolution: 10 });
      loop.enable();
      await time('a string condition nothing matches (customer_id = "nobody"): the whole ledger read', undefined, [{ path: ['customer_id'], op: '=', value: 'nobody' }], 5);
      await time('a number condition nothing matches (amount > 1000000): every entry parsed', undefined, [{ path: ['amount'], op: '>', value: 1_000_000 }], 5);
      loop.disable();
      eventLoopMaxMs = loop.max / 1e6;
    } finally {
      await store.close();
    }
    return { store: backend.kind, entries, buildIndexS, writeUsWithIndex, writeUsWithoutIndex, queries, eventLoopMaxMs };
  } finally {
    backend.cleanup();
  }
}

/** The index's triggers as migration 0012 creates them (restored after the bare half). */
const TRIGGER_TEXT = [
  `CREATE TRIGGER log_search_insert AFTER INSERT ON log_entries WHEN new.data IS NOT NULL BEGIN INSERT INTO log_search(rowid, data) VALUES (new.rowid, new.data); END`,
  `CREATE TRIGGER log_search_update AFTER UPDATE OF data ON log_entries BEGIN INSERT INTO log_search(log_search, rowid, data) SELECT 'delete', old.rowid, old.data WHERE old.data IS NOT NULL; INSERT INTO log_search(rowid, data) SELECT new.rowid, new.data WHERE new.data IS NOT NULL; END`,
  `CREATE TRIGGER log_search_delete AFTER DELETE ON log_entries WHEN old.data IS NOT NULL BEGIN INSERT INTO log_search(log_search, rowid, data) VALUES ('delete', old.rowid, old.data); END`,
];

export const searchLine = (b: SearchBench) =>
  `search index on ${b.entries.toLocaleString('en-US')} entries (${b.store === 'sqlite' ? 'SQLite' : 'PostgreSQL'}): writing an entry ${b.writeUsWithIndex.toFixed(1)} µs with the index, ${b.writeUsWithoutIndex.toFixed(1)} µs without (+${(b.writeUsWithIndex - b.writeUsWithoutIndex).toFixed(1)} µs); building it over the first half ${b.buildIndexS.toFixed(1)} s; ` +
  b.queries.map((q) => `${q.what}: p50 ${q.p50.toFixed(1)} ms, p99 ${q.p99.toFixed(1)} ms (${q.found < 0 ? 'stopped at the budget' : `${q.found} found`})`).join('; ') +
  `; the request thread's longest stall during the whole-ledger searches ${b.eventLoopMaxMs.toFixed(0)} ms`;
