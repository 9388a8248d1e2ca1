// Production store: PostgreSQL through a pg pool; several service processes may share one database.
import { CompiledQuery, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { EMPTY_HEAD, type WithChain } from './chain.js';
import { LOG_ENTRY_COLUMNS } from './columns.js';
import type { Database } from './schema.js';
import { Store } from './store.js';

function uniqueViolation(err: unknown): string | undefined {
  const e = err as { code?: unknown; constraint?: unknown };
  return e.code === '23505' && typeof e.constraint === 'string' ? e.constraint : undefined;
}

// Bulk inserts pass one array per column and unnest them: a fixed handful of parameters
// however many rows, which PostgreSQL parses and plans far faster than a VALUES list with
// tens of thousands of parameters.
const INTEGER_COLUMNS: Record<string, string> = { seq: 'int8', format_version: 'int4' };
const UNNEST_ENTRIES = `INSERT INTO log_entries (${LOG_ENTRY_COLUMNS.join(', ')}) SELECT * FROM unnest(${LOG_ENTRY_COLUMNS.map(
  (c, i) => `$${i + 1}::${INTEGER_COLUMNS[c] ?? 'text'}[]`,
).join(', ')})`;

/**
 * The chain head row is locked with SELECT … FOR UPDATE inside the append transaction,
 * so appends to one company serialize across every process on the database, while
 * other companies' appends proceed in parallel.
 */
function postgresWithChain(kysely: Kysely<Database>): WithChain {
  return (companyId, fn) =>
    kysely.transaction().execute(async (trx) => {
      await trx
        .insertInto('chain_heads')
        .values({ company_id: companyId, last_seq: EMPTY_HEAD.lastSeq, last_hash: EMPTY_HEAD.lastHash, last_created_at: EMPTY_HEAD.lastCreatedAt })
        .onConflict((oc) => oc.column('company_id').doNothing())
        .execute();
      const row = await trx.selectFrom('chain_heads').selectAll().where('company_id', '=', companyId).forUpdate().executeTakeFirstOrThrow();
      return fn({
        head: { lastSeq: row.last_seq, lastHash: row.last_hash, lastCreatedAt: row.last_created_at },
        findByIdempotencyKeys: async (keys) =>
          keys.length
            ? trx.selectFrom('log_entries').selectAll().where('company_id', '=', companyId).where('idempotency_key', 'in', keys).execute()
            : [],
        insert: async (rows) => {
          if (rows.length === 0) return;
          await trx.executeQuery(CompiledQuery.raw(UNNEST_ENTRIES, LOG_ENTRY_COLUMNS.map((c) => rows.map((r) => r[c]))));
        },
        setHead: async (h) => {
          await trx
            .updateTable('chain_heads')
            .set({ last_seq: h.lastSeq, last_hash: h.lastHash, last_created_at: h.lastCreatedAt })
            .where('company_id', '=', companyId)
            .execute();
        },
        readTreeHashes: async (indexes) => {
          if (indexes.length === 0) return new Map();
          const rows = await trx.selectFrom('merkle_hashes').select(['idx', 'hash']).where('company_id', '=', companyId).where('idx', 'in', indexes).execute();
          return new Map(rows.map((r) => [r.idx, r.hash]));
        },
        insertTreeHashes: async (first, hashes) => {
          if (hashes.length === 0) return;
          await trx.executeQuery(
            CompiledQuery.raw('INSERT INTO merkle_hashes (company_id, idx, hash) SELECT $1, $2::int8 + n - 1, h FROM unnest($3::text[]) WITH ORDINALITY AS t(h, n)', [
              companyId,
              first,
              hashes,
            ]),
          );
        },
        latestCheckpoint: () =>
          trx.selectFrom('checkpoints').selectAll().where('company_id', '=', companyId).orderBy('tree_size', 'desc').limit(1).executeTakeFirst(),
        insertCheckpoint: async (row) => {
          await trx.insertInto('checkpoints').values(row).execute();
        },
      });
    });
}

const INT8_OID = 20;

export function openPostgresStore(connectionString: string, poolSize = 10): Store {
  const pool = new pg.Pool({
    connectionString,
    max: poolSize,
    // bigint columns (seq, counts) come back as numbers; seqs stay far below 2^53.
    types: { getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === INT8_OID ? Number : pg.types.getTypeParser(oid, format))) as typeof pg.types.getTypeParser },
  });
  // A client that loses its connection must not crash the process: an idle one is replaced
  // by the pool, and a checked-out one also rejects its query, which is where it is handled.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return new Store('postgres', db, uniqueViolation, postgresWithChain(db));
}
