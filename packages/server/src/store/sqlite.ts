// The embedded default: one SQLite file in the data directory, WAL mode.
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, type SqliteDatabase } from 'kysely';
import { type ChainHead, type CheckpointRow, EMPTY_HEAD, KeyRetiredError, type LogEntryRow, type WithChain } from './chain.js';
import type { Database } from './schema.js';
import { checkpointValues, entryValues, prepareAppend, SQLITE_PRAGMAS, writeGroup } from './sqlite-append.js';
import { SqliteChainWriter } from './sqlite-writer.js';
import { SqliteSearchReader } from './sqlite-reader.js';
import { SqliteSearchIndex } from './sqlite-indexer.js';
import { searchFileOf } from './sqlite-search-file.js';
import { Store } from './store.js';
import { ensurePrivateDir, ensurePrivateFile } from '../kernel/files.js';

// SQLite names the violated columns, not the index; map them back to index names.
const UNIQUE_INDEX_BY_COLUMNS: Record<string, string> = {
  'users.email': 'users_email_uq',
  'api_keys.company_id': 'api_keys_one_active_uq',
  'api_keys.key_hash': 'api_keys_hash_uq',
  'access_tokens.token_hash': 'access_tokens_hash_uq',
  'companies.name': 'companies_name_key',
  'log_entries.company_id, log_entries.seq': 'log_entries_pk',
  'merkle_hashes.company_id, merkle_hashes.idx': 'merkle_hashes_pk',
  'checkpoints.company_id, checkpoints.tree_size': 'checkpoints_pk',
  'verification_jobs.company_id': 'verification_jobs_one_open_uq',
  'agent_keys.company_id, agent_keys.key_id': 'agent_keys_pk',
};

function uniqueViolation(err: unknown): string | undefined {
  if (!(err instanceof SQLite.SqliteError) || !err.code.startsWith('SQLITE_CONSTRAINT')) return undefined;
  const m = /UNIQUE constraint failed: (?:index '([^']+)'|(.+))$/.exec(err.message);
  // An index on an expression is named by SQLite itself.
  if (m?.[1]) return m[1];
  return m?.[2] ? (UNIQUE_INDEX_BY_COLUMNS[m[2]] ?? m[2]) : undefined;
}

/**
 * The locked append transaction on the store's own connection: BEGIN IMMEDIATE takes the write
 * lock before the head is read, and Kysely's connection is held so no other query interleaves.
 * Appends normally go through the writer thread (sqlite-writer.ts); this reads the chain for
 * it, and appends to an in-memory database, which a writer thread cannot open.
 */
function sqliteWithChain(kysely: Kysely<Database>, database: SQLite.Database): WithChain {
  let stmts: ReturnType<typeof prepare> | undefined;
  const prepare = () => ({
    ...prepareAppend(database),
    headRow: database.prepare<[string], { last_seq: number; last_hash: string; last_created_at: string }>(
      'SELECT last_seq, last_hash, last_created_at FROM chain_heads WHERE company_id = ?',
    ),
    treeHashes: database.prepare<[string, string], { idx: number; hash: string }>(
      'SELECT idx, hash FROM merkle_hashes WHERE company_id = ? AND idx IN (SELECT value FROM json_each(?))',
    ),
    latestCheckpoint: database.prepare<[string], CheckpointRow>('SELECT * FROM checkpoints WHERE company_id = ? ORDER BY tree_size DESC LIMIT 1'),
  });

  return (companyId, fn) =>
    kysely.connection().execute(async () => {
      stmts ??= prepare();
      const s = stmts;
      database.exec('BEGIN IMMEDIATE');
      try {
        const row = s.headRow.get(companyId);
        const head: ChainHead = row ? { lastSeq: row.last_seq, lastHash: row.last_hash, lastCreatedAt: row.last_created_at } : EMPTY_HEAD;
        const result = await fn({
          head,
          findByIdempotencyKeys: async (keys) => (keys.length ? (s.byIdempotency.all(companyId, JSON.stringify(keys)) as LogEntryRow[]) : []),
          append: async (rows, h, indexes, hashes) => {
            const retired = writeGroup(s, { companyId, rows: rows.map(entryValues), head: h, treeIndexes: indexes, treeHashes: hashes, checkpoint: null });
            if (retired !== undefined) throw new KeyRetiredError(retired);
          },
          readTreeHashes: async (indexes) =>
            new Map(indexes.length ? s.treeHashes.all(companyId, JSON.stringify(indexes)).map((r) => [r.idx, r.hash]) : []),
          readEntryHashes: async (seqs) =>
            new Map(seqs.length ? (s.entryHashes.all(companyId, JSON.stringify(seqs)) as Array<{ seq: number; hash: string }>).map((r) => [r.seq, r.hash]) : []),
          latestCheckpoint: async () => s.latestCheckpoint.get(companyId),
          insertCheckpoint: async (row) => {
            const retired = writeGroup(s, { companyId, rows: [], head, treeIndexes: [], treeHashes: [], checkpoint: checkpointValues(row) });
            if (retired !== undefined) throw new KeyRetiredError(retired);
          },
        });
        database.exec('COMMIT');
        return result;
      } catch (err) {
        if (database.inTransaction) database.exec('ROLLBACK');
        throw err;
      }
    });
}

/**
 * Kysely's SQLite driver prepares every query anew; preparing costs more than running a
 * small query. Statements are reusable, and Kysely runs one query at a time per
 * connection, so a bounded cache by SQL text is safe.
 */
function withStatementCache(database: SQLite.Database, max = 500): SqliteDatabase {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => database.close(),
    prepare(text: string) {
      // Every Kysely transaction here writes: it takes the write lock at its start (waiting up to
      // busy_timeout for the writer thread), instead of reading first and then failing with
      // SQLITE_BUSY_SNAPSHOT when the writer committed in between (seen in CI: an admin creating
      // a user while the company ingested got "database is locked" at once).
      const sqlText = text === 'begin' ? 'begin immediate' : text;
      let stmt = cache.get(sqlText);
      if (!stmt) {
        stmt = database.prepare(sqlText);
        if (cache.size >= max) cache.delete(cache.keys().next().value as string);
        cache.set(sqlText, stmt);
      }
      return stmt;
    },
  };
}

export function openSqliteStore(file: string): Store {
  if (file !== ':memory:') {
    ensurePrivateDir(path.dirname(file));
    ensurePrivateFile(file);
  }
  const database = new SQLite(file);
  // WAL; synchronous=FULL: a commit is on disk before we acknowledge it, even across power
  // loss; a 64 MiB page cache keeps a large ledger's index pages in memory across appends.
  for (const p of SQLITE_PRAGMAS) database.pragma(p);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(database) }) });
  // An in-memory database cannot be shared with a writer thread: it appends on this thread.
  const writer = file === ':memory:' ? undefined : new SqliteChainWriter(file, database);
  if (!writer) return new Store({ kind: 'sqlite', db, uniqueViolation, withChain: sqliteWithChain(db, database) });
  const searchReader = new SqliteSearchReader(file, searchFileOf(file));
  const searchIndex = new SqliteSearchIndex(file, database, searchReader);
  return new Store({ kind: 'sqlite', db, uniqueViolation, withChain: sqliteWithChain(db, database), chainWriter: writer, searchReader, searchIndex });
}
