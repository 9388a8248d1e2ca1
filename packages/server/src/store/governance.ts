// Storage of the governance read models (migration 0011): approvals and standing approvals,
// reviewer teams, the checks ingestion recorded, policy versions and incidents. The ledger
// entries are the record; these rows answer queries and serialize decisions: every change of an
// approval's state is one conditional UPDATE, so two processes (or two reviewers) cannot both win.
import type { Selectable, Updateable } from 'kysely';
import type { DbHandle } from './handle.js';
import type {
  ApprovalKind,
  ApprovalsTable,
  ApprovalStatus,
  ApprovalTeamsTable,
  GovernanceChecksTable,
  IncidentNotesTable,
  IncidentReportsTable,
  IncidentsTable,
  PolicyVersionsTable,
} from './schema.js';

export type ApprovalRow = Selectable<ApprovalsTable>;
export type TeamRow = Selectable<ApprovalTeamsTable>;
export type CheckRow = Selectable<GovernanceChecksTable>;
export type PolicyVersionRow = Selectable<PolicyVersionsTable>;
export type IncidentRow = Selectable<IncidentsTable>;
export type IncidentNoteRow = Selectable<IncidentNotesTable>;
export type IncidentReportRow = Selectable<IncidentReportsTable>;

export interface ApprovalQuery {
  kind: ApprovalKind;
  /** As answered: `pending` is pending and not past expires_at; `expired` includes the pending past it (the sweep records them later). */
  status?: ApprovalStatus | undefined;
  /** The instant `status` is judged at (ISO); required with status pending or expired. */
  now?: string | undefined;
  team?: string | undefined;
  trace_id?: string | undefined;
  decision_id?: string | undefined;
  /** Continue after this approval_id (newest first). */
  before?: string | undefined;
  limit: number;
}

export class GovernanceStore {
  constructor(private readonly store: DbHandle) {}

  private get db() {
    return this.store.db;
  }

  // ---- approvals ----

  async insertApproval(row: ApprovalRow): Promise<void> {
    await this.db.insertInto('approvals').values(row).execute();
  }

  getApproval(companyId: string, approvalId: string): Promise<ApprovalRow | undefined> {
    return this.db.selectFrom('approvals').selectAll().where('company_id', '=', companyId).where('approval_id', '=', approvalId).executeTakeFirst();
  }

  listApprovals(companyId: string, q: ApprovalQuery): Promise<ApprovalRow[]> {
    let s = this.db.selectFrom('approvals').selectAll().where('company_id', '=', companyId).where('kind', '=', q.kind);
    const now = q.now ?? '9999-12-31T23:59:59.999Z';
    if (q.status === 'pending') s = s.where('status', '=', 'pending').where('expires_at', '>', now);
    else if (q.status === 'expired') s = s.where((eb) => eb.or([eb('status', '=', 'expired'), eb.and([eb('status', '=', 'pending'), eb('expires_at', '<=', now)])]));
    else if (q.status !== undefined) s = s.where('status', '=', q.status);
    if (q.team !== undefined) s = s.where((eb) => eb.or([eb('team', '=', q.team as string), eb('assignee', '=', q.team as string)]));
    if (q.trace_id !== undefined) s = s.where('trace_id', '=', q.trace_id);
    if (q.decision_id !== undefined) s = s.where('decision_id', '=', q.decision_id);
    if (q.before !== undefined) s = s.where('approval_id', '<', q.before);
    return s.orderBy('approval_id', 'desc').limit(q.limit).execute();
  }

  /**
   * Changes an approval only if it is still as the caller read it (its status and its approvers):
   * false when someone else changed it first.
   */
  async updateIf(companyId: string, approvalId: string, was: Pick<ApprovalRow, 'status' | 'approvers'>, set: Updateable<ApprovalsTable>): Promise<boolean> {
    const r = await this.db
      .updateTable('approvals')
      .set(set)
      .where('company_id', '=', companyId)
      .where('approval_id', '=', approvalId)
      .where('status', '=', was.status)
      .where('approvers', '=', was.approvers)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /**
   * Takes one use of each check's approval, in order, in one transaction: for each, a conditional
   * update (approved, not expired, uses left: two executions racing for the last use cannot both
   * get it, on either store or across processes) and the mark of its execution. Answers, per check,
   * the approval's uses after its take, or null when none was taken (the rule refused it, or the
   * execution was already checked and took its use: this one is given back in the same transaction).
   */
  async takeUsesFor(checks: Array<Omit<CheckRow, 'result' | 'check_log_id'>>, now: string): Promise<Array<number | null>> {
    if (checks.length === 0) return [];
    return this.db.transaction().execute(async (trx) => {
      const out: Array<number | null> = [];
      for (const check of checks) {
        const r = await trx
          .updateTable('approvals')
          .set((eb) => ({ uses: eb('uses', '+', 1), updated_at: now }))
          .where('company_id', '=', check.company_id)
          .where('approval_id', '=', check.subject_id)
          .where('status', '=', 'approved')
          .where('expires_at', '>', now)
          .where((eb) => eb.or([eb('max_uses', 'is', null), eb('uses', '<', eb.ref('max_uses'))]))
          .returning('uses')
          .executeTakeFirst();
        if (!r) {
          out.push(null);
          continue;
        }
        const marked = await trx.insertInto('governance_checks').values({ ...check, result: 'ok', check_log_id: null }).onConflict((oc) => oc.columns(['company_id', 'log_id', 'kind']).doNothing()).executeTakeFirst();
        if (Number(marked.numInsertedOrUpdatedRows ?? 0n) !== 1) {
          await trx.updateTable('approvals').set((eb) => ({ uses: eb('uses', '-', 1) })).where('company_id', '=', check.company_id).where('approval_id', '=', check.subject_id).execute();
          out.push(null);
          continue;
        }
        out.push(Number(r.uses));
      }
      return out;
    });
  }

  /** Records the `approval.checked` entries of checks taken with takeUsesFor, in one transaction. */
  async setCheckEntries(companyId: string, entries: Array<{ logId: string; checkLogId: string }>): Promise<void> {
    if (entries.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      for (const e of entries) await trx.updateTable('governance_checks').set({ check_log_id: e.checkLogId }).where('company_id', '=', companyId).where('log_id', '=', e.logId).where('kind', '=', 'approval').where('check_log_id', 'is', null).execute();
    });
  }

