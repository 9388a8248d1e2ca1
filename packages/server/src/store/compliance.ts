// Storage for the compliance lifecycle: retention policies, legal holds, and erasures (planned,
// recorded in the ledger, applied). Erasing removes a version 2 entry's data, extra and salt and
// keeps everything hashed (docs/ledger-format.md §14).
import { type Expression, type ExpressionBuilder, type Selectable, type SqlBool, sql } from 'kysely';
import { ERASABLE_SERVICE_ENTRY } from '@audit-ledger/core';
import { RESERVED_SOURCE_PREFIX } from './columns.js';
import type { LogEntryRow } from './chain.js';
import type { DbHandle } from './handle.js';
import { firstSeqAtOrAfter } from './time-bounds.js';
import type { Database, ErasuresTable, LegalHoldsTable, RetentionPoliciesTable } from './schema.js';

export type RetentionRow = Selectable<RetentionPoliciesTable>;
export type HoldRow = Selectable<LegalHoldsTable>;
export type ErasureRow = Selectable<ErasuresTable>;

/** A hold's scope: exactly one kind. */
export type HoldScope = { trace_id: string } | { session_id: string } | { agent_id: string } | { from?: string; to?: string } | { all: true };

/** What the erasable entries must satisfy: version 2, content still there, not written by the service itself. */
const erasable = (eb: ExpressionBuilder<Database, 'log_entries'>) =>
  eb.and([eb('format_version', '>=', 2), eb('content_salt', 'is not', null), eb.or([eb('source', 'is', null), eb('source', 'not like', `${RESERVED_SOURCE_PREFIX}%`)])]);

export class ComplianceStore {
  /** SQLite: the companies whose retention runs in this process now. */
  private readonly running = new Set<string>();

  constructor(private readonly store: DbHandle) {}

  private get db() {
    return this.store.db;
  }

  // ---- retention ----

  getRetention(companyId: string): Promise<RetentionRow | undefined> {
    return this.db.selectFrom('retention_policies').selectAll().where('company_id', '=', companyId).executeTakeFirst();
  }

  async putRetention(row: Pick<RetentionRow, 'company_id' | 'content_days' | 'by_event_type' | 'updated_at' | 'updated_by'>): Promise<void> {
    await this.db
      .insertInto('retention_policies')
      .values({ ...row, last_run_at: null, erased_total: 0 })
      .onConflict((oc) => oc.column('company_id').doUpdateSet({ content_days: row.content_days, by_event_type: row.by_event_type, updated_at: row.updated_at, updated_by: row.updated_by }))
      .execute();
  }

  /** Companies with a policy that erases anything. */
  async companiesWithRetention(): Promise<string[]> {
    const rows = await this.db.selectFrom('retention_policies').select(['company_id', 'content_days', 'by_event_type']).execute();
    return rows.filter((r) => r.content_days !== null || r.by_event_type !== '{}').map((r) => r.company_id);
  }

  /**
   * Runs `fn` holding the company's retention lock, or returns undefined when another run holds it.
   * PostgreSQL: a session advisory lock on a connection held for the run, so a process that dies
   * releases it with its connection; SQLite (one process): a lock in this process.
   */
  async withRetentionLock<T>(companyId: string, fn: () => Promise<T>): Promise<T | undefined> {
    if (this.store.kind === 'sqlite') {
      if (this.running.has(companyId)) return undefined;
      this.running.add(companyId);
      try {
        return await fn();
      } finally {
        this.running.delete(companyId);
      }
    }
    const key = `audit-ledger/retention/${companyId}`;
    return this.db.connection().execute(async (conn) => {
      const got = await sql<{ ok: boolean }>`SELECT pg_try_advisory_lock(hashtext(${key})) AS ok`.execute(conn);
      if (!got.rows[0]?.ok) return undefined;
      try {
        return await fn();
      } finally {
        await sql`SELECT pg_advisory_unlock(hashtext(${key}))`.execute(conn);
      }
    });
  }

  async finishRetentionRun(companyId: string, at: string, erased: number): Promise<void> {
    await this.db
      .updateTable('retention_policies')
      .set((eb) => ({ last_run_at: at, erased_total: eb('erased_total', '+', erased) }))
      .where('company_id', '=', companyId)
      .execute();
  }

