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
const COLUMN_ARRAYS = LOG_ENTRY_COLUMNS.map((c, i) => `$${i + 1}::${INTEGER_COLUMNS[c] ?? 'text'}[]`).join(', ');
const [COMPANY, FIRST, HASHES, SEQ, HASH, CREATED] = [1, 2, 3, 4, 5, 6].map((i) => `$${LOG_ENTRY_COLUMNS.length + i}`);
// A group's entries, its tree hashes and the new head in one statement (data-modifying CTEs):
// one round trip instead of three while the company's chain lock is held.
const APPEND = `WITH entries AS (INSERT INTO log_entries (${LOG_ENTRY_COLUMNS.join(', ')}) SELECT * FROM unnest(${COLUMN_ARRAYS})),
  tree AS (INSERT INTO merkle_hashes (company_id, idx, hash) SELECT ${COMPANY}, ${FIRST}::int8 + n - 1, h FROM unnest(${HASHES}::text[]) WITH ORDINALITY AS t(h, n))
  UPDATE chain_heads SET last_seq = ${SEQ}::int8, last_hash = ${HASH}, last_created_at = ${CREATED} WHERE company_id = ${COMPANY}`;

/**
 * The chain head row is locked with SELECT … FOR UPDATE inside the append transaction,
 * so appends to one company serialize across every process on the database, while
 * other companies' appends proceed in parallel.
 */
function postgresWithChain(kysely: Kysely<Database>): WithChain {
  return (companyId, fn) =>
    kysely.transaction().execute(async (trx) => {
      const lock = () => trx.selectFrom('chain_heads').selectAll().where('company_id', '=', companyId).forUpdate().executeTakeFirst();
      let row = await lock();
      if (!row) {
        // A company's first append creates its head row (once; concurrent creators meet on the key).
        await trx
          .insertInto('chain_heads')
          .values({ company_id: companyId, last_seq: EMPTY_HEAD.lastSeq, last_hash: EMPTY_HEAD.lastHash, last_created_at: EMPTY_HEAD.lastCreatedAt })
          .onConflict((oc) => oc.column('company_id').doNothing())
          .execute();
        row = (await lock()) as NonNullable<typeof row>;
      }
      return fn({
        head: { lastSeq: row.last_seq, lastHash: row.last_hash, lastCreatedAt: row.last_created_at },
        findByIdempotencyKeys: async (keys) =>
          keys.length
            ? trx.selectFrom('log_entries').selectAll().where('company_id', '=', companyId).where('idempotency_key', 'in', keys).execute()
            : [],
        append: async (rows, h, first, hashes) => {
          const params: unknown[] = LOG_ENTRY_COLUMNS.map((c) => rows.map((r) => r[c]));
          params.push(companyId, first, hashes, h.lastSeq, h.lastHash, h.lastCreatedAt);
          await trx.executeQuery(CompiledQuery.raw(APPEND, params));
        },
        readTreeHashes: async (indexes) => {
          if (indexes.length === 0) return new Map();
          const rows = await trx.selectFrom('merkle_hashes').select(['idx', 'hash']).where('company_id', '=', companyId).where('idx', 'in', indexes).execute();
          return new Map(rows.map((r) => [r.idx, r.hash]));
        },
        latestCheckpoint: () =>
          trx.selectFrom('checkpoints').selectAll().where('company_id', '=', companyId).orderBy('tree_size', 'desc').limit(1).executeTakeFirst(),
        insertCheckpoint: async (row) => {
          await trx
            .insertInto('checkpoints')
            .values(row)
            .onConflict((oc) => oc.columns(['company_id', 'tree_size']).doNothing())
            .execute();
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
