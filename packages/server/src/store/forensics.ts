// Storage for replay sessions. A session's events are read from log_entries by trace_id,
// below the session's pinned tree_size.
import type { Selectable } from 'kysely';
import type { ReplaySessionsTable } from './schema.js';
import type { DbHandle } from './handle.js';

export type ReplaySession = Selectable<ReplaySessionsTable>;

export class ForensicsStore {
  constructor(private readonly store: DbHandle) {}

  private get db() {
    return this.store.db;
  }

  async countTraceEntries(companyId: string, traceId: string, seqBelow: number): Promise<number> {
    const r = await this.db
      .selectFrom('log_entries')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('company_id', '=', companyId)
      .where('trace_id', '=', traceId)
      .where('seq', '<', seqBelow)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async insertSession(s: ReplaySession): Promise<void> {
    await this.db.insertInto('replay_sessions').values(s).execute();
  }

  getSession(companyId: string, sessionId: string): Promise<ReplaySession | undefined> {
    return this.db.selectFrom('replay_sessions').selectAll().where('company_id', '=', companyId).where('session_id', '=', sessionId).executeTakeFirst();
  }

  /** Newest first; `before` is the last session_id of the previous page. */
  listSessions(companyId: string, f: { traceId?: string; before?: string; limit: number }): Promise<ReplaySession[]> {
    let q = this.db.selectFrom('replay_sessions').selectAll().where('company_id', '=', companyId);
    if (f.traceId !== undefined) q = q.where('trace_id', '=', f.traceId);
    if (f.before !== undefined) q = q.where('session_id', '<', f.before);
    return q.orderBy('session_id', 'desc').limit(f.limit).execute();
  }

  /** Marks the session's anomaly as reported; true only for the call that marked it. */
  async markAnomalyReported(companyId: string, sessionId: string, at: string): Promise<boolean> {
    const r = await this.db
      .updateTable('replay_sessions')
      .set({ anomaly_reported_at: at })
      .where('company_id', '=', companyId)
      .where('session_id', '=', sessionId)
      .where('anomaly_reported_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }
}
