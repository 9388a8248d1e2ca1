// Human review rejections (spec 2.7, 4.4) over HTTP, and the agent SDK's human-review aliases:
// the services are hitl/rejections.ts and hitl/review.ts (which of rejections and approvals a call reaches).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { Caller } from '../hitl/review.js';
import Type from 'typebox';
import { principalOf } from '../auth/authenticate.js';
import { encodeCursor, seqCursor } from '../http/cursor.js';
import { problemResponses } from '../http/problems.js';
import { appendFailure } from '../http/ledger-problems.js';
import { JsonObjectSchema, NullableString, ServiceId, Uuid } from '../kernel/shapes.js';
import { ApprovalSchema } from '../kernel/governance-shapes.js';
import { deciderOf } from '../auth/decider.js';
import { actorOf } from '../auth/authenticate.js';
import type { Services } from '../services.js';
import { READ, REVIEW } from '../auth/rules.js';
import { encodeCursor as cursorOf } from '../http/cursor.js';

const NonBlank = (max: number, description: string) => Type.String({ minLength: 1, maxLength: max, pattern: '\\S', description });
const NullableUuid = Type.Union([Uuid, Type.Null()]);

const Override = Type.Object({
  id: Uuid,
  log_id: Uuid,
  reviewer: Type.String(),
  rejection_reason: Type.String(),
  decision_id: NullableUuid,
  trace_id: NullableUuid,
  created_at: Type.String({ format: 'date-time' }),
  submitted_by: Type.Object({ kind: Type.String(), id: Type.String() }, { description: 'The credential that submitted it: a user id or an API key id' }),
});

export type HitlServices = Pick<Services, 'rejections' | 'humanReview'>;

const TrailItem = Type.Object({
  log_id: Type.String(),
  seq: Type.Integer(),
  event_type: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  trace_id: NullableString,
  agent_id: NullableString,
  data: Type.Union([JsonObjectSchema, Type.Null()], { description: 'null once erased' }),
});

