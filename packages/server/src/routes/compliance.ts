// The compliance lifecycle (docs/compliance.md): retention, legal holds and erasure. Admins
// change things; every change is an entry of the administrators' audit trail.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { principalOf } from '../auth/authenticate.js';
import { ADMIN, READ } from '../auth/rules.js';
import { actorOf } from '../auth/authenticate.js';
import { problemResponses } from '../http/problems.js';
import { ActorSchema, Instant, ServiceId, Uuid } from '../kernel/shapes.js';
import type { Services } from '../services.js';
import { PREVIEW_LIMIT } from '../compliance/service.js';

export type ComplianceServices = Pick<Services, 'compliance'>;

const Days = Type.Integer({ minimum: 0, maximum: 36_500, description: 'Days content is kept after the entry was appended; 0 erases it at the next run' });
const Actor = ActorSchema;
const RetentionBody = Type.Object(
  {
    content_days: Type.Union([Days, Type.Null()], { description: 'null: content is kept forever (unless by_event_type says otherwise)' }),
    // Type.Record drops a key schema's length limits (it becomes patternProperties "^.*$"): the
    // keys are bounded with propertyNames, so an empty or 300-character event type is refused.
    by_event_type: Type.Optional(Type.Record(Type.String(), Days, { description: 'Per event type (1–200 characters), overriding content_days', maxProperties: 200, propertyNames: { minLength: 1, maxLength: 200 } })),
  },
  { additionalProperties: false },
);
const RetentionSchema = Type.Object({
  content_days: Type.Union([Type.Integer(), Type.Null()]),
  by_event_type: Type.Record(Type.String(), Type.Integer()),
  updated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  updated_by: Type.Union([Actor, Type.Null()]),
  last_run_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the retention job last finished a run for this company' }),
  erased_total: Type.Integer({ description: 'Entries whose content retention has erased, in all' }),
  pending_erasures: Type.Integer({ description: 'Erasures planned or recorded but not yet applied (a crash came between; the next run finishes them)' }),
});

const Scope = Type.Object(
  {
    trace_id: Type.Optional(Uuid),
    session_id: Type.Optional(Uuid),
    agent_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    from: Type.Optional(Instant('created_at at or after')),
    to: Type.Optional(Instant('created_at before')),
    all: Type.Optional(Type.Literal(true, { description: 'Every entry of the company' })),
  },
  { additionalProperties: false, description: 'Exactly one of: trace_id, session_id, agent_id, a time range (from and/or to), all' },
);
const HoldSchema = Type.Object({
  id: Uuid,
  scope: Scope,
  reason: Type.String(),
  case_reference: Type.Union([Type.String(), Type.Null()]),
  status: Type.Union([Type.Literal('active'), Type.Literal('released')]),
  created_at: Type.String({ format: 'date-time' }),
  created_by: Actor,
  released_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  released_by: Type.Union([Actor, Type.Null()]),
  release_reason: Type.Union([Type.String(), Type.Null()]),
});
const ErasureSchema = Type.Object({
  id: Uuid,
  kind: Type.Union([Type.Literal('request'), Type.Literal('retention')]),
  legal_basis: Type.String(),
  requested_by: Actor,
  created_at: Type.String({ format: 'date-time' }),
  erased_count: Type.Integer({ description: 'Entries whose content this erasure removed' }),
  already_erased: Type.Integer({ description: 'Named entries whose content was already gone' }),
  log_ids: Type.Array(Uuid, { description: 'The entries erased' }),
  record_log_ids: Type.Array(Uuid, { description: 'The compliance.erasure entries recording it (one per 1000 entries)' }),
  status: Type.Union([Type.Literal('applied'), Type.Literal('pending')]),
});
const Text = (max: number, description: string) => Type.String({ minLength: 1, maxLength: max, description });

