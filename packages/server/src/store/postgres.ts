// Production store: PostgreSQL through a pg pool; several service processes may share one database.
import { CompiledQuery, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { EMPTY_HEAD, KeyRetiredError, signingKeyIds, type WithChain } from './chain.js';
import { LOG_ENTRY_COLUMNS } from './columns.js';
import { isCitus } from './citus.js';
import type { Database } from './schema.js';
import { Store } from './store.js';
import { PostgresSearchIndex } from './postgres-search-index.js';

/**
 * The violated index's name. On Citus the error comes from a shard through the coordinator,
 * which passes on only its message (no constraint field), and a shard's indexes carry the shard's
 * id as a suffix (`users_email_uq_102010`): the name is read from the message, the suffix taken off.
 */
function uniqueViolation(err: unknown): string | undefined {
  const e = err as { code?: unknown; constraint?: unknown; message?: unknown };
  if (e.code !== '23505') return undefined;
  const name = typeof e.constraint === 'string' ? e.constraint : /unique constraint "([^"]+)"/.exec(String(e.message))?.[1];
  return name?.replace(/_\d{6,}$/, '');
}

// Bulk inserts pass one array per column and unnest them: a fixed handful of parameters
// however many rows, which PostgreSQL parses and plans far faster than a VALUES list with
// tens of thousands of parameters.
const INTEGER_COLUMNS: Record<string, string> = { seq: 'int8', format_version: 'int4' };
const COLUMN_ARRAYS = LOG_ENTRY_COLUMNS.map((c, i) => `$${i + 1}::${INTEGER_COLUMNS[c] ?? 'text'}[]`).join(', ');
const [COMPANY, INDEXES, HASHES, SEQ, HASH, CREATED] = [1, 2, 3, 4, 5, 6].map((i) => `$${LOG_ENTRY_COLUMNS.length + i}`);
const KEYS = `$${LOG_ENTRY_COLUMNS.length + 7}`;
// A group's entries, its tree hashes and the new head in one statement (data-modifying CTEs):
// one round trip instead of three while the company's chain lock is held. It writes only if
// every key the group signed with is still active: the head row is updated (rowCount 1) only
// then. Reading signing_keys holds its ACCESS SHARE lock until commit, and a rotation takes the
// table's ACCESS EXCLUSIVE lock (store/keys.ts): it waits for appends in flight, and appends after
// it see the key retired. No row lock, so no write per append on the shared key row.
const APPEND = `WITH keys_ok AS (SELECT key_id FROM signing_keys WHERE key_id = ANY(${KEYS}::text[]) AND active_to IS NULL),
  ok AS (SELECT (SELECT count(*) FROM keys_ok) = cardinality(${KEYS}::text[]) AS yes),
  entries AS (INSERT INTO log_entries (${LOG_ENTRY_COLUMNS.join(', ')}) SELECT * FROM unnest(${COLUMN_ARRAYS}) WHERE (SELECT yes FROM ok)),
  tree AS (INSERT INTO merkle_hashes (company_id, idx, hash) SELECT ${COMPANY}, i, h FROM unnest(${INDEXES}::int8[], ${HASHES}::text[]) AS t(i, h) WHERE (SELECT yes FROM ok))
  UPDATE chain_heads SET last_seq = ${SEQ}::int8, last_hash = ${HASH}, last_created_at = ${CREATED} WHERE company_id = ${COMPANY} AND (SELECT yes FROM ok)`;

// On Citus the same writes go as one statement each, every one routed to the company's shards
// (store/citus.ts): a statement with data-modifying CTEs over a distributed table is planned in
// steps whose intermediate results Citus sends to every worker, so one stopped worker would stop
// every company's appends. The key check reads the reference table in the same transaction first:
// its ACCESS SHARE lock, taken on the coordinator, is held until commit just the same.
const KEYS_ACTIVE = 'SELECT count(*)::int AS n FROM signing_keys WHERE key_id = ANY($1::text[]) AND active_to IS NULL';
const INSERT_ENTRIES = `INSERT INTO log_entries (${LOG_ENTRY_COLUMNS.join(', ')}) SELECT * FROM unnest(${COLUMN_ARRAYS})`;
const INSERT_TREE = 'INSERT INTO merkle_hashes (company_id, idx, hash) SELECT $1, i, h FROM unnest($2::int8[], $3::text[]) AS t(i, h)';
const MOVE_HEAD = 'UPDATE chain_heads SET last_seq = $2::int8, last_hash = $3, last_created_at = $4 WHERE company_id = $1';
const INSERT_CHECKPOINT_ROW = `INSERT INTO checkpoints (company_id, tree_size, root_hash, timestamp, key_id, note) VALUES ($1, $2::int8, $3, $4, $5, $6) ON CONFLICT (company_id, tree_size) DO NOTHING`;

// A checkpoint, likewise only under a key that is still active.
const INSERT_CHECKPOINT = `WITH keys_ok AS (SELECT key_id FROM signing_keys WHERE key_id = $5 AND active_to IS NULL),
  inserted AS (INSERT INTO checkpoints (company_id, tree_size, root_hash, timestamp, key_id, note)
    SELECT $1, $2::int8, $3, $4, $5, $6 WHERE EXISTS (SELECT 1 FROM keys_ok) ON CONFLICT (company_id, tree_size) DO NOTHING)
  SELECT count(*)::int AS active FROM keys_ok`;

