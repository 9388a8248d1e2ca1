// Human review rejections (spec 2.7, 4.4) over HTTP: the service is hitl/rejections.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { principalOf } from '../auth/authenticate.js';
import { encodeCursor, seqCursor } from '../http/cursor.js';
import { problemResponses } from '../http/problems.js';
import { appendFailure } from '../http/ledger-problems.js';
import { Uuid } from '../http/schemas.js';
import type { Services } from '../services.js';
import { READ, REVIEW } from '../auth/rules.js';

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

export type HitlServices = Pick<Services, 'rejections'>;

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
            'Appended to the ledger as a `hitl.rejected` entry (201 means committed). Without trace_id, the rejection joins the trace of the `decision.made` event whose data.decision_id matches, when there is one.',
          body: Type.Object(
            {
              reviewer: NonBlank(200, 'Identity of the reviewer'),
              rejection_reason: NonBlank(4000, 'Why the decision was rejected'),
              decision_id: Type.Optional(Uuid),
              trace_id: Type.Optional(Uuid),
            },
            { additionalProperties: false },
          ),
          response: { 201: Override, ...problemResponses(400, 401, 429, 503) },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const submittedBy = principal.kind === 'user' ? ({ kind: 'user', id: principal.userId } as const) : ({ kind: 'api_key', id: principal.keyId } as const);
        const view = await ctx.rejections.reject(principal.companyId, submittedBy, request.body).catch((err: unknown) => appendFailure(err, () => '/body'));
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
  };
}
