// Period reports (docs/compliance.md, "Period reports"): generated for a time range, kept, listed,
// and served as the signed JSON (verifiable offline) or as a PDF.
import { COMPLIANCE_REPORT_FORMAT } from '@audit-ledger/core';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { principalOf } from '../auth/authenticate.js';
import { REPORTS } from '../auth/rules.js';
import { reportPdf } from '../compliance/report-pdf.js';
import { MAX_REPORT_DAYS } from '../compliance/reports.js';
import { actorOf } from '../auth/authenticate.js';
import { rawBody } from '../http/raw-body.js';
import { problemResponses } from '../http/problems.js';
import { Instant, KeyTransitionSchema, ServiceId, Uuid } from '../kernel/shapes.js';
import type { Services } from '../services.js';
import { iso } from '../kernel/time.js';

export type ReportServices = Pick<Services, 'reports'>;

const Actor = Type.Object({ kind: Type.String() }, { additionalProperties: true, description: 'Who asked for it' });
const ReportSummary = Type.Object({
  id: Uuid,
  status: Type.Literal('completed', { description: 'Reports are made while the request waits' }),
  from: Type.String({ format: 'date-time' }),
  to: Type.String({ format: 'date-time' }),
  created_at: Type.String({ format: 'date-time' }),
  created_by: Actor,
  digest: Type.Optional(Type.String({ description: 'SHA-256 of the canonical report, which the signature covers' })),
});
const SignedReportSchema = Type.Object(
  {
    format: Type.Literal(COMPLIANCE_REPORT_FORMAT),
    report: Type.Object({}, { additionalProperties: true, description: 'The report (docs/compliance.md lists its sections)' }),
    signature: Type.Object({ algorithm: Type.Literal('Ed25519'), key_id: Type.String(), public_key: Type.String(), digest: Type.String(), value: Type.String() }),
    key_transitions: Type.Optional(Type.Array(KeyTransitionSchema, { description: "The service's signed key transitions: a verifier that pinned an earlier key follows them to the key that signed (absent in reports made before they were carried)" })),
  },
  { description: 'The signed report: verify offline with audit-ledger-verify report.json --public-key keys.json' },
);

export function reportRoutes(ctx: ReportServices): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/compliance/reports',
      {
        config: REPORTS,
        schema: {
          tags: ['compliance'],
          operationId: 'createReport',
          summary: 'Generate a signed period report for regulators and auditors',
          description: `For [from, to): entries by type and agent, events per day and days without any, every entry of the period verified (hash, content, link, signature, erasure records), the checkpoints and witness cosignatures covering it, keys and transitions, retention, legal holds, erasures, human review rejections and anomalies. At most ${MAX_REPORT_DAYS} days. Signed with the service key; kept; recorded as a \`compliance.report_generated\` entry.`,
          body: Type.Object({ from: Instant('Start of the period, included'), to: Instant('End of the period, excluded') }, { additionalProperties: false }),
          response: { 201: ReportSummary, ...problemResponses(400, 401, 403, 429, 503) },
        },
      },
      async (request, reply) => {
        const actor = actorOf(principalOf(request));
        const period = { from: iso(Date.parse(request.body.from)), to: iso(Date.parse(request.body.to)) };
        const { id, document } = await ctx.reports.generate(principalOf(request).companyId, actor, period);
        return reply
          .code(201)
          .header('location', `/api/v1/compliance/reports/${id}`)
          .send({ id, status: 'completed' as const, from: period.from, to: period.to, created_at: String(document.report.generated_at), created_by: actor, digest: document.signature.digest });
      },
    );

    app.get(
      '/compliance/reports',
      {
        config: REPORTS,
        schema: { tags: ['compliance'], operationId: 'listReports', summary: 'The reports generated, newest first', description: 'Every period report of the company, without its content.', response: { 200: Type.Object({ items: Type.Array(ReportSummary) }), ...problemResponses(401, 403, 429) } },
      },
      async (request) => ({ items: (await ctx.reports.list(principalOf(request).companyId)).map((r) => ({ ...r, status: 'completed' as const })) }),
    );

    app.get(
      '/compliance/reports/:report_id',
      {
        config: REPORTS,
        schema: {
          tags: ['compliance'],
          operationId: 'getReport',
          summary: 'A report: the signed JSON, or ?format=pdf',
          description: 'The signed JSON is the evidence (verify it offline); `format=pdf` renders it for reading, with charts of events per day and verification coverage.',
          params: Type.Object({ report_id: ServiceId }),
          querystring: Type.Object({ format: Type.Union([Type.Literal('json'), Type.Literal('pdf')], { default: 'json' }) }, { additionalProperties: false }),
          produces: ['application/json', 'application/pdf'],
          response: { 200: SignedReportSchema, ...problemResponses(400, 401, 403, 404, 429) },
        },
      },
      async (request, reply) => {
        const stored = await ctx.reports.get(principalOf(request).companyId, request.params.report_id);
        // The register keeps compliance reports only (incident reports are the incidents' own).
        if (stored.format !== COMPLIANCE_REPORT_FORMAT) throw new Error(`report ${request.params.report_id} is a ${stored.format}, not a compliance report`);
        const doc = { ...stored, format: COMPLIANCE_REPORT_FORMAT as typeof COMPLIANCE_REPORT_FORMAT };
        if (request.query.format === 'pdf') {
          return reply
            .type('application/pdf')
            .header('content-disposition', `attachment; filename="compliance-report-${request.params.report_id}.pdf"`)
            .send(rawBody(await reportPdf(doc)));
        }
        return reply.header('content-disposition', `attachment; filename="compliance-report-${request.params.report_id}.json"`).send(doc);
      },
    );
  };
}
