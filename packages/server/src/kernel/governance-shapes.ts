// The governance API's data shapes (docs/governance.md), once: an approval as every route that
// answers one shows it (approvals, the human-review aliases, the decision register), a reviewer
// team and its limits. The routes answer with these schemas and the governance services' views
// are their Static<> types (governance/approval-model.ts), so the two cannot drift; the stored
// rows are the store's (store/schema-governance.ts).
import Type from 'typebox';
import { ActorSchema, component, JsonObjectSchema, NullableString, ServiceId } from './shapes.js';

/** Default and longest life of a request (it expires undecided, or approved and unused). */
export const DEFAULT_EXPIRES_SECONDS = 3600;
export const MAX_EXPIRES_SECONDS = 30 * 24 * 3600;

export const Risk = Type.Union([Type.Literal('low'), Type.Literal('medium'), Type.Literal('high'), Type.Literal('critical')], { description: 'critical needs two different approvers (four eyes)' });
export const Status = Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('rejected'), Type.Literal('expired'), Type.Literal('revoked')]);
export const TeamName = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$', description: 'Letters, digits, dot, dash, underscore' });

export const ApproverSchema = Type.Object({ user_id: Type.String(), email: Type.String(), at: Type.String({ format: 'date-time' }), log_id: Type.String({ description: 'The approval.approved entry' }) });

export const ApprovalSchema = Type.Object({
  id: ServiceId,
  kind: Type.Union([Type.Literal('request'), Type.Literal('standing')]),
  status: Status,
  action: Type.String(),
  tool: NullableString,
  arguments: Type.Unknown({ description: 'The arguments asked for, exactly as they will be checked (null for a standing approval)' }),
  arguments_hash: Type.Union([Type.String(), Type.Null()], { description: 'Lowercase hex SHA-256 of the RFC 8785 canonical JSON of arguments' }),
  constraints: Type.Union([JsonObjectSchema, Type.Null()], { description: "A standing approval's JSON Schema on the arguments" }),
  trace_id: NullableString,
  decision_id: NullableString,
  agent_id: NullableString,
  risk: Type.String(),
  reason: NullableString,
  policy: Type.Union([Type.Object({ policy_id: Type.String(), version: Type.Union([Type.Integer(), Type.Null()]) }), Type.Null()]),
  team: NullableString,
  assignee: Type.Union([Type.String(), Type.Null()], { description: 'Who it was escalated to' }),
  required_approvals: Type.Integer(),
  approvals: Type.Array(ApproverSchema),
  decided_by: Type.Union([ActorSchema, Type.Null()]),
  decision_reason: NullableString,
  requested_by: ActorSchema,
  log_id: Type.String({ description: 'The approval.requested (or approval.standing_granted) entry' }),
  created_at: Type.String({ format: 'date-time' }),
  valid_from: Type.String({ format: 'date-time' }),
  expires_at: Type.String({ format: 'date-time' }),
  decided_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  sla_due_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  escalated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  max_uses: Type.Union([Type.Integer(), Type.Null()]),
  uses: Type.Integer({ description: 'Executions it has covered' }),
  usable: Type.Boolean({ description: 'Whether an execution naming it now would be accepted' }),
  content_erased: Type.Boolean({ description: "The request's entry was erased (a subject erasure reaching its arguments): arguments and reason read null; action and arguments_hash stay, so executions are still checked" }),
}, component('Approval'));


export const TeamLimitsSchema = Type.Object(
  {
    min_risk: Type.Optional(Risk),
    max_uses: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    max_expires_in_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_EXPIRES_SECONDS })),
  },
  { additionalProperties: false, description: "What a requester may choose for the team's actions (those its match_actions take) and for requests routed to it: a lower risk is raised to min_risk (the entry keeps requested_risk); more uses or a longer life is refused (400); the strictest of every such team applies" },
);

export const TeamSchema = Type.Object({
  name: Type.String(),
  members: Type.Array(Type.String(), { description: "Members' emails: when not empty, only they (and admins) decide the team's requests" }),
  sla_minutes: Type.Union([Type.Integer(), Type.Null()]),
  escalation_target: Type.Union([Type.String(), Type.Null()], { description: 'Where a request goes once the SLA ran out (a team or a person)' }),
  match_actions: Type.Array(Type.String()),
  match_risks: Type.Array(Type.String()),
  limits: TeamLimitsSchema,
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
}, component('ApprovalTeam'));
