// The approvals' shapes (docs/governance.md): what a request, a standing approval and a reviewer
// team take, how a stored approval and team read, who decides, and a new row with its defaults.
// The service is approvals.ts; the check of an execution against an approval is execution-check.ts.
import type { Static } from 'typebox';
import type { Decider } from '../kernel/actor.js';
import type { ApprovalSchema, ApproverSchema, TeamLimitsSchema, TeamSchema } from '../kernel/governance-shapes.js';
import type { JsonObject } from '@audit-ledger/core';
import type { TrailActor } from '../ingestion/recorder.js';
import type { ApprovalRow, TeamRow } from '../store/governance.js';
import type { ApprovalStatus } from '../store/schema.js';
import { approvalsRecorded } from './execution-check.js';

export const RISKS = ['low', 'medium', 'high', 'critical'] as const;
export type Risk = (typeof RISKS)[number];

export { DEFAULT_EXPIRES_SECONDS, MAX_EXPIRES_SECONDS } from '../kernel/governance-shapes.js';

export interface ApprovalRequestInput {
  action: string;
  tool?: string | undefined;
  arguments?: unknown;
  trace_id?: string | undefined;
  decision_id?: string | undefined;
  agent_id?: string | undefined;
  risk?: Risk | undefined;
  reason?: string | undefined;
  policy?: { policy_id: string; version?: number | undefined } | undefined;
  expires_in_seconds?: number | undefined;
  assignee?: string | undefined;
  max_uses?: number | undefined;
}

export interface StandingInput {
  action: string;
  tool?: string | undefined;
  agent_id?: string | undefined;
  constraints?: JsonObject | undefined;
  valid_from?: string | undefined;
  valid_until: string;
  max_uses?: number | undefined;
  reason: string;
  risk?: Risk | undefined;
}

export interface TeamInput {
  members: string[];
  sla_minutes?: number | null | undefined;
  escalation_target?: string | null | undefined;
  match_actions?: string[] | undefined;
  match_risks?: Risk[] | undefined;
  limits?: TeamLimits | undefined;
}

/**
 * What a team lets a requester choose for its actions (docs/governance.md, "Limits a team sets"):
 * the least risk a request is given, the most executions it may cover, the longest it may live.
 */
export type TeamLimits = Static<typeof TeamLimitsSchema>;

export type Approver = Static<typeof ApproverSchema>;

/** An approval as the API shows it: the schema's type, so the view and the answer cannot differ. */
export type ApprovalView = Static<typeof ApprovalSchema>;

export type TeamView = Static<typeof TeamSchema>;


const parse = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

export function approvalView(row: ApprovalRow, now: number): ApprovalView {
  const expired = Date.parse(row.expires_at) <= now;
  // Approved once the last approval's entry is committed: until then it still reads pending.
  const given = row.status === 'approved' && !approvalsRecorded(row) ? 'pending' : row.status;
  const status: ApprovalStatus = given === 'pending' && expired ? 'expired' : given;
  return {
    id: row.approval_id,
    kind: row.kind,
    status,
    action: row.action,
    tool: row.tool,
    arguments: parse(row.arguments),
    arguments_hash: row.arguments_hash,
    constraints: parse<JsonObject>(row.constraints),
    trace_id: row.trace_id,
    decision_id: row.decision_id,
    agent_id: row.agent_id,
    risk: row.risk,
    reason: row.reason,
    policy: row.policy_id === null ? null : { policy_id: row.policy_id, version: row.policy_version },
    team: row.team,
    assignee: row.assignee,
    required_approvals: row.required_approvals,
    approvals: parse<Approver[]>(row.approvers) ?? [],
    decided_by: parse<TrailActor>(row.decided_by),
    decision_reason: row.decision_reason,
    requested_by: JSON.parse(row.requested_by) as TrailActor,
    log_id: row.log_id,
    created_at: row.created_at,
    valid_from: row.valid_from,
    expires_at: row.expires_at,
    decided_at: row.decided_at,
    sla_due_at: row.sla_due_at,
    escalated_at: row.escalated_at,
    max_uses: row.max_uses,
    uses: row.uses,
    usable: status === 'approved' && !expired && Date.parse(row.valid_from) <= now && (row.max_uses === null || row.uses < row.max_uses),
    content_erased: row.kind === 'request' && row.arguments === null,
  };
}

export function teamView(row: TeamRow): TeamView {
  return {
    name: row.name,
    members: JSON.parse(row.members) as string[],
    sla_minutes: row.sla_minutes,
    escalation_target: row.escalation_target,
    match_actions: JSON.parse(row.match_actions) as string[],
    match_risks: JSON.parse(row.match_risks) as string[],
    limits: JSON.parse(row.limits) as TeamLimits,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** Whether a team's rule takes an action: an exact name, or a prefix ending in `*`. */
export const actionMatches = (pattern: string, action: string) => (pattern.endsWith('*') ? action.startsWith(pattern.slice(0, -1)) : pattern === action);

export type { Decider };

export const asActor = (d: Decider): Extract<TrailActor, { kind: 'user' }> => ({ kind: 'user', user_id: d.user_id, email: d.email });

export const sameActor = (a: JsonObject, b: TrailActor) =>
  (a.kind === 'user' && b.kind === 'user' && a.user_id === b.user_id) || (a.kind === 'api_key' && b.kind === 'api_key' && a.key_id === b.key_id);

/** A new approval row: what a request or a grant sets, every other column empty (no decision, no use). */
export function approvalRow(set: Pick<ApprovalRow, 'company_id' | 'approval_id' | 'kind' | 'action' | 'risk' | 'status' | 'requested_by' | 'log_id' | 'created_at' | 'valid_from' | 'expires_at'> & Partial<ApprovalRow>): ApprovalRow {
  return {
    tool: null,
    arguments: null,
    arguments_hash: null,
    constraints: null,
    trace_id: null,
    decision_id: null,
    agent_id: null,
    reason: null,
    policy_id: null,
    policy_version: null,
    team: null,
    assignee: null,
    required_approvals: 1,
    approvers: '[]',
    decided_by: null,
    decision_reason: null,
    decided_at: null,
    sla_due_at: null,
    escalated_at: null,
    max_uses: null,
    uses: 0,
    updated_at: set.created_at,
    ...set,
  };
}