export function complianceRoutes(ctx: ComplianceServices): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/compliance/retention',
      {
        config: READ,
        schema: { tags: ['compliance'], operationId: 'getRetention', summary: "The company's content retention policy and the job's progress", description: 'How long content is kept, by default and per event type, and what the retention job has done. Without a policy, content is kept forever.', response: { 200: RetentionSchema, ...problemResponses(401, 403, 429) } },
      },
      async (request) => ctx.compliance.retention(principalOf(request).companyId),
    );

    app.put(
      '/compliance/retention',
      {
        config: ADMIN,
        schema: {
          tags: ['compliance'],
          operationId: 'setRetention',
          summary: 'Set how long content is kept',
          description:
            "After the given days, the retention job erases an entry's content (data, extra, salt) and keeps its skeleton and commitment, so the ledger still verifies; entries under a legal hold, format version 1 entries and the service's own entries are kept. Recorded as a `compliance.retention_changed` entry.",
          body: RetentionBody,
          response: { 200: RetentionSchema, ...problemResponses(400, 401, 403, 429, 503) },
        },
      },
      async (request) => ctx.compliance.setRetention(principalOf(request).companyId, actorOf(principalOf(request)), { content_days: request.body.content_days, by_event_type: request.body.by_event_type ?? {} }),
    );

    app.get(
      '/compliance/retention/preview',
      {
        config: READ,
        schema: {
          tags: ['compliance'],
          operationId: 'previewRetention',
          summary: 'What a retention run now would erase (nothing is erased)',
          description: `Counts the entries past their cutoff whose content is still there: \`due\` would be erased, \`held\` are kept by a legal hold. Reads at most ${PREVIEW_LIMIT.toLocaleString('en-US')} due entries; \`capped\` says there are more.`,
          response: {
            200: Type.Object({
              due: Type.Integer(),
              held: Type.Integer(),
              capped: Type.Boolean(),
              cutoffs: Type.Object({ content: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'Content older than this is erased (null: kept)' }), by_event_type: Type.Record(Type.String(), Type.String({ format: 'date-time' })) }),
            }),
            ...problemResponses(401, 429),
          },
        },
      },
      async (request) => ctx.compliance.retentionPreview(principalOf(request).companyId),
    );

    app.post(
      '/compliance/retention/run',
      {
        config: ADMIN,
        // No body at all means the defaults.
        preValidation: async (request) => {
          request.body ??= {};
        },
        schema: {
          body: Type.Object({}, { additionalProperties: false }),
          tags: ['compliance'],
          operationId: 'runRetention',
          summary: "Apply the company's retention policy now",
          description:
            'Runs the retention job for this company now instead of waiting for RETENTION_INTERVAL_SECONDS (finishing first any erasure a crash interrupted), and answers when it is done. Each batch is recorded as a `compliance.erasure` entry by the service, and the run itself as `compliance.retention_run`.',
          response: { 200: Type.Object({ erased_count: Type.Integer({ description: 'Entries this run erased' }), retention: RetentionSchema }), ...problemResponses(401, 403, 429, 503) },
        },
      },
      async (request) => ctx.compliance.runRetentionNow(principalOf(request).companyId, actorOf(principalOf(request))),
    );

    app.post(
      '/compliance/holds',
      {
        config: ADMIN,
        schema: {
          tags: ['compliance'],
          operationId: 'placeHold',
          summary: 'Place a legal hold',
          description: 'Nothing in the scope is erased, by retention or by request, until the hold is released. Recorded as a `compliance.hold_placed` entry.',
          body: Type.Object({ scope: Scope, reason: Text(2000, 'Why, for the record'), case_reference: Type.Optional(Text(200, 'The case or matter it is for')) }, { additionalProperties: false }),
          response: { 201: HoldSchema, ...problemResponses(400, 401, 403, 429, 503) },
        },
      },
      async (request, reply) => {
        return reply.code(201).send(await ctx.compliance.placeHold(principalOf(request).companyId, actorOf(principalOf(request)), request.body));
      },
    );

    app.get(
      '/compliance/holds',
      {
        config: READ,
        schema: { tags: ['compliance'], operationId: 'listHolds', summary: "The company's legal holds, active and released", description: 'Every legal hold, oldest first.', response: { 200: Type.Object({ items: Type.Array(HoldSchema) }), ...problemResponses(401, 403, 429) } },
      },
      async (request) => ({ items: await ctx.compliance.holds(principalOf(request).companyId) }),
    );

    app.post(
      '/compliance/holds/:hold_id/release',
      {
        config: ADMIN,
        schema: {
          tags: ['compliance'],
          operationId: 'releaseHold',
          summary: 'Release a legal hold',
          description: 'Needs an admin and a reason; recorded as a `compliance.hold_released` entry. 409 `hold_released` when it already was.',
          params: Type.Object({ hold_id: ServiceId }),
          body: Type.Object({ reason: Text(2000, 'Why it is released') }, { additionalProperties: false }),
          response: { 200: HoldSchema, ...problemResponses(400, 401, 403, 404, 409, 429, 503) },
        },
      },
      async (request) => ctx.compliance.releaseHold(principalOf(request).companyId, actorOf(principalOf(request)), request.params.hold_id, request.body.reason),
    );

    app.post(
      '/compliance/erasures',
      {
        config: ADMIN,
        schema: {
          tags: ['compliance'],
          operationId: 'requestErasure',
          summary: "Erase entries' content (by id, or every entry of a data subject)",
          description:
            "Removes the content (data, extra, salt) of format version 2 entries and keeps their commitment, so the chain, the tree, every proof and checkpoint still verify; `GET /logs/{id}` then shows `erased: true` and no data. `subject` finds every entry whose data carries it at a path of COMPLIANCE_SUBJECT_FIELDS (not indexed: a scan of the company's entries). All or nothing: 409 `under_legal_hold` (naming the hold) when any entry is held, 409 `not_erasable` for version 1 entries and the service's own entries, 404 for unknown ids. Recorded as `compliance.erasure` entries (who, when, which entries, the legal basis; never the subject's identifier).",
          body: Type.Object(
            {
              log_ids: Type.Optional(Type.Array(ServiceId, { minItems: 1, maxItems: 10_000 })),
              subject: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'A data subject identifier, looked for at COMPLIANCE_SUBJECT_FIELDS' })),
              legal_basis: Text(2000, 'e.g. "GDPR Art. 17(1)(a), request 2026-118"'),
            },
            { additionalProperties: false },
          ),
          response: { 201: ErasureSchema, ...problemResponses(400, 401, 403, 404, 409, 429, 503) },
        },
      },
      async (request, reply) => {
        return reply.code(201).send(await ctx.compliance.requestErasure(principalOf(request).companyId, actorOf(principalOf(request)), request.body));
      },
    );

    app.get(
      '/compliance/erasures',
      {
        config: READ,
        schema: { tags: ['compliance'], operationId: 'listErasures', summary: 'Every erasure, by request or by retention', description: 'Oldest first, each with the entries it erased and the ledger entries that record it.', response: { 200: Type.Object({ items: Type.Array(ErasureSchema) }), ...problemResponses(401, 403, 429) } },
      },
      async (request) => ({ items: await ctx.compliance.erasures(principalOf(request).companyId) }),
    );
  };
}
