// Incidents over HTTP (docs/governance.md, "Incidents"): schemas and thin handlers over
// governance/incidents.ts. Reviewers, admins and the API key open and work incidents; everyone of
// the company reads them.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { principalOf } from '../auth/authenticate.js';
import { READ, REVIEW } from '../auth/rules.js';
import { actorOf } from '../auth/authenticate.js';
import { rawBody } from '../http/raw-body.js';
import { idCursor, page } from '../http/cursor.js';
import { appendFailure } from '../http/ledger-problems.js';
import { problemResponses } from '../http/problems.js';
import { ActorSchema, component, JsonObjectSchema, KeyTransitionSchema, NullableString, ServiceId, Uuid } from '../kernel/shapes.js';
import { incidentPdf } from '../governance/incident-pdf.js';
import type { IncidentView } from '../governance/incidents.js';
import type { Services } from '../services.js';

export type IncidentServices = Pick<Services, 'incidents'>;

const Severity = Type.Union([Type.Literal('low'), Type.Literal('medium'), Type.Literal('high'), Type.Literal('critical')]);
const IncidentStatus = Type.Union([Type.Literal('open'), Type.Literal('investigating'), Type.Literal('mitigated'), Type.Literal('resolved'), Type.Literal('closed')]);
const Art73 = Type.Union([Type.Literal('serious'), Type.Literal('widespread_or_critical_infrastructure'), Type.Literal('death')], {
  description: 'EU AI Act Art. 73: serious (report within 15 days), widespread_or_critical_infrastructure (2 days), death (10 days), counted from when the incident was opened',
});
const Ids = (item: ReturnType<typeof Type.String>, description: string) => Type.Optional(Type.Array(item, { maxItems: 200, uniqueItems: true, description }));
const Text = (max: number, description: string) => Type.String({ minLength: 1, maxLength: max, pattern: '\\S', description });

