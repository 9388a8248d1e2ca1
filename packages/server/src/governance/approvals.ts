// Approvals bound to the exact action (docs/governance.md), without HTTP. An agent asks for an
// action with its arguments; the service keeps the RFC 8785 SHA-256 of the arguments; reviewers
// (users, named by their session) approve, reject or escalate; a critical request needs two
// different approvers; nobody approves their own request. Every step is a ledger entry of the
// source audit-ledger/governance, committed before it is answered; the `approvals` table is the
// read model and the point where concurrent decisions are serialized (one conditional UPDATE
// each: a change is written only over the state it was decided on, then appended; if the append
// fails the change is undone).
// Standing approvals are the admin's scoped pre-approvals (an action, an agent, a JSON Schema on
// the arguments, a window, a number of uses). Executions that name an approval are checked in
// execution-check.ts. Reviewer teams (teams.ts) route requests, escalated once when their SLA runs out.
import { EventEmitter } from 'node:events';
import type { JsonObject } from '@audit-ledger/core';
import type { TrailActor } from '../ingestion/recorder.js';
import { GovernanceRefusal, InputError, NotFoundError } from '../kernel/domain-error.js';
import type { EventSink } from '../kernel/events.js';
import { iso } from '../kernel/time.js';
import { uuidv7 } from '../ledger/uuidv7.js';
import type { ApprovalRow, GovernanceStore } from '../store/governance.js';
import type { ApprovalStatus } from '../store/schema.js';
import { type ApprovalCheckResult, judge } from './execution-check.js';
import { compileConstraints } from './constraints.js';
import { Assignment, type AssignmentDeps } from './assignment.js';
import { canonicalHash } from './record.js';
import type { Trail } from '../ingestion/recorder.js';

import { approvalRow, approvalView, asActor, DEFAULT_EXPIRES_SECONDS, sameActor, type ApprovalRequestInput, type ApprovalView, type Approver, type Decider, type Risk, type StandingInput } from './approval-model.js';

export * from './approval-model.js';


export interface ApprovalsDeps {
  store: GovernanceStore;
  recorder: Trail;
  events: EventSink;
  clock: () => number;
  /** A reviewer or admin of the company (not disabled) by email: who a request may be escalated to in person (assignment.ts). */
  reviewerByEmail: AssignmentDeps['reviewerByEmail'];
  /** Checks that a policy version exists (the policy register). */
  policyVersionExists: (companyId: string, policyId: string, version: number | undefined) => Promise<boolean>;
  newId?: () => string;
}


export class Approvals {
  /** Wakes long-polls in this process when an approval changes (other processes are polled). */
  private readonly changed = new EventEmitter();
  private readonly newId: () => string;
  private readonly assignment: Assignment;

  constructor(private readonly deps: ApprovalsDeps) {
    this.changed.setMaxListeners(0);
    this.assignment = new Assignment(deps);
    this.newId = deps.newId ?? (() => uuidv7(deps.clock()));
  }

  private now(): number {
    return this.deps.clock();
  }

  async get(companyId: string, approvalId: string): Promise<ApprovalView> {
    return approvalView(await this.row(companyId, approvalId), this.now());
  }

  private async row(companyId: string, approvalId: string): Promise<ApprovalRow> {
    const row = await this.deps.store.getApproval(companyId, approvalId);
    if (!row) throw new NotFoundError(`approval ${approvalId} not found`);
    return row;
  }

  /**
   * Answers once the approval is decided (or expired), or when `waitSeconds` pass, whichever is
   * first; `signal` ends the wait early (the client went away). Decisions in this process wake it
   * at once; those of other processes are seen within a second.
   */
  async waitFor(companyId: string, approvalId: string, waitSeconds: number, signal?: AbortSignal): Promise<ApprovalView> {
    const deadline = Date.now() + waitSeconds * 1000;
    for (;;) {
      const view = await this.get(companyId, approvalId);
      const left = deadline - Date.now();
      if (view.status !== 'pending' || left <= 0 || signal?.aborted) return view;
      await new Promise<void>((resolve) => {
        const key = `${companyId}/${approvalId}`;
        const done = () => {
          clearTimeout(timer);
          this.changed.off(key, done);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, Math.min(1000, left));
        this.changed.on(key, done);
        signal?.addEventListener('abort', done);
      });
    }
  }

