// Ledger reads: entries, the chain head, the stored Merkle hashes and the checkpoints, over the
// one database handle. Writes go through the appender's locked chain transaction (chain.ts).
import { sql } from 'kysely';
import type { ChainHead, CheckpointRow, LogEntryRow } from './chain.js';
import type { DbHandle } from './handle.js';
import { seqBoundsOf } from './time-bounds.js';
import { SEARCH_BUDGET_MS } from './sqlite-reader.js';
import { SearchTooSlowError } from '../kernel/domain-error.js';

export interface EntryFilter {
  trace_id?: string;
  session_id?: string;
  /** An exact type, or a prefix ending in `*` (`hitl.*`; not indexed: narrow by time or trace too). */
  event_type?: string;
  source?: string;
  /** Any of these sources. */
  sources?: string[];
  /** Any of these event types. */
  event_types?: string[];
  /** Not indexed (an index would cost every append): narrow by time or trace on large ledgers. */
  agent_id?: string;
  /** Any of these agents (not indexed either). */
  agent_ids?: string[];
  /** created_at >= from */
  from?: string;
  /** created_at < to */
  to?: string;
  /** Continue after this seq (in the direction of order). */
  afterSeq?: number;
  /** Only entries with seq below this (a replay session's pinned tree size). */
  seqBelow?: number;
  /** Only entries whose data has this string value at this top-level field. */
  dataField?: { name: string; value: string };
  /** Full-text: every term must occur in the entry's data (a term ending in * is a prefix). */
  text?: string[];
  /** Conditions on values inside data (a path of keys, an operator and a JSON value). */
  where?: DataCondition[];
  order: 'asc' | 'desc';
  limit: number;
}

/** `data.a.b > 100`: a path of keys below data, an operator and a JSON scalar. */
export interface DataCondition {
  path: string[];
  op: '=' | '!=' | '>' | '>=' | '<' | '<=';
  value: string | number | boolean | null;
}

export class LedgerStore {
  /** How long a PostgreSQL search inside data may run (SQLite's thread has its own, sqlite-reader.ts). */
  searchBudgetMs = SEARCH_BUDGET_MS;

  constructor(private readonly h: DbHandle) {}

  async getEntry(companyId: string, logId: string): Promise<LogEntryRow | undefined> {
    return this.h.db.selectFrom('log_entries').selectAll().where('company_id', '=', companyId).where('log_id', '=', logId).executeTakeFirst();
  }

  getEntriesByLogId(companyId: string, logIds: string[]): Promise<LogEntryRow[]> {
    return this.h.db.selectFrom('log_entries').selectAll().where('company_id', '=', companyId).where('log_id', 'in', logIds).orderBy('seq').execute();
  }

  async getEntriesBySeq(companyId: string, seqs: number[]): Promise<LogEntryRow[]> {
    if (seqs.length === 0) return [];
    return this.h.db.selectFrom('log_entries').selectAll().where('company_id', '=', companyId).where('seq', 'in', seqs).execute();
  }

  /** Only the links of these entries (seq, hash, prev_hash, created_at): what a neighbour's check reads. */
  async entryLinks(companyId: string, seqs: number[]): Promise<Array<Pick<LogEntryRow, 'seq' | 'hash' | 'prev_hash' | 'created_at'>>> {
    if (seqs.length === 0) return [];
    return this.h.db.selectFrom('log_entries').select(['seq', 'hash', 'prev_hash', 'created_at']).where('company_id', '=', companyId).where('seq', 'in', seqs).execute();
  }

  async getChainHead(companyId: string): Promise<ChainHead | undefined> {
    const row = await this.h.db.selectFrom('chain_heads').selectAll().where('company_id', '=', companyId).executeTakeFirst();
    return row && row.last_seq >= 0 ? { lastSeq: row.last_seq, lastHash: row.last_hash, lastCreatedAt: row.last_created_at } : undefined;
  }

