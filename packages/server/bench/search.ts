// The search index (issue 30; kept after the commit since issue 44): how fast it is built from
// stored entries, and how long a search takes on a large ledger, on each store. Rows shaped like
// the ingestion bench's events (~500 bytes of data) are written in transactions of 10,000 into a
// migrated store (the index costs that write nothing: it is built after the commit), then the
// store's own indexer (store/search-index.ts) builds the index over them, timed until it covers
// the last entry; then searches on the full ledger through the store's own query (words and
// JSON-path conditions), each timed, for p50 and p99.
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
  /** Microseconds per entry written (no index on the write path). */
  writeUs: number;
  /** Seconds for the indexer to build the index over every entry, and its rate. */
  buildIndexS: number;
  indexEntriesPerSecond: number;
  /** p50 and p99 in ms of each search on the full ledger. */
  queries: Array<{ what: string; p50: number; p99: number; found: number }>;
  /** The request thread's longest stall (event loop delay, ms) while the whole-ledger searches ran. */
  eventLoopMaxMs: number;
}

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

async function write(store: Store, companyId: string, from: number, count: number): Promise<number> {
  {
    const t0 = process.hrtime.bigint();
    for (let at = from; at < from + count; at += 10_000) {
      const rows = Array.from({ length: Math.min(10_000, from + count - at) }, (_, i) => row(companyId, at + i));
      await store.db.transaction().execute(async (trx) => {
        for (let i = 0; i < rows.length; i += 500) await trx.insertInto('log_entries').values(rows.slice(i, i + 500) as never).execute();
      });
    }
    return Number(process.hrtime.bigint() - t0) / 1000 / count;
  }
}

/** On SQLite in a scratch file, or on PostgreSQL in the (fresh, empty) database at `pgUrl`. */
export async function searchBench(entries: number, pgUrl?: string): Promise<SearchBench> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-search-'));
  const store: Store = pgUrl ? openPostgresStore(pgUrl) : openSqliteStore(path.join(dir, 'ledger.db'));
  const companyId = randomUUID();
  try {
    await store.migrate();
    await store.db.insertInto('companies').values({ company_id: companyId, name: `bench-${companyId}`, created_at: new Date().toISOString() } as never).execute();
    const writeUs = await write(store, companyId, 0, entries);
    // The chain's head, as appends leave it: the PostgreSQL indexer goes up to it.
    await store.db.insertInto('chain_heads').values({ company_id: companyId, last_seq: entries - 1, last_hash: (entries - 1).toString(16).padStart(64, '0'), last_created_at: new Date().toISOString() }).execute();
    if (store.kind === 'postgres') await sql`ANALYZE log_entries`.execute(store.db);
    const index = store.searchIndex;
    if (!index) throw new Error('the store keeps no search index');
    const b0 = performance.now();
    await index.start();
    while ((await index.waitFor(companyId, entries - 1, 10_000)) < entries - 1);
    const buildIndexS = (performance.now() - b0) / 1000;
    if (store.kind === 'postgres') await sql`ANALYZE log_search`.execute(store.db);

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
    {
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
    }
    return { store: store.kind, entries, writeUs, buildIndexS, indexEntriesPerSecond: entries / buildIndexS, queries, eventLoopMaxMs };
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export const searchLine = (b: SearchBench) =>
  `search index on ${b.entries.toLocaleString('en-US')} entries (${b.store === 'sqlite' ? 'SQLite' : 'PostgreSQL'}): writing an entry ${b.writeUs.toFixed(1)} µs (no index on the write path); the indexer built it in ${b.buildIndexS.toFixed(1)} s (${Math.round(b.indexEntriesPerSecond).toLocaleString('en-US')} entries/s); ` +
  b.queries.map((q) => `${q.what}: p50 ${q.p50.toFixed(1)} ms, p99 ${q.p99.toFixed(1)} ms (${q.found < 0 ? 'stopped at the budget' : `${q.found} found`})`).join('; ') +
  `; the request thread's longest stall during the whole-ledger searches ${b.eventLoopMaxMs.toFixed(0)} ms`;
