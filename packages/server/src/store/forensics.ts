// Storage for replay sessions. A session's events are read from log_entries by trace_id,
// below the session's pinned tree_size.
import type { Selectable } from 'kysely';
import type { ReplaySessionsTable } from './schema.js';
import type { DbHandle } from './handle.js';

export type ReplaySession = Selectable<ReplaySessionsTable>;

export interface TraceSummary {
  trace_id: string;
  first_at: string;
  last_at: string;
  event_count: number;
  last_seq: number;
  agents: string[];
  anomaly_detected: boolean | null;
  /** The root cause type of the latest replay that reported an anomaly; null when none did (or it predates the type). */
  anomaly_type: string | null;
}

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

  /**
   * The company's traces, most recently active first: first and last created_at, event count,
   * the agents seen, and whether a replay of it has found an anomaly (null: never replayed).
   * `beforeSeq` is the previous page's last `last_seq`. One GROUP BY over the trace_id index.
   */
  async traceSummaries(companyId: string, f: { beforeSeq?: number | undefined; limit: number }): Promise<TraceSummary[]> {
    let q = this.db
      .selectFrom('log_entries')
      .select((eb) => [
        eb.ref('trace_id').$notNull().as('trace_id'),
        eb.fn.min('created_at').as('first_at'),
        eb.fn.max('created_at').as('last_at'),
        eb.fn.countAll<number | string>().as('event_count'),
        eb.fn.max('seq').as('last_seq'),
      ])
      .where('company_id', '=', companyId)
      .where('trace_id', 'is not', null)
      .groupBy('trace_id');
    if (f.beforeSeq !== undefined) q = q.having((eb) => eb.fn.max('seq'), '<', f.beforeSeq);
    const rows = await q.orderBy('last_seq', 'desc').limit(f.limit).execute();
    if (rows.length === 0) return [];
    const ids = rows.map((r) => r.trace_id);
    const [agents, replays] = await Promise.all([
      this.db.selectFrom('log_entries').select(['trace_id', 'agent_id']).distinct().where('company_id', '=', companyId).where('trace_id', 'in', ids).where('agent_id', 'is not', null).execute(),
      this.db
        .selectFrom('replay_sessions')
        .select((eb) => ['trace_id', eb.fn.max('anomaly_reported_at').as('anomaly_at'), eb.fn.countAll<number | string>().as('n')])
        .where('company_id', '=', companyId)
        .where('trace_id', 'in', ids)
        .groupBy('trace_id')
        .execute(),
    ]);
    const reported = await this.db
      .selectFrom('replay_sessions')
      .select(['trace_id', 'anomaly_reported_at', 'anomaly_type'])
      .where('company_id', '=', companyId)
      .where('trace_id', 'in', ids)
      .where('anomaly_reported_at', 'is not', null)
      .orderBy('anomaly_reported_at')
      .execute();
    const typeOf = new Map(reported.map((r) => [r.trace_id, r.anomaly_type])); // the latest wins
    return rows.map((r) => {
      const replay = replays.find((x) => x.trace_id === r.trace_id);
      return {
        trace_id: r.trace_id,
        first_at: String(r.first_at),
        last_at: String(r.last_at),
        event_count: Number(r.event_count),
        last_seq: Number(r.last_seq),
        agents: agents.filter((a) => a.trace_id === r.trace_id).map((a) => a.agent_id as string).sort(),
        anomaly_detected: replay ? replay.anomaly_at !== null : null,
        anomaly_type: typeOf.get(r.trace_id) ?? null,
      };
    });
  }

  /** Marks the session's anomaly as reported; true only for the call that marked it. */
  async markAnomalyReported(companyId: string, sessionId: string, at: string, type: string): Promise<boolean> {
    const r = await this.db
      .updateTable('replay_sessions')
      .set({ anomaly_reported_at: at, anomaly_type: type })
      .where('company_id', '=', companyId)
      .where('session_id', '=', sessionId)
      .where('anomaly_reported_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }
}