/** The alias of the agent SDK that calls POST /hitl/approve: its approval request, or (with approval_id) a reviewer's decision. */
const HitlApproveBody = Type.Object(
  {
    approval_id: Type.Optional(ServiceId),
    auth_response: Type.Optional(Type.Object({ status: Type.Optional(Type.String({ maxLength: 50 })), reason: Type.Optional(Type.String({ maxLength: 4000 })) }, { additionalProperties: true })),
    decision_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    reason: Type.Optional(NonBlank(4000, 'Why approval is asked for')),
    reviewer: Type.Optional(Type.String({ minLength: 1, maxLength: 320, description: 'The reviewer the agent suggests: a team name routes the request there; anything else is kept in the arguments (a decision always names the session user)' })),
    log_id: Type.Optional(Uuid),
    metadata: Type.Optional(JsonObjectSchema),
    trace_id: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);

/** Who calls, as the human-review service needs it: a person's decision is asked of the session only when one is made (deciderOf refuses an API key). */
function callerOf(request: FastifyRequest): Caller {
  const p = principalOf(request);
  return {
    companyId: p.companyId,
    submittedBy: p.kind === 'user' ? { kind: 'user', id: p.userId } : { kind: 'api_key', id: p.keyId },
    actor: actorOf(p),
    decider: () => deciderOf(request),
  };
}

export function hitlRoutes(ctx: HitlServices): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/hitl/reject',
      {
        config: REVIEW,
        schema: {
          tags: ['hitl'],
          operationId: 'rejectDecision',
          summary: "Record a human reviewer's rejection of an agent decision",
          description:
            'Appended to the ledger as a `hitl.rejected` entry (201 means committed). Without trace_id, the rejection joins the trace of the `decision.made` event whose data.decision_id matches, when there is one. With `approval_id` (the form one agent SDK sends), that approval request is rejected too (`approval.rejected`, naming the session user): this needs a reviewer or admin session, an API key gets 403.',
          body: Type.Object(
            {
              reviewer: NonBlank(200, 'Identity of the reviewer'),
              rejection_reason: NonBlank(4000, 'Why the decision was rejected'),
              decision_id: Type.Optional(Uuid),
              trace_id: Type.Optional(Uuid),
              approval_id: Type.Optional(ServiceId),
            },
            { additionalProperties: false },
          ),
          response: { 201: Override, ...problemResponses(400, 401, 403, 404, 409, 429, 503) },
        },
      },
      async (request, reply) => {
        const view = await ctx.humanReview.reject(callerOf(request), request.body).catch((err: unknown) => appendFailure(err, () => '/body'));
        return reply.code(201).send(view);
      },
    );

    app.get(
      '/hitl/overrides',
      {
        config: READ,
        schema: {
          tags: ['hitl'],
          operationId: 'listOverrides',
          summary: 'Recorded rejections, newest first',
          description: 'Human review rejections recorded with POST /hitl/reject, newest first; filter by decision_id or trace_id.',
          querystring: Type.Object(
            {
              decision_id: Type.Optional(Uuid),
              trace_id: Type.Optional(Uuid),
              limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
              cursor: Type.Optional(Type.String({ maxLength: 200 })),
            },
            { additionalProperties: false },
          ),
          response: { 200: Type.Object({ items: Type.Array(Override), next_cursor: Type.Union([Type.String(), Type.Null()]) }), ...problemResponses(400, 401, 429) },
        },
      },
      async (request) => {
        const q = request.query;
        const { items, lastSeq } = await ctx.rejections.list(principalOf(request).companyId, {
          trace_id: q.trace_id,
          decision_id: q.decision_id,
          afterSeq: seqCursor(q.cursor),
          limit: q.limit,
        });
        return { items, next_cursor: items.length === q.limit && lastSeq !== undefined ? encodeCursor({ seq: lastSeq }) : null };
      },
    );

    // ---- aliases of one agent SDK's human-review calls onto the approvals model (docs/governance.md, "Compatibility") ----

    app.post(
      '/hitl/approve',
      {
        config: REVIEW,
        schema: {
          tags: ['hitl'],
          operationId: 'hitlApprove',
          summary: 'Alias: an approval request (the agent SDK form), or with approval_id a reviewer approving it',
          description:
            'Without `approval_id`: POST /approvals with action `hitl.review` and arguments {decision_id, log_id, metadata} (201). With `approval_id`: POST /approvals/{id}/approve as the session user when auth_response.status is `approved` or `approve`, or /reject when it is `rejected`, `reject`, `denied`, `deny` or `declined` (200); any other status, or none, is a 400 and decides nothing; an API key gets 403.',
          body: HitlApproveBody,
          response: { 200: ApprovalSchema, 201: ApprovalSchema, ...problemResponses(400, 401, 403, 404, 409, 429, 503) },
        },
      },
      async (request, reply) => {
        const { approval, created } = await ctx.humanReview.approve(callerOf(request), request.body).catch((err: unknown) => appendFailure(err, () => '/body'));
        return reply.code(created ? 201 : 200).send(approval);
      },
    );

    app.post(
      '/hitl/escalate',
      {
        config: REVIEW,
        schema: {
          tags: ['hitl'],
          operationId: 'hitlEscalate',
          summary: 'Alias: escalate a review (with approval_id, the approval request itself)',
          description:
            'With `approval_id`: POST /approvals/{id}/escalate to escalation_target (`approval.escalated`, naming the session user): a reviewer\'s or admin\'s session only (an API key gets 403), and the target must be a reviewer team or a reviewer or admin of the company. Without: a `hitl.escalated` entry recording what was sent. `current_reviewer` is recorded as said, never taken as an identity.',
          body: Type.Object(
            {
              current_reviewer: NonBlank(320, 'Who had it, as the caller says'),
              escalation_target: NonBlank(320, 'A team name or a person'),
              escalation_reason: NonBlank(4000, 'Why'),
              approval_id: Type.Optional(ServiceId),
              decision_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
              trace_id: Type.Optional(Uuid),
            },
            { additionalProperties: false },
          ),
          response: {
            200: Type.Object({ id: Type.String(), log_id: Type.Union([Type.String(), Type.Null()]), escalation_target: Type.String(), approval: Type.Union([ApprovalSchema, Type.Null()]), created_at: Type.String({ format: 'date-time' }) }),
            ...problemResponses(400, 401, 403, 404, 409, 429, 503),
          },
        },
      },
      async (request) => ctx.humanReview.escalate(callerOf(request), request.body).catch((err: unknown) => appendFailure(err, () => '/body')),
    );

    app.get(
      '/hitl/overrides/:id',
      {
        config: READ,
        schema: { tags: ['hitl'], operationId: 'getOverride', description: "A rejection recorded with POST /hitl/reject, by the id it was answered with (the agent SDK's GET /hitl/overrides/{id}).", summary: 'One recorded rejection', params: Type.Object({ id: Uuid }), response: { 200: Override, ...problemResponses(401, 404, 429) } },
      },
      async (request) => ctx.rejections.get(principalOf(request).companyId, request.params.id),
    );

    app.get(
      '/hitl/audit-trail',
      {
        config: READ,
        schema: {
          tags: ['hitl'],
          operationId: 'hitlAuditTrail', description: "Every hitl.* and approval.* entry (requests, decisions, escalations, checks, standing grants), newest first, as the ledger holds them; the agent SDK's GET /hitl/audit-trail.",
          summary: 'The human-review trail: rejections, escalations and every approval step, newest first',
          querystring: Type.Object({ trace_id: Type.Optional(Uuid), limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }), cursor: Type.Optional(Type.String({ maxLength: 200 })) }, { additionalProperties: false }),
          response: { 200: Type.Object({ items: Type.Array(TrailItem), next_cursor: Type.Union([Type.String(), Type.Null()]) }), ...problemResponses(400, 401, 429) },
        },
      },
      async (request) => {
        const q = request.query;
        const rows = await ctx.rejections.trail(principalOf(request).companyId, { trace_id: q.trace_id, afterSeq: seqCursor(q.cursor), limit: q.limit });
        const last = rows.at(-1);
        return {
          items: rows.map((r) => ({ log_id: r.log_id, seq: r.seq, event_type: r.event_type, created_at: r.created_at, trace_id: r.trace_id, agent_id: r.agent_id, data: r.data === null ? null : (JSON.parse(r.data) as Record<string, unknown>) })),
          next_cursor: rows.length === q.limit && last ? cursorOf({ seq: last.seq }) : null,
        };
      },
    );

  };
}
