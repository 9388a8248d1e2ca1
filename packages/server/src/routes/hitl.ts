// Human review rejections (spec 2.7, 4.4). A rejection is appended to the ledger as a
// `hitl.rejected` entry, so it is as tamper-evident as what it rejects and shows up in
// the trace's forensics; the overrides list reads those entries back.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { principalOf } from '../auth/authenticate.js';
import { decodeCursor, encodeCursor } from '../http/cursor.js';
import { problemResponses } from '../http/problems.js';
import { appendFailure } from '../http/ledger-problems.js';
import { Uuid } from '../http/schemas.js';
import { type PreparedEvent, prepareEvent, RESERVED_SOURCE_PREFIX } from '../ledger/input.js';
import { uuidv7 } from '../ledger/uuidv7.js';
import type { LogEntryRow } from '../store/chain.js';
import type { Services } from '../services.js';
import { READ } from '../auth/rules.js';

/** Under the reserved prefix, so clients cannot forge an override through POST /logs. */
const HITL_SOURCE = `${RESERVED_SOURCE_PREFIX}hitl`;
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

function overrideView(row: LogEntryRow) {
  const d = JSON.parse(row.data) as Record<string, unknown>;
  return {
    id: String(d.rejection_id),
    log_id: row.log_id,
    reviewer: String(d.reviewer),
    rejection_reason: String(d.rejection_reason),
    decision_id: typeof d.decision_id === 'string' ? d.decision_id : null,
    trace_id: row.trace_id,
    created_at: row.created_at,
    submitted_by: d.submitted_by as { kind: string; id: string },
  };
}

export function hitlRoutes(ctx: Services): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/hitl/reject',
      {
        config: READ,
        schema: {
          tags: ['hitl'],
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
        const { companyId } = principal;
        const body = request.body;
        let traceId = body.trace_id ?? null;
        if (traceId === null && body.decision_id !== undefined) {
          const [decision] = await ctx.store.listEntries(companyId, { event_type: 'decision.made', dataField: { name: 'decision_id', value: body.decision_id }, order: 'asc', limit: 1 });
          traceId = decision?.trace_id ?? null;
        }
        const submittedBy = principal.kind === 'user' ? { kind: 'user', id: principal.userId } : { kind: 'api_key', id: principal.keyId };
        const event = prepareEvent(
          {
            event_type: 'hitl.rejected',
            source: HITL_SOURCE,
            ...(traceId ? { trace_id: traceId } : {}),
            data: {
              rejection_id: uuidv7(ctx.clock()),
              reviewer: body.reviewer,
              rejection_reason: body.rejection_reason,
              decision_id: body.decision_id ?? null,
              submitted_by: submittedBy,
            },
          },
          '/body',
        ) as PreparedEvent;
        const [r] = await ctx.appender.append(companyId, [event]).catch((err: unknown) => appendFailure(err, () => '/body'));
        const appended = r as NonNullable<typeof r>;
        const data = event.data as { rejection_id: string };
        const view = {
          id: data.rejection_id,
          log_id: appended.log_id,
          reviewer: body.reviewer,
          rejection_reason: body.rejection_reason,
          decision_id: body.decision_id ?? null,
          trace_id: traceId,
          created_at: appended.created_at,
          submitted_by: submittedBy,
        };
        await ctx.events.emit(companyId, 'hitl.rejected', view);
        return reply.code(201).send(view);
      },
    );

    app.get(
      '/hitl/overrides',
      {
        config: READ,
        schema: {
          tags: ['hitl'],
          summary: 'Recorded rejections, newest first',
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
        const rows = await ctx.store.listEntries(principalOf(request).companyId, {
          event_type: 'hitl.rejected',
          source: HITL_SOURCE,
          trace_id: q.trace_id,
          dataField: q.decision_id === undefined ? undefined : { name: 'decision_id', value: q.decision_id },
          afterSeq: q.cursor === undefined ? undefined : (decodeCursor(q.cursor, 'seq', 'seq') as number),
          order: 'desc',
          limit: q.limit,
        });
        const last = rows[rows.length - 1];
        return { items: rows.map(overrideView), next_cursor: rows.length === q.limit && last ? encodeCursor({ seq: last.seq }) : null };
      },
    );
  };
}
