// Row types of the governance tables (migration 0011: approvals, reviewer teams, governance checks,
// policy versions, incidents); schema.ts puts them in the Database with the rest. Each row mirrors
// ledger entries of the source audit-ledger/governance (docs/governance.md).

export type ApprovalKind = 'request' | 'standing';
export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'expired' | 'revoked';

export interface ApprovalsTable {
  company_id: string;
  approval_id: string;
  kind: ApprovalKind;
  action: string;
  tool: string | null;
  /** Canonical (RFC 8785) JSON of the arguments asked for; null for a standing approval. */
  arguments: string | null;
  arguments_hash: string | null;
  /** A standing approval's argument constraints: a JSON Schema (text). */
  constraints: string | null;
  trace_id: string | null;
  decision_id: string | null;
  agent_id: string | null;
  risk: string;
  reason: string | null;
  policy_id: string | null;
  policy_version: number | null;
  team: string | null;
  /** Who it is escalated to (a team name or a user's email), when it was. */
  assignee: string | null;
  status: ApprovalStatus;
  required_approvals: number;
  /** JSON array of {user_id, email, at, log_id}: the approvals given so far. */
  approvers: string;
  /** JSON actor of the decisive decision (the rejecter, the last approver, the revoker, the service). */
  decided_by: string | null;
  decision_reason: string | null;
  /** JSON actor: the API key or user that asked (or the admin who granted). */
  requested_by: string;
  log_id: string;
  created_at: string;
  valid_from: string;
  expires_at: string;
  decided_at: string | null;
  sla_due_at: string | null;
  escalated_at: string | null;
  max_uses: number | null;
  uses: number;
  updated_at: string;
}

export interface ApprovalTeamsTable {
  company_id: string;
  name: string;
  /** JSON array of user emails. */
  members: string;
  sla_minutes: number | null;
  escalation_target: string | null;
  /** JSON arrays: requests routed here when their action (exact, or a prefix ending in *) or risk matches. */
  match_actions: string;
  match_risks: string;
  /** JSON object {min_risk?, max_uses?, max_expires_in_seconds?}: what a requester may choose for this team's actions. */
  limits: string;
  created_at: string;
  updated_at: string;
}

export interface GovernanceChecksTable {
  company_id: string;
  /** The entry checked: an execution naming an approval, or a policy.evaluated naming a version. */
  log_id: string;
  kind: 'approval' | 'policy';
  subject_id: string;
  result: string;
  basis: string | null;
  detail: string | null;
  /** The approval.checked entry that records it (approval checks). */
  check_log_id: string | null;
  created_at: string;
}

export interface PolicyVersionsTable {
  company_id: string;
  policy_id: string;
  version: number;
  format: string;
  content: string;
  content_hash: string;
  description: string | null;
  created_at: string;
  created_by: string;
  log_id: string;
}

export type IncidentStatus = 'open' | 'investigating' | 'mitigated' | 'resolved' | 'closed';

export interface IncidentsTable {
  company_id: string;
  incident_id: string;
  title: string;
  severity: string;
  description: string | null;
  status: IncidentStatus;
  assignee: string | null;
  /** JSON {trace_ids, decision_ids, log_ids, approval_ids}. */
  links: string;
  opened_by: string;
  log_id: string;
  created_at: string;
  updated_at: string;
}

export interface IncidentNotesTable {
  company_id: string;
  incident_id: string;
  note_id: string;
  kind: string;
  /** JSON of what changed. */
  body: string;
  actor: string;
  log_id: string;
  created_at: string;
}

export interface IncidentReportsTable {
  company_id: string;
  report_id: string;
  incident_id: string;
  document: string;
  created_at: string;
  created_by: string;
}