/**
 * The chain head row is locked with SELECT … FOR UPDATE inside the append transaction,
 * so appends to one company serialize across every process on the database, while
 * other companies' appends proceed in parallel.
 */
function postgresWithChain(kysely: Kysely<Database>, citus: () => Promise<boolean>): WithChain {
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
      const distributed = await citus();
      const keysActive = async (keyIds: string[]) => (await trx.executeQuery<{ n: number }>(CompiledQuery.raw(KEYS_ACTIVE, [keyIds]))).rows[0]?.n === keyIds.length;
      return fn({
        head: { lastSeq: row.last_seq, lastHash: row.last_hash, lastCreatedAt: row.last_created_at },
        findByIdempotencyKeys: async (keys) =>
          keys.length
            ? trx.selectFrom('log_entries').selectAll().where('company_id', '=', companyId).where('idempotency_key', 'in', keys).execute()
            : [],
        append: async (rows, h, indexes, hashes) => {
          const params: unknown[] = LOG_ENTRY_COLUMNS.map((c) => rows.map((r) => r[c]));
          const keyIds = signingKeyIds(rows);
          if (distributed) {
            if (!(await keysActive(keyIds))) throw new KeyRetiredError(keyIds.join(', '));
            await trx.executeQuery(CompiledQuery.raw(INSERT_ENTRIES, params));
            if (indexes.length > 0) await trx.executeQuery(CompiledQuery.raw(INSERT_TREE, [companyId, indexes, hashes]));
            await trx.executeQuery(CompiledQuery.raw(MOVE_HEAD, [companyId, h.lastSeq, h.lastHash, h.lastCreatedAt]));
            return;
          }
          params.push(companyId, indexes, hashes, h.lastSeq, h.lastHash, h.lastCreatedAt, keyIds);
          const result = await trx.executeQuery(CompiledQuery.raw(APPEND, params));
          if (Number(result.numAffectedRows ?? 0) !== 1) throw new KeyRetiredError(keyIds.join(', '));
        },
        readTreeHashes: async (indexes) => {
          if (indexes.length === 0) return new Map();
          const rows = await trx.selectFrom('merkle_hashes').select(['idx', 'hash']).where('company_id', '=', companyId).where('idx', 'in', indexes).execute();
          return new Map(rows.map((r) => [r.idx, r.hash]));
        },
        readEntryHashes: async (seqs) => {
          if (seqs.length === 0) return new Map();
          const rows = await trx.selectFrom('log_entries').select(['seq', 'hash']).where('company_id', '=', companyId).where('seq', 'in', seqs).execute();
          return new Map(rows.map((r) => [r.seq, r.hash]));
        },
        latestCheckpoint: () =>
          trx.selectFrom('checkpoints').selectAll().where('company_id', '=', companyId).orderBy('tree_size', 'desc').limit(1).executeTakeFirst(),
        insertCheckpoint: async (row) => {
          if (distributed) {
            if (!(await keysActive([row.key_id]))) throw new KeyRetiredError(row.key_id);
            await trx.executeQuery(CompiledQuery.raw(INSERT_CHECKPOINT_ROW, [row.company_id, row.tree_size, row.root_hash, row.timestamp, row.key_id, row.note]));
            return;
          }
          const result = await trx.executeQuery<{ active: number }>(
            CompiledQuery.raw(INSERT_CHECKPOINT, [row.company_id, row.tree_size, row.root_hash, row.timestamp, row.key_id, row.note]),
          );
          if (result.rows[0]?.active !== 1) throw new KeyRetiredError(row.key_id);
        },
      });
    });
}

const INT8_OID = 20;

/**
 * `onConnectionError` hears of connections that fail outside any query (an idle client the
 * server dropped): the service's logger, through its once-per-outage reporter.
 */
export function openPostgresStore(
  connectionString: string,
  poolSize = 10,
  onConnectionError: (err: Error) => void = () => {},
  /** LEDGER_STORE: `auto` distributes on a Citus coordinator, `citus` insists on one, `postgres` never distributes. */
  citus: 'auto' | 'postgres' | 'citus' = 'auto',
): Store {
  const pool = new pg.Pool({
    connectionString,
    max: poolSize,
    // bigint columns (seq, counts) come back as numbers; seqs stay far below 2^53.
    types: { getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === INT8_OID ? Number : pg.types.getTypeParser(oid, format))) as typeof pg.types.getTypeParser },
  });
  // A client that loses its connection must not crash the process: an idle one is replaced
  // by the pool, and a checked-out one also rejects its query, which is where it is handled.
  pool.on('error', onConnectionError);
  pool.on('connect', (client) => client.on('error', onConnectionError));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  // Citus mode (the schema distributed, appends as single-shard statements), asked of the database once.
  let asked: Promise<boolean> | undefined;
  const onCitus = () => (asked ??= citus === 'postgres' ? Promise.resolve(false) : isCitus(db as Kysely<unknown>).catch((err: unknown) => ((asked = undefined), Promise.reject(err))));
  return new Store({ kind: 'postgres', db, uniqueViolation, withChain: postgresWithChain(db, onCitus), searchIndex: new PostgresSearchIndex(db), citus, onCitus });
}
