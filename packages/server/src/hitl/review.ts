// The human-review calls of one agent SDK (POST /hitl/reject, /hitl/approve, /hitl/escalate) as
// one service over two: the rejections recorded here (rejections.ts) and the approval requests of
// the governance layer (governance/approvals.ts). Which of them a call reaches, and whether it needs
// a person's decision, is decided here, not in the route (docs/governance.md, "Compatibility").
import type { Approvals } from '../governance/approvals.js';
import type { ApprovalView } from '../governance/approval-model.js';
import type { ReviewerTeams } from '../governance/teams.js';
import type { Decider, TrailActor } from '../kernel/actor.js';
import { InputError } from '../kernel/domain-error.js';
import type { Override, RejectionInput, Rejections, Submitter } from './rejections.js';

/**
 * What a reviewer's auth_response.status decides, exactly: an approval only on an explicit approve
 * value, a rejection only on an explicit reject value. Anything else (absent, misspelt, "no",
 * "REJECTED ") decides nothing and is a 400: a decision never follows from a value not understood.
 */
export const HITL_APPROVE = ['approved', 'approve'] as const;
export const HITL_REJECT = ['rejected', 'reject', 'denied', 'deny', 'declined'] as const;

function verdictOf(status: string | undefined): 'approve' | 'reject' {
  if (status !== undefined && (HITL_APPROVE as readonly string[]).includes(status)) return 'approve';
  if (status !== undefined && (HITL_REJECT as readonly string[]).includes(status)) return 'reject';
  throw new InputError([{ field: '/body/auth_response/status', message: `must say the decision: one of ${[...HITL_APPROVE, ...HITL_REJECT].join(', ')} with approval_id (it is ${status === undefined ? 'absent' : JSON.stringify(status)})` }]);
}

/** Who calls: the credential that submits (recorded as said), the actor requests are made by, and the person a decision needs (asked for only when one is made: an API key is refused there). */
export interface Caller {
  companyId: string;
  submittedBy: Submitter;
  actor: TrailActor;
  decider: () => Decider;
}

export interface HitlApproveInput {
  approval_id?: string | undefined;
  auth_response?: { status?: string | undefined; reason?: string | undefined } | undefined;
  decision_id?: string | undefined;
  reason?: string | undefined;
  reviewer?: string | undefined;
  log_id?: string | undefined;
  metadata?: object | undefined;
  trace_id?: string | undefined;
}

export interface HitlEscalateInput {
  current_reviewer: string;
  escalation_target: string;
  escalation_reason: string;
  approval_id?: string | undefined;
  decision_id?: string | undefined;
  trace_id?: string | undefined;
}

export interface HitlEscalation {
  id: string;
  log_id: string | null;
  escalation_target: string;
  approval: ApprovalView | null;
  created_at: string;
}

export class HumanReview {
  constructor(private readonly deps: { rejections: Pick<Rejections, 'reject' | 'recordEscalation'>; approvals: Pick<Approvals, 'request' | 'approve' | 'reject' | 'escalate'>; teams: Pick<ReviewerTeams, 'list'> }) {}

  /** A rejection recorded; with approval_id (the agent SDK's form), that approval request rejected first, by the person deciding. */
  async reject(caller: Caller, input: RejectionInput & { approval_id?: string | undefined }): Promise<Override> {
    const { approval_id: approvalId, ...rejection } = input;
    if (approvalId !== undefined) await this.deps.approvals.reject(caller.companyId, caller.decider(), approvalId, rejection.rejection_reason);
    return this.deps.rejections.reject(caller.companyId, caller.submittedBy, rejection);
  }

  /**
   * Without approval_id: an approval request for `hitl.review` (a reviewer the agent names that is a
   * team routes it there; anything else stays in the arguments). With it: the person's decision,
   * as auth_response.status says it. `created` says which it was.
   */
  async approve(caller: Caller, b: HitlApproveInput): Promise<{ approval: ApprovalView; created: boolean }> {
    if (b.approval_id !== undefined) {
      const decider = caller.decider();
      const reason = b.auth_response?.reason ?? b.reason;
      const approval =
        verdictOf(b.auth_response?.status) === 'reject'
          ? await this.deps.approvals.reject(caller.companyId, decider, b.approval_id, reason ?? 'rejected')
          : await this.deps.approvals.approve(caller.companyId, decider, b.approval_id, reason);
      return { approval, created: false };
    }
    if (b.reason === undefined) throw new InputError([{ field: '/body/reason', message: 'is required without approval_id: an approval request needs reason' }]);
    const teams = b.reviewer === undefined ? [] : (await this.deps.teams.list(caller.companyId)).filter((t) => t.name === b.reviewer);
    const approval = await this.deps.approvals.request(caller.companyId, caller.actor, {
      action: 'hitl.review',
      arguments: { decision_id: b.decision_id ?? null, log_id: b.log_id ?? null, metadata: b.metadata ?? null, ...(b.reviewer !== undefined && teams.length === 0 ? { requested_reviewer: b.reviewer } : {}) },
      reason: b.reason,
      decision_id: b.decision_id,
      trace_id: b.trace_id,
      assignee: teams[0]?.name,
    });
    return { approval, created: true };
  }

  /** With approval_id: the approval request escalated, a person's decision about who decides. Without: a `hitl.escalated` entry of what was said. */
  async escalate(caller: Caller, b: HitlEscalateInput): Promise<HitlEscalation> {
    if (b.approval_id !== undefined) {
      const approval = await this.deps.approvals.escalate(caller.companyId, caller.decider(), b.approval_id, b.escalation_target, b.escalation_reason, '/body/escalation_target');
      return { id: approval.id, log_id: null, escalation_target: b.escalation_target, approval, created_at: approval.escalated_at ?? approval.created_at };
    }
    const r = await this.deps.rejections.recordEscalation(caller.companyId, caller.submittedBy, b);
    return { id: r.id, log_id: r.log_id, escalation_target: b.escalation_target, approval: null, created_at: r.created_at };
  }
}