const IncidentSchema = Type.Object({
  id: ServiceId,
  title: Type.String(),
  severity: Type.String(),
  description: NullableString,
  status: IncidentStatus,
  assignee: NullableString,
  links: Type.Object({
    trace_ids: Type.Array(Type.String()),
    decision_ids: Type.Array(Type.String()),
    log_ids: Type.Array(Type.String()),
    approval_ids: Type.Array(Type.String()),
    art73: Type.Union([Art73, Type.Null()]),
    replay_session_id: NullableString,
  }),
  opened_by: ActorSchema,
  log_id: Type.String({ description: 'The incident.opened entry' }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  deadlines: Type.Object({
    art73: Type.Union([Art73, Type.Null()]),
    report_due_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    article_73: Type.Array(Type.Object({ category: Type.String(), days: Type.Integer(), due_at: Type.String({ format: 'date-time' }), paragraph: Type.String() })),
  }),
  notes: Type.Optional(Type.Array(Type.Object({ id: Type.String(), kind: Type.String(), body: JsonObjectSchema, actor: ActorSchema, log_id: Type.String(), created_at: Type.String({ format: 'date-time' }) }), { description: "The incident's timeline (in GET of one incident)" })),
}, component('Incident'));

const OpenBody = Type.Object(
  {
    title: Type.Optional(Text(300, 'Required unless from_replay_session_id')),
    severity: Type.Optional(Severity),
    description: Type.Optional(Text(20_000, 'What happened')),
    trace_ids: Ids(Uuid, 'Traces involved'),
    decision_ids: Ids(Type.String({ minLength: 1, maxLength: 200 }), 'Decisions involved'),
    log_ids: Ids(Uuid, 'Entries involved'),
    approval_ids: Ids(ServiceId, 'Approvals involved'),
    art73: Type.Optional(Type.Union([Art73, Type.Null()])),
    from_replay_session_id: Type.Optional(Uuid),
  },
  { additionalProperties: false, description: 'With from_replay_session_id, the replay\'s root cause (which must have detected one) gives the title, severity, trace and evidence unless you give them' },
);

const IdParams = Type.Object({ id: ServiceId });
const SignedReportSchema = Type.Object({ format: Type.String(), report: JsonObjectSchema, signature: JsonObjectSchema, key_transitions: Type.Optional(Type.Array(KeyTransitionSchema)) }, { ...component('IncidentReport'), description: 'Signed like a compliance report; verify offline with `audit-ledger-verify FILE --public-key KEY`' });

export function incidentRoutes(ctx: IncidentServices): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/incidents',
      {
        config: REVIEW,
        schema: {
          tags: ['incidents'],
          operationId: 'openIncident',
          summary: 'Open an incident (by hand, or from a replay whose root cause detected one)',
          description: 'Appends `incident.opened` (201 means committed) and fires the `incident.opened` webhook.',
          body: OpenBody,
          response: { 201: IncidentSchema, ...problemResponses(400, 401, 403, 404, 409, 429, 503) },
        },
      },
      async (request, reply) => {
        const p = principalOf(request);
        const view = await ctx.incidents.open(p.companyId, actorOf(p), request.body).catch((err: unknown) => appendFailure(err, () => '/body'));
        return reply.code(201).send(view);
      },
    );

    app.get(
      '/incidents',
      {
        config: READ,
        schema: {
          tags: ['incidents'],
          operationId: 'listIncidents', description: 'Incidents, newest first, with their Art. 73 deadlines; filter by status.',
          summary: 'Incidents, newest first',
          querystring: Type.Object({ status: Type.Optional(IncidentStatus), limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }), cursor: Type.Optional(Type.String({ maxLength: 200 })) }, { additionalProperties: false }),
          response: { 200: Type.Object({ items: Type.Array(IncidentSchema), next_cursor: Type.Union([Type.String(), Type.Null()]) }), ...problemResponses(400, 401, 429) },
        },
      },
      async (request) => {
        const q = request.query;
        const rows = await ctx.incidents.list(principalOf(request).companyId, { status: q.status, before: idCursor(q.cursor), limit: q.limit });
        return page(rows, q.limit, (last) => ({ id: last.id }), (v) => v);
      },
    );

    app.get(
      '/incidents/:id',
      { config: READ, schema: { tags: ['incidents'], operationId: 'getIncident', description: 'One incident with its notes: each change (opened, assigned, commented, status) and the entry that records it.', summary: 'One incident with its timeline of notes', params: IdParams, response: { 200: IncidentSchema, ...problemResponses(401, 404, 429) } } },
      async (request) => (await ctx.incidents.get(principalOf(request).companyId, request.params.id)),
    );

    const change = <B extends ReturnType<typeof Type.Object>>(path: string, operationId: string, summary: string, body: B, run: (companyId: string, actor: ReturnType<typeof actorOf>, id: string, b: Type.Static<B>) => Promise<IncidentView>) =>
      app.post(
        `/incidents/:id/${path}`,
        { config: REVIEW, schema: { tags: ['incidents'], operationId, summary, description: `${summary}. Fires the \`incident.updated\` webhook; the incident's notes list the change with its entry.`, params: IdParams, body, response: { 200: IncidentSchema, ...problemResponses(400, 401, 403, 404, 409, 429, 503) } } },
        async (request) => {
          const p = principalOf(request);
          return (await run(p.companyId, actorOf(p), (request.params as { id: string }).id, request.body as Type.Static<B>).catch((err: unknown) => appendFailure(err, () => '/body')));
        },
      );
    change('assign', 'assignIncident', 'Assign the incident to a person or team (incident.assigned)', Type.Object({ assignee: Text(320, 'A person (email) or a team') }, { additionalProperties: false }), (c, a, id, b) => ctx.incidents.assign(c, a, id, b.assignee as string));
    change('comments', 'commentIncident', 'Add a comment (incident.commented)', Type.Object({ text: Text(20_000, 'The comment') }, { additionalProperties: false }), (c, a, id, b) => ctx.incidents.comment(c, a, id, b.text as string));
    change('status', 'setIncidentStatus', 'Move the incident to another status (incident.status_changed); a closed incident takes comments only', Type.Object({ status: IncidentStatus, note: Type.Optional(Text(4000, 'Why')) }, { additionalProperties: false }), (c, a, id, b) =>
      ctx.incidents.setStatus(c, a, id, b.status, b.note as string | undefined),
    );

    app.post(
      '/incidents/:id/report',
      {
        config: REVIEW,
        schema: {
          tags: ['incidents'],
          operationId: 'createIncidentReport',
          summary: 'Build and sign the incident report (JSON; `?format=pdf` for the PDF of the same report)',
          description:
            'Verifies every linked entry (and every entry of the linked traces), runs the root cause of each linked trace, and lists the approvals, approval checks and policy evaluations involved, with the EU AI Act Art. 73 deadlines from when the incident was opened. Kept, and recorded as `incident.report_generated`; GET /incidents/{id}/reports/{report_id} answers it again.',
          params: IdParams,
          querystring: Type.Object({ format: Type.Union([Type.Literal('json'), Type.Literal('pdf')], { default: 'json' }) }, { additionalProperties: false }),
          produces: ['application/json', 'application/pdf'],
          response: { 201: SignedReportSchema, ...problemResponses(400, 401, 403, 404, 429, 503) },
        },
      },
      async (request, reply) => {
        const p = principalOf(request);
        const { id, document } = await ctx.incidents.report(p.companyId, actorOf(p), request.params.id).catch((err: unknown) => appendFailure(err, () => '/body'));
        reply.header('location', `/api/v1/incidents/${request.params.id}/reports/${id}`);
        if (request.query.format === 'pdf') return reply.code(201).type('application/pdf').header('content-disposition', `attachment; filename="incident-report-${id}.pdf"`).send(rawBody(await incidentPdf(document)));
        return reply.code(201).send(document);
      },
    );

    app.get(
      '/incidents/:id/reports/:report_id',
      {
        config: READ,
        schema: {
          tags: ['incidents'],
          operationId: 'getIncidentReport', description: 'A report made by POST /incidents/{id}/report, exactly as it was signed; `format=pdf` renders it.',
          summary: 'A kept incident report: the signed JSON, or ?format=pdf',
          params: Type.Object({ id: ServiceId, report_id: ServiceId }),
          querystring: Type.Object({ format: Type.Union([Type.Literal('json'), Type.Literal('pdf')], { default: 'json' }) }, { additionalProperties: false }),
          produces: ['application/json', 'application/pdf'],
          response: { 200: SignedReportSchema, ...problemResponses(400, 401, 404, 429) },
        },
      },
      async (request, reply) => {
        const doc = await ctx.incidents.getReport(principalOf(request).companyId, request.params.id, request.params.report_id);
        if (request.query.format === 'pdf') return reply.type('application/pdf').header('content-disposition', `attachment; filename="incident-report-${request.params.report_id}.pdf"`).send(rawBody(await incidentPdf(doc)));
        return doc;
      },
    );
  };
}