  private notify(companyId: string, approvalId: string): void {
    this.changed.emit(`${companyId}/${approvalId}`);
  }

  async list(companyId: string, q: { kind: 'request' | 'standing'; status?: ApprovalStatus | undefined; team?: string | undefined; trace_id?: string | undefined; decision_id?: string | undefined; before?: string | undefined; limit: number }): Promise<ApprovalView[]> {
    const now = this.now();
    return (await this.deps.store.listApprovals(companyId, { ...q, now: iso(now) })).map((r) => approvalView(r, now));
  }

  // ---- request ----

  async request(companyId: string, by: TrailActor, input: ApprovalRequestInput, field = '/body'): Promise<ApprovalView> {
    const now = this.now();
    const requestedRisk: Risk = input.risk ?? 'medium';
    const args = input.arguments === undefined ? {} : input.arguments;
    const argumentsHash = canonicalHash(args);
    if (input.policy && !(await this.deps.policyVersionExists(companyId, input.policy.policy_id, input.policy.version))) {
      throw new InputError([{ field: `${field}/policy`, message: `policy ${input.policy.policy_id}${input.policy.version === undefined ? '' : ` version ${input.policy.version}`} is not in the policy register` }]);
    }
    const { team, risk, limits } = await this.assignment.place(companyId, input, requestedRisk, field);
    const approvalId = this.newId();
    const expiresAt = iso(now + (input.expires_in_seconds ?? Math.min(DEFAULT_EXPIRES_SECONDS, limits.max_expires_in_seconds ?? DEFAULT_EXPIRES_SECONDS)) * 1000);
    const slaDueAt = team?.sla_minutes ? iso(now + team.sla_minutes * 60_000) : null;
    const required = risk === 'critical' ? 2 : 1;
    const maxUses = input.max_uses ?? 1;
    const appended = await this.deps.recorder.record(
      companyId,
      'approval.requested',
      by,
      {
        approval_id: approvalId,
        action: input.action,
        tool: input.tool ?? null,
        arguments: args as JsonObject,
        arguments_hash: argumentsHash,
        risk,
        requested_risk: input.risk ?? null,
        limits_from: limits.from,
        reason: input.reason ?? null,
        decision_id: input.decision_id ?? null,
        policy: input.policy ? { policy_id: input.policy.policy_id, version: input.policy.version ?? null } : null,
        team: team?.name ?? null,
        required_approvals: required,
        max_uses: maxUses,
        expires_at: expiresAt,
        sla_due_at: slaDueAt,
      },
      { trace_id: input.trace_id, agent_id: input.agent_id },
    );
    const row = approvalRow({
      company_id: companyId,
      approval_id: approvalId,
      kind: 'request',
      action: input.action,
      tool: input.tool ?? null,
      arguments: JSON.stringify(args),
      arguments_hash: argumentsHash,
      trace_id: input.trace_id ?? null,
      decision_id: input.decision_id ?? null,
      agent_id: input.agent_id ?? null,
      risk,
      reason: input.reason ?? null,
      policy_id: input.policy?.policy_id ?? null,
      policy_version: input.policy?.version ?? null,
      team: team?.name ?? null,
      status: 'pending',
      required_approvals: required,
      requested_by: JSON.stringify(by),
      log_id: appended.log_id,
      created_at: appended.created_at,
      valid_from: appended.created_at,
      expires_at: expiresAt,
      sla_due_at: slaDueAt,
      max_uses: maxUses,
    });
    await this.deps.store.insertApproval(row);
    const view = approvalView(row, now);
    await this.deps.events.emit(companyId, 'approval.requested', { approval_id: approvalId, action: input.action, risk, arguments_hash: argumentsHash, team: team?.name ?? null, expires_at: expiresAt, log_id: appended.log_id });
    return view;
  }

