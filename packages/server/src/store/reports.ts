// Storage and the period aggregates of compliance reports: counts by type, agent and day over a
// time range, the range's seq bounds, and the records a report lists. Every query is one company's.
import { type Selectable, sql } from 'kysely';
import type { CheckpointRow, LogEntryRow } from './chain.js';
import type { DbHandle } from './handle.js';
import { seqBoundsOf } from './time-bounds.js';
import type { ComplianceReportsTable } from './schema.js';

export type ReportRow = Selectable<ComplianceReportsTable>;

export interface Period {
  from: string;
  to: string;
}

export class ReportStore {
  constructor(private readonly store: DbHandle) {}

  private get db() {
    return this.store.db;
  }

  async insert(row: ReportRow): Promise<void> {
    await this.db.insertInto('compliance_reports').values(row).execute();
  }

  get(companyId: string, reportId: string): Promise<ReportRow | undefined> {
    return this.db.selectFrom('compliance_reports').selectAll().where('company_id', '=', companyId).where('report_id', '=', reportId).executeTakeFirst();
  }

  list(companyId: string): Promise<Array<Omit<ReportRow, 'document'>>> {
    return this.db.selectFrom('compliance_reports').select(['company_id', 'report_id', 'period_from', 'period_to', 'created_at', 'created_by']).where('company_id', '=', companyId).orderBy('created_at', 'desc').orderBy('report_id').execute();
  }

  /** The period's entries: a seq range found on the primary key (time-bounds.ts). */
  private async inPeriod(companyId: string, p: Period) {
    const b = await seqBoundsOf(this.store, companyId, p.from, p.to);
    return this.db.selectFrom('log_entries').where('company_id', '=', companyId).where('seq', '>=', b.first ?? 0).where('seq', '<', b.end ?? 0);
  }

  async countBy(companyId: string, p: Period, column: 'event_type' | 'agent_id'): Promise<Array<{ key: string | null; count: number }>> {
    const rows = await (await this.inPeriod(companyId, p)).select([column, (eb) => eb.fn.countAll<number | string>().as('n')]).groupBy(column).orderBy(column).execute();
    return rows.map((r) => ({ key: (r as Record<string, string | null>)[column] ?? null, count: Number(r.n) }));
  }

  async perDay(companyId: string, p: Period): Promise<Map<string, number>> {
    const day = sql<string>`substr(created_at, 1, 10)`;
    const rows = await (await this.inPeriod(companyId, p)).select([day.as('day'), (eb) => eb.fn.countAll<number | string>().as('n')]).groupBy(day).execute();
    return new Map(rows.map((r) => [r.day, Number(r.n)]));
  }

  /** The first and last seq appended in the period, or null when nothing was. */
  async seqRange(companyId: string, p: Period): Promise<{ first: number; last: number } | null> {
    const b = await seqBoundsOf(this.store, companyId, p.from, p.to);
    const first = b.first ?? 0;
    const end = b.end ?? 0;
    return first < end ? { first, last: end - 1 } : null;
  }

  async entriesOfType(companyId: string, p: Period, eventType: string, limit: number): Promise<LogEntryRow[]> {
    return (await this.inPeriod(companyId, p)).selectAll().where('event_type', '=', eventType).orderBy('seq').limit(limit).execute();
  }

  /** Checkpoints signed in the period: how many, and the last (which covers every entry of the period appended before it). */
  async checkpoints(companyId: string, p: Period): Promise<{ count: number; first: CheckpointRow | undefined; last: CheckpointRow | undefined }> {
    const q = this.db.selectFrom('checkpoints').where('company_id', '=', companyId).where('timestamp', '>=', p.from).where('timestamp', '<', p.to);
    const n = await q.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirst();
    const first = await q.selectAll().orderBy('tree_size').limit(1).executeTakeFirst();
    const last = await q.selectAll().orderBy('tree_size', 'desc').limit(1).executeTakeFirst();
    return { count: Number(n?.n ?? 0), first, last };
  }

  violations(companyId: string, seqs: { first: number; last: number }) {
    return this.db.selectFrom('integrity_violations').selectAll().where('company_id', '=', companyId).where('seq', '>=', seqs.first).where('seq', '<=', seqs.last).orderBy('seq').limit(1000).execute();
  }
}