  /** A page of entries in seq order; each indexed filter by a (company_id, column, seq) index, a time range by the primary key. */
  async listEntries(companyId: string, f: EntryFilter): Promise<LogEntryRow[]> {
    let q = this.h.db.selectFrom('log_entries').selectAll().where('company_id', '=', companyId);
    if (f.trace_id !== undefined) q = q.where('trace_id', '=', f.trace_id);
    if (f.session_id !== undefined) q = q.where('session_id', '=', f.session_id);
    if (f.event_type !== undefined && f.event_type.endsWith('*')) {
      // A prefix (`hitl.*`): compared exactly, character for character, whatever the collation.
      const prefix = f.event_type.slice(0, -1);
      q = q.where(sql<string>`substr(event_type, 1, ${prefix.length})`, '=', prefix);
    } else if (f.event_type !== undefined) q = q.where('event_type', '=', f.event_type);
    if (f.source !== undefined) q = q.where('source', '=', f.source);
    if (f.sources !== undefined) q = q.where('source', 'in', f.sources);
    if (f.event_types !== undefined) q = q.where('event_type', 'in', f.event_types);
    if (f.agent_id !== undefined) q = q.where('agent_id', '=', f.agent_id);
    if (f.agent_ids !== undefined) q = q.where('agent_id', 'in', f.agent_ids);
    // A time range is a seq range (time-bounds.ts): no created_at index to keep on every append.
    if (f.from !== undefined || f.to !== undefined) {
      const b = await seqBoundsOf(this.h, companyId, f.from, f.to);
      if (b.first !== undefined) q = q.where('seq', '>=', b.first);
      if (b.end !== undefined) q = q.where('seq', '<', b.end);
    }
    if (f.afterSeq !== undefined) q = q.where('seq', f.order === 'asc' ? '>' : '<', f.afterSeq);
    if (f.seqBelow !== undefined) q = q.where('seq', '<', f.seqBelow);
    if (f.dataField !== undefined) q = q.where(this.jsonText('data', f.dataField.name), '=', f.dataField.value);
    if (f.text !== undefined && f.text.length > 0) q = q.where(this.textMatch(companyId, f.text));
    for (const c of f.where ?? []) q = q.where(this.dataCondition(c));
    const ordered = q.orderBy('seq', f.order).limit(f.limit);
    // A search inside data may scan the whole company: off the request thread where the backend can (SQLite).
    if (this.h.searchOffThread && ((f.where?.length ?? 0) > 0 || (f.text?.length ?? 0) > 0)) {
      const compiled = ordered.compile();
      return (await this.h.searchOffThread(compiled.sql, compiled.parameters)) as LogEntryRow[];
    }
    // PostgreSQL runs it on a pooled connection (the request thread only waits), under the same
    // budget: the server cancels the statement past it (57014), answered as search_too_slow.
    if (this.h.kind === 'postgres' && ((f.where?.length ?? 0) > 0 || (f.text?.length ?? 0) > 0)) {
      try {
        return await this.h.db.transaction().execute(async (trx) => {
          await sql`SELECT set_config('statement_timeout', ${String(this.searchBudgetMs)}, true)`.execute(trx);
          return trx.executeQuery(ordered.compile()).then((r) => r.rows as LogEntryRow[]);
        });
      } catch (err) {
        if ((err as { code?: string }).code === '57014') throw new SearchTooSlowError(this.searchBudgetMs);
        throw err;
      }
    }
    return ordered.execute();
  }

  /**
   * Full text over data, through the search index (store/search-index.ts): SQLite's FTS5 in the
   * index file the search thread attaches as `idx` (each term a quoted phrase, ANDed; a trailing *
   * a prefix), PostgreSQL's log_search under GIN (to_tsvector('simple')). Terms are data, never
   * syntax: quoted for FTS5, passed as a parameter to PostgreSQL.
   */
  private textMatch(companyId: string, terms: string[]) {
    if (this.h.kind === 'sqlite') {
      const match = terms.map((t) => (t.endsWith('*') ? `"${t.slice(0, -1).replace(/"/g, '""')}"*` : `"${t.replace(/"/g, '""')}"`)).join(' AND ');
      return sql<boolean>`rowid IN (SELECT rowid FROM idx.log_search WHERE log_search MATCH ${match})`;
    }
    const query = terms.map((t) => (t.endsWith('*') ? `${toTsLexeme(t.slice(0, -1))}:*` : toTsLexeme(t))).join(' & ');
    return sql<boolean>`seq IN (SELECT seq FROM log_search WHERE company_id = ${companyId} AND tsv @@ to_tsquery('simple', ${query}))`;
  }

  /**
   * One condition on a value inside data, type-safe on both stores (a number never compares with a
   * string). A string equality first asks whether the stored text holds the value's JSON string at
   * all, which costs a substring search instead of parsing the row: sound because data is stored
   * as its RFC 8785 text (ingestion/input.ts, otlp/map.ts), in which a string is serialized exactly
   * as JSON.stringify serializes it, so a row whose value equals it always contains that text.
   */
  private dataCondition(c: DataCondition) {
    const exact = this.dataConditionExact(c);
    if (c.op !== '=' || typeof c.value !== 'string') return exact;
    const needle = JSON.stringify(c.value);
    return this.h.kind === 'sqlite' ? sql<boolean>`(instr(data, ${needle}) > 0 AND ${exact})` : sql<boolean>`(strpos(data, ${needle}) > 0 AND ${exact})`;
  }