  /** Pending requests (of one company, or every one) whose SLA ran out and that were not escalated yet. */
  slaBreached(now: string, limit: number, companyId?: string): Promise<ApprovalRow[]> {
    let q = this.db.selectFrom('approvals').selectAll().where('status', '=', 'pending').where('sla_due_at', '<=', now).where('escalated_at', 'is', null);
    if (companyId !== undefined) q = q.where('company_id', '=', companyId);
    return q.orderBy('sla_due_at').limit(limit).execute();
  }

  /** Pending requests (of one company, or every one) past their expiry. */
  expiredPending(now: string, limit: number, companyId?: string): Promise<ApprovalRow[]> {
    let q = this.db.selectFrom('approvals').selectAll().where('status', '=', 'pending').where('kind', '=', 'request').where('expires_at', '<=', now);
    if (companyId !== undefined) q = q.where('company_id', '=', companyId);
    return q.orderBy('expires_at').limit(limit).execute();
  }

  /** Marks an SLA escalation once; false when another process did it first. */
  async markEscalated(companyId: string, approvalId: string, assignee: string | null, now: string): Promise<boolean> {
    const r = await this.db
      .updateTable('approvals')
      .set({ escalated_at: now, assignee, updated_at: now })
      .where('company_id', '=', companyId)
      .where('approval_id', '=', approvalId)
      .where('status', '=', 'pending')
      .where('escalated_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  // ---- teams ----

  async putTeam(row: TeamRow): Promise<void> {
    await this.db
      .insertInto('approval_teams')
      .values(row)
      .onConflict((oc) =>
        oc.columns(['company_id', 'name']).doUpdateSet({ members: row.members, sla_minutes: row.sla_minutes, escalation_target: row.escalation_target, match_actions: row.match_actions, match_risks: row.match_risks, limits: row.limits, updated_at: row.updated_at }),
      )
      .execute();
  }

  listTeams(companyId: string): Promise<TeamRow[]> {
    return this.db.selectFrom('approval_teams').selectAll().where('company_id', '=', companyId).orderBy('created_at').orderBy('name').execute();
  }

  getTeam(companyId: string, name: string): Promise<TeamRow | undefined> {
    return this.db.selectFrom('approval_teams').selectAll().where('company_id', '=', companyId).where('name', '=', name).executeTakeFirst();
  }

  async deleteTeam(companyId: string, name: string): Promise<boolean> {
    const r = await this.db.deleteFrom('approval_teams').where('company_id', '=', companyId).where('name', '=', name).executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  }

  // ---- checks ----

  /** Checks with their results, in one statement; the first record of an entry's check stands (a repeat changes nothing). */
  async insertChecks(rows: CheckRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.db.insertInto('governance_checks').values(rows).onConflict((oc) => oc.columns(['company_id', 'log_id', 'kind']).doNothing()).execute();
  }

  getChecks(companyId: string, logIds: string[]): Promise<CheckRow[]> {
    if (logIds.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('governance_checks').selectAll().where('company_id', '=', companyId).where('log_id', 'in', logIds).execute();
  }

  checksOf(companyId: string, subjectId: string): Promise<CheckRow[]> {
    return this.db.selectFrom('governance_checks').selectAll().where('company_id', '=', companyId).where('subject_id', '=', subjectId).orderBy('created_at').limit(1000).execute();
  }

  /** Every check of a company in a time range (period reports). */
  checksBetween(companyId: string, from: string, to: string): Promise<CheckRow[]> {
    return this.db.selectFrom('governance_checks').selectAll().where('company_id', '=', companyId).where('created_at', '>=', from).where('created_at', '<', to).limit(100_000).execute();
  }

  approvalsBetween(companyId: string, from: string, to: string): Promise<ApprovalRow[]> {
    return this.db.selectFrom('approvals').selectAll().where('company_id', '=', companyId).where('created_at', '>=', from).where('created_at', '<', to).limit(100_000).execute();
  }

  // ---- policies ----

  latestVersion(companyId: string, policyId: string): Promise<PolicyVersionRow | undefined> {
    return this.db.selectFrom('policy_versions').selectAll().where('company_id', '=', companyId).where('policy_id', '=', policyId).orderBy('version', 'desc').limit(1).executeTakeFirst();
  }

  /** Inserts a version; false when that version number was taken meanwhile. */
  async insertVersion(row: PolicyVersionRow): Promise<boolean> {
    try {
      await this.db.insertInto('policy_versions').values(row).execute();
      return true;
    } catch (err) {
      if (this.store.uniqueViolation(err) !== undefined) return false;
      throw err;
    }
  }

  /** Sets the entry that records a reserved version, once it is committed. */
  async setVersionEntry(companyId: string, policyId: string, version: number, logId: string, createdAt: string): Promise<void> {
    await this.db.updateTable('policy_versions').set({ log_id: logId, created_at: createdAt }).where('company_id', '=', companyId).where('policy_id', '=', policyId).where('version', '=', version).execute();
  }

  /** Gives back a reserved version whose entry could not be appended. */
  async deleteVersion(companyId: string, policyId: string, version: number): Promise<void> {
    await this.db.deleteFrom('policy_versions').where('company_id', '=', companyId).where('policy_id', '=', policyId).where('version', '=', version).where('log_id', '=', '').execute();
  }

  getVersion(companyId: string, policyId: string, version: number): Promise<PolicyVersionRow | undefined> {
    return this.db.selectFrom('policy_versions').selectAll().where('company_id', '=', companyId).where('policy_id', '=', policyId).where('version', '=', version).where('log_id', '<>', '').executeTakeFirst();
  }

  versionByHash(companyId: string, policyId: string, contentHash: string): Promise<PolicyVersionRow | undefined> {
    return this.db.selectFrom('policy_versions').selectAll().where('company_id', '=', companyId).where('policy_id', '=', policyId).where('content_hash', '=', contentHash).where('log_id', '<>', '').limit(1).executeTakeFirst();
  }

  listVersions(companyId: string, policyId: string): Promise<PolicyVersionRow[]> {
    return this.db.selectFrom('policy_versions').selectAll().where('company_id', '=', companyId).where('policy_id', '=', policyId).where('log_id', '<>', '').orderBy('version', 'desc').limit(1000).execute();
  }

  /** Each policy with its latest version number and when that was created. */
  async listPolicies(companyId: string): Promise<Array<{ policy_id: string; versions: number }>> {
    const rows = await this.db
      .selectFrom('policy_versions')
      .select(['policy_id', (eb) => eb.fn.max('version').as('versions')])
      .where('company_id', '=', companyId)
      .groupBy('policy_id')
      .orderBy('policy_id')
      .limit(1000)
      .execute();
    return rows.map((r) => ({ policy_id: r.policy_id, versions: Number(r.versions) }));
  }

  // ---- incidents ----

  async insertIncident(row: IncidentRow): Promise<void> {
    await this.db.insertInto('incidents').values(row).execute();
  }

  getIncident(companyId: string, incidentId: string): Promise<IncidentRow | undefined> {
    return this.db.selectFrom('incidents').selectAll().where('company_id', '=', companyId).where('incident_id', '=', incidentId).executeTakeFirst();
  }

  listIncidents(companyId: string, q: { status?: string | undefined; before?: string | undefined; limit: number }): Promise<IncidentRow[]> {
    let s = this.db.selectFrom('incidents').selectAll().where('company_id', '=', companyId);
    if (q.status !== undefined) s = s.where('status', '=', q.status as IncidentRow['status']);
    if (q.before !== undefined) s = s.where('incident_id', '<', q.before);
    return s.orderBy('incident_id', 'desc').limit(q.limit).execute();
  }

  async updateIncident(companyId: string, incidentId: string, set: Updateable<IncidentsTable>): Promise<void> {
    await this.db.updateTable('incidents').set(set).where('company_id', '=', companyId).where('incident_id', '=', incidentId).execute();
  }

  async insertNote(row: IncidentNoteRow): Promise<void> {
    await this.db.insertInto('incident_notes').values(row).execute();
  }

  notes(companyId: string, incidentId: string): Promise<IncidentNoteRow[]> {
    return this.db.selectFrom('incident_notes').selectAll().where('company_id', '=', companyId).where('incident_id', '=', incidentId).orderBy('note_id').limit(10_000).execute();
  }

  async insertReport(row: IncidentReportRow): Promise<void> {
    await this.db.insertInto('incident_reports').values(row).execute();
  }

  getReport(companyId: string, reportId: string): Promise<IncidentReportRow | undefined> {
    return this.db.selectFrom('incident_reports').selectAll().where('company_id', '=', companyId).where('report_id', '=', reportId).executeTakeFirst();
  }
}