  /**
   * Up to `limit` erasable entries (seq above `afterSeq`) whose content is older than its cutoff:
   * `byType` cutoffs for their event types, `otherwise` for the rest (null: kept).
   */
  async dueForRetention(companyId: string, byType: Record<string, string>, otherwise: string | null, afterSeq: number, limit: number): Promise<LogEntryRow[]> {
    const types = Object.keys(byType);
    const cutoffs = [...Object.values(byType), ...(otherwise === null ? [] : [otherwise])];
    if (cutoffs.length === 0) return [];
    // Nothing at or after the latest cutoff can be due: a seq bound found on the primary key
    // (time-bounds.ts), so a pass that finds nothing left reads no more than the due range.
    const latest = cutoffs.reduce((a, b) => (Date.parse(a) >= Date.parse(b) ? a : b));
    const end = await firstSeqAtOrAfter(this.store, companyId, latest);
    return this.db
      .selectFrom('log_entries')
      .selectAll()
      .where('company_id', '=', companyId)
      .where('seq', '>', afterSeq)
      .where('seq', '<', end)
      .where(erasable)
      .where((eb) => {
        const due: Expression<SqlBool>[] = types.map((t) => eb.and([eb('event_type', '=', t), eb('created_at', '<', byType[t] as string)]));
        if (otherwise !== null) due.push(types.length > 0 ? eb.and([eb('event_type', 'not in', types), eb('created_at', '<', otherwise)]) : eb('created_at', '<', otherwise));
        return due.length > 0 ? eb.or(due) : eb.val(false);
      })
      .orderBy('seq')
      .limit(limit)
      .execute();
  }

  // ---- holds ----

  async insertHold(row: HoldRow): Promise<void> {
    await this.db.insertInto('legal_holds').values(row).execute();
  }

  listHolds(companyId: string): Promise<HoldRow[]> {
    return this.db.selectFrom('legal_holds').selectAll().where('company_id', '=', companyId).orderBy('created_at').orderBy('hold_id').execute();
  }

  activeHolds(companyId: string): Promise<HoldRow[]> {
    return this.db.selectFrom('legal_holds').selectAll().where('company_id', '=', companyId).where('released_at', 'is', null).orderBy('created_at').execute();
  }

  getHold(companyId: string, holdId: string): Promise<HoldRow | undefined> {
    return this.db.selectFrom('legal_holds').selectAll().where('company_id', '=', companyId).where('hold_id', '=', holdId).executeTakeFirst();
  }