  // ---- decisions (users only: the routes accept no API key) ----

  async approve(companyId: string, decider: Decider, approvalId: string, reason: string | undefined): Promise<ApprovalView> {
    const user = asActor(decider);
    const row = await this.pendingRequest(companyId, approvalId);
    if (sameActor(JSON.parse(row.requested_by) as JsonObject, user)) throw new GovernanceRefusal('self_approval', 'nobody may approve their own request');
    const approvers = JSON.parse(row.approvers) as Approver[];
    if (approvers.some((a) => a.user_id === user.user_id)) throw new GovernanceRefusal('already_approved', `you already approved this request; it needs ${row.required_approvals} different approvers (four eyes)`);
    await this.assignment.checkMayDecide(companyId, row, decider);
    const at = iso(this.now());
    const count = approvers.length + 1;
    const final = count >= row.required_approvals;
    // The log_id of this approval is known only once appended: written after.
    const mine: Approver = { user_id: user.user_id, email: user.email, at, log_id: '' };
    const next = [...approvers, mine];
    const set = final ? { status: 'approved' as const, decided_at: at, decided_by: JSON.stringify(user), decision_reason: reason ?? null } : {};
    if (!(await this.deps.store.updateIf(companyId, approvalId, row, { approvers: JSON.stringify(next), updated_at: at, ...set }))) throw this.changedMeanwhile(approvalId);
    const changedRow = { ...row, approvers: JSON.stringify(next), ...(final ? { status: 'approved' as const } : {}) };
    const appended = await this.recordOrUndo(companyId, approvalId, changedRow, { approvers: row.approvers, status: row.status, decided_at: row.decided_at, decided_by: row.decided_by, decision_reason: row.decision_reason }, () =>
      this.deps.recorder.record(
        companyId,
        'approval.approved',
        user,
        { approval_id: approvalId, arguments_hash: row.arguments_hash, approvals: count, required_approvals: row.required_approvals, final, reason: reason ?? null },
        { trace_id: row.trace_id, agent_id: row.agent_id, parent_event_id: row.log_id },
      ),
    );
    await this.setApproverEntry(companyId, approvalId, user.user_id, appended.log_id);
    this.notify(companyId, approvalId);
    if (final) await this.deps.events.emit(companyId, 'approval.decided', { approval_id: approvalId, status: 'approved', decided_by: user, reason: reason ?? null, log_id: appended.log_id });
    return this.get(companyId, approvalId);
  }