  private dataConditionExact(c: DataCondition) {
    for (const k of c.path) if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) throw new Error(`bad JSON path key ${k}`);
    if (this.h.kind === 'sqlite') {
      const path = `$.${c.path.join('.')}`;
      const value = sql`json_extract(data, ${path})`;
      const type = sql`json_type(data, ${path})`;
      if (c.value === null) return c.op === '!=' ? sql<boolean>`(${type} IS NOT NULL AND ${type} <> 'null')` : sql<boolean>`${type} = 'null'`;
      if (typeof c.value === 'boolean') return sql<boolean>`${type} ${sql.raw(c.op === '!=' ? '<>' : '=')} ${c.value ? 'true' : 'false'}`;
      const kind = typeof c.value === 'number' ? sql`${type} IN ('integer', 'real')` : sql`${type} = 'text'`;
      return sql<boolean>`(${kind} AND ${value} ${sql.raw(c.op === '!=' ? '<>' : c.op)} ${c.value})`;
    }
    // PostgreSQL: a jsonpath filter, passed as a parameter (keys checked above, the value JSON-encoded).
    const op = c.op === '=' ? '==' : c.op;
    const jsonpath = `$.${c.path.join('.')} ? (@ ${op} ${JSON.stringify(c.value)})`;
    return sql<boolean>`jsonb_path_exists(data::jsonb, ${jsonpath}::jsonpath)`;
  }

  /** A top-level string field of a JSON text column, in this dialect (not indexed: filter by an indexed column too). */
  private jsonText(column: 'data', field: string) {
    if (!/^[a-z_][a-z0-9_]*$/i.test(field)) throw new Error(`bad JSON field name ${field}`);
    return this.h.kind === 'sqlite' ? sql<string>`json_extract(${sql.ref(column)}, ${`$.${field}`})` : sql<string>`(${sql.ref(column)}::jsonb ->> ${field})`;
  }

  // ---- Merkle tree and checkpoints ----

  /** Stored Merkle hashes of one company by stored-hash index (see the core's merkle.ts). */
  async readTreeHashes(companyId: string, indexes: number[]): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    // Chunked: a proof needs tens of hashes, a caller may ask for more.
    for (let i = 0; i < indexes.length; i += 5000) {
      const rows = await this.h.db
        .selectFrom('merkle_hashes')
        .select(['idx', 'hash'])
        .where('company_id', '=', companyId)
        .where('idx', 'in', indexes.slice(i, i + 5000))
        .execute();
      for (const r of rows) out.set(r.idx, r.hash);
    }
    return out;
  }

  /** Entry hashes (hex) by seq: the tree's leaves (core's layeredReader). */
  async readEntryHashes(companyId: string, seqs: number[]): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    for (let i = 0; i < seqs.length; i += 5000) {
      const rows = await this.h.db.selectFrom('log_entries').select(['seq', 'hash']).where('company_id', '=', companyId).where('seq', 'in', seqs.slice(i, i + 5000)).execute();
      for (const r of rows) out.set(r.seq, r.hash);
    }
    return out;
  }

  /** Every company's chain size (last seq + 1), for maintenance over all companies (`tree prune`). */
  async chainSizes(): Promise<Array<{ company_id: string; size: number }>> {
    const rows = await this.h.db.selectFrom('chain_heads').select(['company_id', 'last_seq']).where('last_seq', '>=', 0).orderBy('company_id').execute();
    return rows.map((r) => ({ company_id: r.company_id, size: r.last_seq + 1 }));
  }

  /** Deletes a company's stored tree hashes with index in [from, to) except those in `keep`; returns how many went. */
  async deleteTreeHashesExcept(companyId: string, from: number, to: number, keep: number[]): Promise<number> {
    let q = this.h.db.deleteFrom('merkle_hashes').where('company_id', '=', companyId).where('idx', '>=', from).where('idx', '<', to);
    if (keep.length > 0) q = q.where('idx', 'not in', keep);
    const [result] = await q.execute();
    return Number(result?.numDeletedRows ?? 0);
  }

  /** Stored hashes with index in [from, to), in order: what the verifier compares with the tree it rebuilds. */
  async treeHashRange(companyId: string, from: number, to: number): Promise<Array<{ idx: number; hash: string }>> {
    return this.h.db
      .selectFrom('merkle_hashes')
      .select(['idx', 'hash'])
      .where('company_id', '=', companyId)
      .where('idx', '>=', from)
      .where('idx', '<', to)
      .orderBy('idx')
      .execute();
  }

  async latestCheckpoint(companyId: string): Promise<CheckpointRow | undefined> {
    return this.h.db.selectFrom('checkpoints').selectAll().where('company_id', '=', companyId).orderBy('tree_size', 'desc').limit(1).executeTakeFirst();
  }

  async getCheckpoint(companyId: string, treeSize: number): Promise<CheckpointRow | undefined> {
    return this.h.db.selectFrom('checkpoints').selectAll().where('company_id', '=', companyId).where('tree_size', '=', treeSize).executeTakeFirst();
  }

  /** A page of the kept checkpoints: tree_size above `afterSize`, ascending, at most `limit`. */
  async checkpointsPage(companyId: string, afterSize: number, limit: number): Promise<CheckpointRow[]> {
    return this.h.db.selectFrom('checkpoints').selectAll().where('company_id', '=', companyId).where('tree_size', '>', afterSize).orderBy('tree_size').limit(limit).execute();
  }

  /** Checkpoints with tree_size in (after, upTo], ascending (a verifier page: at most upTo − after of them). */
  async listCheckpoints(companyId: string, after: number, upTo: number): Promise<CheckpointRow[]> {
    return this.h.db
      .selectFrom('checkpoints')
      .selectAll()
      .where('company_id', '=', companyId)
      .where('tree_size', '>', after)
      .where('tree_size', '<=', upTo)
      .orderBy('tree_size')
      .execute();
  }
}

/** A search term as one tsquery lexeme: quoted, so no character of it is tsquery syntax. */
function toTsLexeme(term: string): string {
  return `'${term.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}