  /** Releases an active hold; false when it was already released. */
  async releaseHold(companyId: string, holdId: string, at: string, by: string, reason: string): Promise<boolean> {
    const r = await this.db
      .updateTable('legal_holds')
      .set({ released_at: at, released_by: by, release_reason: reason })
      .where('company_id', '=', companyId)
      .where('hold_id', '=', holdId)
      .where('released_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  // ---- erasures ----

  /**
   * Entries whose data holds the JSON string `value` at one of the JSON paths (each a list of
   * member names): a string equal to it, never a number, boolean, object or array that prints the
   * same (`"259398927"` does not match 259398927, nor `"true"` true). Not indexed.
   */
  entriesBySubject(companyId: string, paths: string[][], value: string): Promise<LogEntryRow[]> {
    if (paths.length === 0) return Promise.resolve([]);
    return this.db
      .selectFrom('log_entries')
      .selectAll()
      .where('company_id', '=', companyId)
      .where('data', 'is not', null)
      .where((eb) => {
        const at = (p: string[]) => {
          if (this.store.kind === 'sqlite') {
            const path = '$' + p.map((m) => `."${m.replace(/"/g, '')}"`).join('');
            return eb.and([eb(sql<string>`json_type(data, ${path})`, '=', 'text'), eb(sql<string>`json_extract(data, ${path})`, '=', value)]);
          }
          return eb(sql<string>`(data::jsonb #> ${sql.val(p)}::text[])`, '=', sql<string>`to_jsonb(${value}::text)`);
        };
        // An approval request's arguments are the agent's: the subject is looked for in them too.
        const request = eb.and([eb('source', '=', ERASABLE_SERVICE_ENTRY.source), eb('event_type', '=', ERASABLE_SERVICE_ENTRY.event_type), eb.or(paths.map((p) => at(['arguments', ...p])))]);
        return eb.or([...paths.map(at), request]);
      })
      .orderBy('seq')
      .execute();
  }

  async insertErasures(rows: ErasureRow[]): Promise<void> {
    if (rows.length > 0) await this.db.insertInto('erasures').values(rows).execute();
  }

  /** Erasures chosen but not yet applied (a crash came between): applied again at the next run. */
  unfinishedErasures(companyId?: string): Promise<ErasureRow[]> {
    let q = this.db.selectFrom('erasures').selectAll().where('status', '!=', 'applied');
    if (companyId !== undefined) q = q.where('company_id', '=', companyId);
    return q.orderBy('created_at').orderBy('erasure_id').execute();
  }

  async markRecorded(companyId: string, erasureId: string, recordLogId: string): Promise<void> {
    await this.db.updateTable('erasures').set({ status: 'recorded', record_log_id: recordLogId }).where('company_id', '=', companyId).where('erasure_id', '=', erasureId).execute();
  }

  /**
   * Removes the content of the listed entries that still have it, and marks the erasure applied,
   * in one transaction. Returns how many entries it erased (0 on a repeat).
   */
  async applyErasure(e: ErasureRow & { record_log_id: string }, at: string): Promise<number> {
    const ids = JSON.parse(e.log_ids) as string[];
    // The search index never holds erased content once the erasure answers (store/search-index.ts).
    // SQLite's is another file: its words go, and the entries are kept out of it, first; a crash
    // after that leaves them out until this erasure is applied again. PostgreSQL's goes below, in
    // this transaction, after the company's indexer position is locked (a batch in flight ends first).
    await this.store.searchIndex?.forget?.(e.company_id, ids);
    const pg = this.store.kind === 'postgres';
    return this.db.transaction().execute(async (trx) => {
      let erased = 0;
      if (pg) {
        // Made when missing, as the indexer makes it: a first batch in flight holds it, and is waited for.
        await sql`INSERT INTO search_positions (company_id, indexed_seq) VALUES (${e.company_id}, -1) ON CONFLICT (company_id) DO NOTHING`.execute(trx);
        await sql`SELECT indexed_seq FROM search_positions WHERE company_id = ${e.company_id} FOR UPDATE`.execute(trx);
      }
      for (let i = 0; i < ids.length; i += 500) {
        const q = trx
          .updateTable('log_entries')
          .set({ data: null, extra: null, content_salt: null, erased_at: at, erasure_id: e.record_log_id })
          .where('company_id', '=', e.company_id)
          .where('log_id', 'in', ids.slice(i, i + 500))
          .where('format_version', '>=', 2)
          .where('content_salt', 'is not', null);
        const seqs = (await q.returning('seq').execute()).map((r) => Number(r.seq));
        if (pg && seqs.length > 0) await sql`DELETE FROM log_search WHERE company_id = ${e.company_id} AND seq = ANY(${seqs}::int8[])`.execute(trx);
        erased += seqs.length;
        // The read model of an approval request whose entry is erased loses the same content
        // (the agent's arguments and reason); action and arguments_hash stay, so the binding holds.
        await trx.updateTable('approvals').set({ arguments: null, reason: null }).where('company_id', '=', e.company_id).where('kind', '=', 'request').where('log_id', 'in', ids.slice(i, i + 500)).execute();
      }
      const total = e.erased_count + erased;
      await trx.updateTable('erasures').set({ status: 'applied', applied_at: at, erased_count: total }).where('company_id', '=', e.company_id).where('erasure_id', '=', e.erasure_id).execute();
      return erased;
    });
  }

  /**
   * Removes the copies of erased content that the database keeps beside the live rows, once an
   * erasure is applied. SQLite: the rows were rewritten with secure_delete (zeroed in place), but
   * the WAL still holds every earlier image of their pages, the erased text and salt included,
   * until a checkpoint; a TRUNCATE checkpoint copies the erased pages into the database file and
   * empties the WAL. It waits for readers (busy_timeout) and is tried again while one holds it.
   * PostgreSQL has no such setting: the old row versions stay in the table's freed space and in
   * WAL until reused, and a plain VACUUM does not overwrite them (measured; docs/compliance.md
   * says what the operator does about it), so nothing is done here. Returns whether it completed.
   */
  async scrubErasedContent(): Promise<boolean> {
    if (this.store.kind !== 'sqlite') return true;
    // The search index's file first (store/sqlite-search-file.ts purgeIndex): words of erased entries it still kept.
    await this.store.searchIndex?.purge?.();
    for (let attempt = 0; attempt < 5; attempt++) {
      const r = await sql<{ busy: number }>`PRAGMA wal_checkpoint(TRUNCATE)`.execute(this.db);
      if (r.rows[0]?.busy === 0) return true;
    }
    return false;
  }

  listErasures(companyId: string, requestId?: string): Promise<ErasureRow[]> {
    let q = this.db.selectFrom('erasures').selectAll().where('company_id', '=', companyId);
    if (requestId !== undefined) q = q.where('request_id', '=', requestId);
    return q.orderBy('created_at').orderBy('erasure_id').execute();
  }

  /** Erasures not yet applied, for the integrity status. */
  async pendingErasureCount(companyId: string): Promise<number> {
    const r = await this.db.selectFrom('erasures').select((eb) => eb.fn.countAll<number>().as('n')).where('company_id', '=', companyId).where('status', '!=', 'applied').executeTakeFirst();
    return Number(r?.n ?? 0);
  }
}