  /**
   * Writes the log_id of an approver's committed entry into the read model. Until it is there the
   * approval counts as not yet given (approvalView, execution-check.ts judge): a process killed between the
   * change and its entry leaves an approval that never becomes usable, never one without its entry.
   */
  private async setApproverEntry(companyId: string, approvalId: string, userId: string, logId: string): Promise<void> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const row = await this.deps.store.getApproval(companyId, approvalId);
      if (!row) return;
      const approvers = (JSON.parse(row.approvers) as Approver[]).map((a) => (a.user_id === userId && a.log_id === '' ? { ...a, log_id: logId } : a));
      if (await this.deps.store.updateIf(companyId, approvalId, row, { approvers: JSON.stringify(approvers) })) return;
    }
  }

  async reject(companyId: string, decider: Decider, approvalId: string, reason: string): Promise<ApprovalView> {
    const user = asActor(decider);
    const row = await this.pendingRequest(companyId, approvalId);
    await this.assignment.checkMayDecide(companyId, row, decider);
    const at = iso(this.now());
    if (!(await this.deps.store.updateIf(companyId, approvalId, row, { status: 'rejected', decided_at: at, decided_by: JSON.stringify(user), decision_reason: reason, updated_at: at }))) throw this.changedMeanwhile(approvalId);
    const appended = await this.recordOrUndo(companyId, approvalId, { ...row, status: 'rejected' }, { status: 'pending', decided_at: null, decided_by: null, decision_reason: null }, () =>
      this.deps.recorder.record(companyId, 'approval.rejected', user, { approval_id: approvalId, arguments_hash: row.arguments_hash, reason }, { trace_id: row.trace_id, agent_id: row.agent_id, parent_event_id: row.log_id }),
    );
    this.notify(companyId, approvalId);
    await this.deps.events.emit(companyId, 'approval.decided', { approval_id: approvalId, status: 'rejected', decided_by: user, reason, log_id: appended.log_id });
    return this.get(companyId, approvalId);
  }

  /**
   * Hands a pending request to another team or to a person, by someone who may decide it now (an
   * admin, or a member of the team or the person it is assigned to): never by an API key (the
   * agent that asked must not choose who decides). The target must be one of the company's reviewer
   * teams, or a reviewer or admin of the company named by email; from then on only that team's
   * members, or that person, decide it (admins always may). An unknown target is refused: it would
   * otherwise leave a request that no team rule covers.
   */
  async escalate(companyId: string, decider: Decider, approvalId: string, to: string, reason: string, field = '/body/to'): Promise<ApprovalView> {
    const row = await this.pendingRequest(companyId, approvalId);
    await this.assignment.checkMayDecide(companyId, row, decider);
    const found = await this.assignment.escalationTarget(companyId, to, field);
    const team = 'team' in found ? found.team : undefined;
    const target = 'team' in found ? found.team.name : found.person;
    const at = iso(this.now());
    const set = { assignee: target, ...(team ? { team: team.name, sla_due_at: team.sla_minutes ? iso(this.now() + team.sla_minutes * 60_000) : null } : {}), updated_at: at };
    if (!(await this.deps.store.updateIf(companyId, approvalId, row, set))) throw this.changedMeanwhile(approvalId);
    const appended = await this.recordOrUndo(companyId, approvalId, row, { assignee: row.assignee, team: row.team, sla_due_at: row.sla_due_at }, () =>
      this.deps.recorder.record(companyId, 'approval.escalated', asActor(decider), { approval_id: approvalId, from: row.assignee ?? row.team, to: target, to_kind: team ? 'team' : 'person', reason, sla_breached: false }, { trace_id: row.trace_id, agent_id: row.agent_id, parent_event_id: row.log_id }),
    );
    this.notify(companyId, approvalId);
    await this.deps.events.emit(companyId, 'approval.escalated', { approval_id: approvalId, to: target, reason, sla_breached: false, log_id: appended.log_id });
    return this.get(companyId, approvalId);
  }

  private async pendingRequest(companyId: string, approvalId: string): Promise<ApprovalRow> {
    const row = await this.row(companyId, approvalId);
    if (row.kind !== 'request') throw new GovernanceRefusal('not_a_request', 'a standing approval is granted and revoked, not decided');
    if (row.status !== 'pending') throw new GovernanceRefusal('approval_not_pending', `the request is already ${row.status}`);
    if (Date.parse(row.expires_at) <= this.now()) throw new GovernanceRefusal('approval_expired', `the request expired (expires_at ${row.expires_at})`);
    return row;
  }

  private changedMeanwhile(approvalId: string): GovernanceRefusal {
    return new GovernanceRefusal('approval_changed', `approval ${approvalId} was changed by someone else meanwhile; read it again`);
  }

  /** Appends the entry that records a change already written; if the append fails, the change is undone and the failure passes on. */
  private async recordOrUndo<T>(companyId: string, approvalId: string, written: ApprovalRow, undo: Partial<ApprovalRow>, append: () => Promise<T>): Promise<T> {
    try {
      return await append();
    } catch (err) {
      const current = await this.deps.store.getApproval(companyId, approvalId).catch(() => undefined);
      if (current && current.status === written.status) await this.deps.store.updateIf(companyId, approvalId, current, undo).catch(() => undefined);
      throw err;
    }
  }

  /**
   * Whether these arguments would run under the approval now, without taking a use: recorded as
   * an `approval.precheck` entry (so the agent's self-check is on the record too).
   */
  async precheck(companyId: string, by: TrailActor, approvalId: string, input: { arguments: unknown; action?: string | undefined; agent_id?: string | undefined }) {
    const row = await this.row(companyId, approvalId);
    const now = iso(this.now());
    const verdict = judge(row, { action: input.action ?? row.action, tool: null, agent_id: input.agent_id ?? null, arguments: input.arguments, hasArguments: input.arguments !== undefined }, now);
    const argumentsHash = canonicalHash(input.arguments ?? null);
    const appended = await this.deps.recorder.record(companyId, 'approval.precheck', by, { approval_id: approvalId, result: verdict.result, detail: verdict.detail, arguments_hash: argumentsHash, approved_arguments_hash: row.arguments_hash }, { trace_id: row.trace_id, agent_id: input.agent_id ?? row.agent_id, parent_event_id: row.log_id });
    return { approval_id: approvalId, result: verdict.result as ApprovalCheckResult, detail: verdict.detail, arguments_hash: argumentsHash, approved_arguments_hash: row.arguments_hash, log_id: appended.log_id };
  }

  // ---- standing approvals (admins) ----

  async grantStanding(companyId: string, admin: TrailActor, input: StandingInput): Promise<ApprovalView> {
    const now = this.now();
    // Kept as UTC instants (an offset such as -05:00 is the same instant written otherwise): the
    // store compares these columns, and only one spelling per instant compares as instants do.
    const validFrom = iso(input.valid_from === undefined ? now : Date.parse(input.valid_from));
    const validUntil = iso(Date.parse(input.valid_until));
    if (Date.parse(validUntil) <= Date.parse(validFrom)) throw new InputError([{ field: '/body/valid_until', message: 'must be after valid_from' }]);
    if (input.constraints !== undefined) compileConstraints(companyId, input.constraints, '/body/constraints');
    const approvalId = this.newId();
    const appended = await this.deps.recorder.record(companyId, 'approval.standing_granted', admin, {
      approval_id: approvalId,
      action: input.action,
      tool: input.tool ?? null,
      agent_id: input.agent_id ?? null,
      constraints: input.constraints ?? null,
      valid_from: validFrom,
      valid_until: validUntil,
      max_uses: input.max_uses ?? null,
      reason: input.reason,
    });
    const row = approvalRow({
      company_id: companyId,
      approval_id: approvalId,
      kind: 'standing',
      action: input.action,
      tool: input.tool ?? null,
      constraints: input.constraints === undefined ? null : JSON.stringify(input.constraints),
      agent_id: input.agent_id ?? null,
      risk: input.risk ?? 'medium',
      reason: input.reason,
      status: 'approved',
      approvers: JSON.stringify(admin.kind === 'user' ? [{ user_id: admin.user_id, email: admin.email, at: appended.created_at, log_id: appended.log_id }] : []),
      decided_by: JSON.stringify(admin),
      decision_reason: input.reason,
      requested_by: JSON.stringify(admin),
      log_id: appended.log_id,
      created_at: appended.created_at,
      valid_from: validFrom,
      expires_at: validUntil,
      decided_at: appended.created_at,
      max_uses: input.max_uses ?? null,
    });
    await this.deps.store.insertApproval(row);
    return approvalView(row, now);
  }

  async revokeStanding(companyId: string, admin: TrailActor, approvalId: string, reason: string): Promise<ApprovalView> {
    const row = await this.row(companyId, approvalId);
    if (row.kind !== 'standing') throw new NotFoundError(`standing approval ${approvalId} not found`);
    if (row.status !== 'approved') throw new GovernanceRefusal('approval_not_active', `the standing approval is already ${row.status}`);
    const at = iso(this.now());
    if (!(await this.deps.store.updateIf(companyId, approvalId, row, { status: 'revoked', decided_at: at, decided_by: JSON.stringify(admin), decision_reason: reason, updated_at: at }))) throw this.changedMeanwhile(approvalId);
    await this.recordOrUndo(companyId, approvalId, { ...row, status: 'revoked' }, { status: 'approved', decided_at: row.decided_at, decided_by: row.decided_by, decision_reason: row.decision_reason }, () =>
      this.deps.recorder.record(companyId, 'approval.standing_revoked', admin, { approval_id: approvalId, reason, uses: row.uses }),
    );
    return this.get(companyId, approvalId);
  }

  // ---- the sweep: SLA escalations and expiries (every company) ----

  /**
   * Escalates, once each, the pending requests whose team SLA ran out (to the team's escalation
   * target, with an `approval.escalated` entry and webhook), and records each pending request that
   * expired undecided (`approval.expired`, webhook `approval.decided`). Safe to run in several
   * processes: each change is a conditional update, so it is recorded once.
   */
  async sweep(limit = 500, companyId?: string): Promise<{ escalated: number; expired: number }> {
    const now = iso(this.now());
    let escalated = 0;
    let expired = 0;
    const service: TrailActor = { kind: 'service', task: 'approval-sla' };
    for (const row of await this.deps.store.slaBreached(now, limit, companyId)) {
      const team = row.team === null ? undefined : await this.deps.store.getTeam(row.company_id, row.team);
      const target = team?.escalation_target ?? null;
      if (!(await this.deps.store.markEscalated(row.company_id, row.approval_id, target ?? row.assignee, now))) continue;
      const reason = `the SLA of team "${row.team}" (${team?.sla_minutes ?? '?'} min) ran out at ${row.sla_due_at}`;
      const appended = await this.deps.recorder.record(row.company_id, 'approval.escalated', service, { approval_id: row.approval_id, from: row.team, to: target, reason, sla_breached: true }, { trace_id: row.trace_id, agent_id: row.agent_id, parent_event_id: row.log_id });
      await this.deps.events.emit(row.company_id, 'approval.escalated', { approval_id: row.approval_id, to: target, reason, sla_breached: true, log_id: appended.log_id });
      this.notify(row.company_id, row.approval_id);
      escalated++;
    }
    for (const row of await this.deps.store.expiredPending(now, limit, companyId)) {
      if (!(await this.deps.store.updateIf(row.company_id, row.approval_id, row, { status: 'expired', decided_at: now, decided_by: JSON.stringify(service), updated_at: now }))) continue;
      const appended = await this.deps.recorder.record(row.company_id, 'approval.expired', { kind: 'service', task: 'approval-expiry' }, { approval_id: row.approval_id, expires_at: row.expires_at, approvals: (JSON.parse(row.approvers) as unknown[]).length, required_approvals: row.required_approvals }, { trace_id: row.trace_id, agent_id: row.agent_id, parent_event_id: row.log_id });
      await this.deps.events.emit(row.company_id, 'approval.decided', { approval_id: row.approval_id, status: 'expired', decided_by: service, reason: null, log_id: appended.log_id });
      this.notify(row.company_id, row.approval_id);
      expired++;
    }
    return { escalated, expired };
  }

  /** The sweep of one company, asked for by its admin: recorded (`approval.sweep_run`) with what it did. */
  async sweepCompany(companyId: string, admin: TrailActor): Promise<{ escalated: number; expired: number }> {
    const done = await this.sweep(500, companyId);
    await this.deps.recorder.record(companyId, 'approval.sweep_run', admin, done);
    return done;
  }
}

