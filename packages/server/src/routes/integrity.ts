// Integrity endpoints: public keys, signed checkpoints, consistency proofs.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import Type from 'typebox';
import { principalOf } from '../auth/authenticate.js';
import { actorOf } from '../auth/authenticate.js';
import { rawBody } from '../http/raw-body.js';
import { problemResponses } from '../http/problems.js';
import { CheckpointSchema, FullVerificationReportSchema as ReportSchema, ServiceId, Uuid } from '../kernel/shapes.js';
import type { JobRow } from '../integrity/service.js';
import type { Services } from '../services.js';
import { READ } from '../auth/rules.js';



const JobSchema = Type.Object({
  job_id: Uuid,
  status: Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('completed'), Type.Literal('failed')]),
  options: Type.Object({ entry_signatures: Type.Boolean() }),
  requested_at: Type.String({ format: 'date-time' }),
  started_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  finished_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  report: Type.Union([ReportSchema, Type.Null()]),
});

function jobView(j: JobRow) {
  return {
    job_id: j.job_id,
    status: j.status,
    options: JSON.parse(j.options) as { entry_signatures: boolean },
    requested_at: j.requested_at,
    started_at: j.started_at,
    finished_at: j.finished_at,
    report: j.report === null ? null : JSON.parse(j.report),
  };
}


/** True when the client asked for text/plain ahead of (or without) JSON. */
function wantsText(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  const t = accept.indexOf('text/plain');
  const j = accept.indexOf('application/json');
  return t >= 0 && (j < 0 || t < j);
}

/** The services these routes use. */
export type IntegrityServices = Pick<Services, 'integrity'>;

export function integrityRoutes(ctx: IntegrityServices): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/integrity/status',
      {
        config: READ,
        schema: {
          tags: ['integrity'],
          operationId: 'getIntegrityStatus',
          summary: "The company's chain: head, latest checkpoint, and how much of it the verifier has checked",
          description:
            'chain_status: `verifying` while a full verification runs, `broken` when a verification found violations, `unverified` before the first verification, otherwise `valid`. The background verifier checks newly checkpointed entries every INTEGRITY_VERIFY_INTERVAL_SECONDS.',
          response: {
            200: Type.Object({
              chain_status: Type.Union([Type.Literal('valid'), Type.Literal('broken'), Type.Literal('unverified'), Type.Literal('verifying')]),
              head: Type.Union([Type.Object({ seq: Type.Integer(), hash: Type.String() }), Type.Null()]),
              checkpoint: Type.Union([CheckpointSchema, Type.Null()]),
              last_verified_seq: Type.Union([Type.Integer(), Type.Null()]),
              last_verified_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
              violation_count: Type.Integer({ description: 'Violations known now: those of the last full verification plus any found since' }),
              coverage_percent: Type.Number({ description: 'Share of the chain verified, 0–100' }),
              witnesses: Type.Object(
                {
                  quorum: Type.Integer({ description: 'WITNESS_QUORUM' }),
                  latest_checkpoint_cosigned_by: Type.Array(Type.String(), { description: 'The witnesses that cosigned the latest checkpoint' }),
                  quorum_met: Type.Boolean(),
                  items: Type.Array(
                    Type.Object({
                      name: Type.String(),
                      tree_size: Type.Integer({ description: 'The size this witness last cosigned' }),
                      refusals: Type.Integer({ description: 'Checkpoints it refused: inconsistent with what it cosigned before (a split view or a rewritten history), or signed by a key it does not trust even after the service sent it the signed key transitions (last_error says which)' }),
                      last_error: Type.Union([Type.String(), Type.Null()]),
                      last_error_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
                    }),
                  ),
                },
                { description: 'Independent witnesses (WITNESSES) and what they cosigned of this log' },
              ),
              retention: Type.Object(
                {
                  content_days: Type.Union([Type.Integer(), Type.Null()]),
                  last_run_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
                  erased_total: Type.Integer({ description: 'Entries whose content retention erased, in all' }),
                  pending_erasures: Type.Integer({ description: 'Erasures recorded or planned but not yet applied (finished by the next run)' }),
                },
                { description: "The retention job's progress (GET /compliance/retention has the whole policy)" },
              ),
            }),
            ...problemResponses(401, 429),
          },
        },
      },
      async (request) => ctx.integrity.status(principalOf(request).companyId),
    );

    app.post(
      '/integrity/verify',
      {
        config: READ,
        // No body at all means the defaults.
        preValidation: async (request) => {
          request.body ??= {};
        },
        schema: {
          tags: ['integrity'],
          operationId: 'startVerification',
          summary: 'Start a full verification of the chain (one at a time per company)',
          description:
            'Verifies every entry up to the latest checkpoint: hashes, links, the whole Merkle tree and every checkpoint signature. With `entry_signatures: true` it also checks every entry signature (about 60 µs each). Poll GET /integrity/jobs/{job_id}; the result becomes GET /integrity/report.',
          body: Type.Object({ entry_signatures: Type.Optional(Type.Boolean({ default: false })) }, { additionalProperties: false }),
          response: { 202: JobSchema, ...problemResponses(400, 401, 409, 429) },
        },
      },
      async (request, reply) => {
        const p = principalOf(request);
        const job = await ctx.integrity.requestVerification(p.companyId, { entry_signatures: request.body.entry_signatures ?? false }, actorOf(p));
        return reply.code(202).header('location', `/api/v1/integrity/jobs/${job.job_id}`).send(jobView(job));
      },
    );

    app.get(
      '/integrity/jobs/:job_id',
      {
        config: READ,
        schema: {
          tags: ['integrity'],
          operationId: 'getVerificationJob',
          summary: 'A full verification job and, once finished, its report',
          description: 'Poll this after POST /integrity/verify: status is queued, running, completed or failed, with progress while running and the full report (chain status, violations, tree root check) once completed.',
          params: Type.Object({ job_id: ServiceId }),
          response: { 200: JobSchema, ...problemResponses(400, 401, 404, 429) },
        },
      },
      async (request) => jobView(await ctx.integrity.job(principalOf(request).companyId, request.params.job_id)),
    );

    app.get(
      '/integrity/report',
      {
        config: READ,
        schema: {
          tags: ['integrity'],
          operationId: 'getIntegrityReport',
          summary: 'The latest completed full verification report',
          description: 'The report of the most recent completed full verification: entries checked, chain status, every violation found (with seq and log_id) and whether the rebuilt tree matched the latest checkpoint. 404 before the first one completes.',
          response: { 200: ReportSchema, ...problemResponses(401, 404, 429) },
        },
      },
      async (request) => JSON.parse(await ctx.integrity.latestReport(principalOf(request).companyId)),
    );

    app.get(
      '/integrity/checkpoints',
      {
        config: READ,
        schema: {
          tags: ['integrity'],
          operationId: 'listCheckpoints',
          summary: 'The kept signed checkpoints, oldest first (the tree size over time)',
          description: 'Each checkpoint the service signed and kept, ascending by tree size, without the note (GET /integrity/checkpoint?tree_size=N gives one with it). Page with `after` = the last tree_size of the previous page.',
          querystring: Type.Object(
            { after: Type.Integer({ minimum: 0, default: 0 }), limit: Type.Integer({ minimum: 1, maximum: 1000, default: 500 }) },
            { additionalProperties: false },
          ),
          response: {
            200: Type.Object({
              items: Type.Array(Type.Object({ tree_size: Type.Integer(), root_hash: Type.String(), timestamp: Type.String({ format: 'date-time' }), key_id: Type.String() })),
              next_after: Type.Union([Type.Integer(), Type.Null()], { description: 'Pass as after for the next page; null on the last' }),
            }),
            ...problemResponses(400, 401, 429),
          },
        },
      },
      async (request) => {
        const { rows, nextAfter } = await ctx.integrity.checkpoints(principalOf(request).companyId, request.query.after, request.query.limit);
        return { items: rows.map((r) => ({ tree_size: r.tree_size, root_hash: r.root_hash, timestamp: r.timestamp, key_id: r.key_id })), next_after: nextAfter };
      },
    );

    app.get(
      '/integrity/checkpoint',
      {
        config: READ,
        schema: {
          tags: ['integrity'],
          operationId: 'getCheckpoint',
          summary: "The company's latest signed checkpoint, or the one at tree_size",
          description:
            'JSON by default; with `Accept: text/plain` the signed note itself, with the cosignatures of the witnesses appended as further signature lines. Keep the checkpoints you receive: any later one must be consistent with them (GET /integrity/consistency).',
          querystring: Type.Object({ tree_size: Type.Optional(Type.Integer({ minimum: 1 })) }, { additionalProperties: false }),
          produces: ['application/json', 'text/plain'],
          response: { 200: CheckpointSchema, ...problemResponses(400, 401, 404, 429) },
        },
      },
      async (request, reply) => {
        const view = await ctx.integrity.checkpoint(principalOf(request).companyId, request.query.tree_size);
        if (wantsText(request)) return reply.type('text/plain; charset=utf-8').send(rawBody(view.cosigned_note));
        return view;
      },
    );

    app.get(
      '/integrity/timestamps',
      {
        config: READ,
        schema: {
          tags: ['integrity'],
          operationId: 'listCheckpointTimestamps',
          summary: 'RFC 3161 timestamps of the company\'s checkpoints, newest first',
          description:
            'With TSA_URL set, the service has each company\'s latest checkpoint timestamped by that Time Stamping Authority every TSA_INTERVAL_SECONDS (when it changed). Each token\'s imprint is SHA-256 of the checkpoint\'s signed note (docs/ledger-format.md §19); evidence bundles carry the newest one with a consistency proof, and `audit-ledger-verify --tsa-ca` checks it.',
          querystring: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }) }, { additionalProperties: false }),
          response: {
            200: Type.Object({
              items: Type.Array(
                Type.Object({
                  tree_size: Type.Integer(),
                  tsa: Type.String(),
                  gen_time: Type.String({ format: 'date-time', description: 'From the token (this copy is unsigned)' }),
                  token: Type.String({ description: 'The TimeStampToken, DER in base64' }),
                }),
              ),
            }),
            ...problemResponses(400, 401, 429),
          },
        },
      },
      async (request) => ({ items: await ctx.integrity.timestamps(principalOf(request).companyId, request.query.limit) }),
    );

    app.get(
      '/integrity/consistency',
      {
        config: READ,
        schema: {
          tags: ['integrity'],
          operationId: 'getConsistencyProof',
          summary: 'Consistency proof between two tree sizes (RFC 9162 §2.1.4)',
          description: 'Proves the tree of size `second` extends the tree of size `first`. Both must be at most the latest checkpoint\'s size.',
          querystring: Type.Object({ first: Type.Integer({ minimum: 1 }), second: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
          response: {
            200: Type.Object({
              first: Type.Integer(),
              second: Type.Integer(),
              first_root: Type.String(),
              second_root: Type.String(),
              proof: Type.Array(Type.String(), { description: 'Hex hashes, in RFC 9162 order' }),
              first_checkpoint: Type.Union([CheckpointSchema, Type.Null()], { description: 'The checkpoint signed at size first, if one was' }),
              second_checkpoint: Type.Union([CheckpointSchema, Type.Null()]),
            }),
            ...problemResponses(400, 401, 429),
          },
        },
      },
      async (request) => ctx.integrity.consistency(principalOf(request).companyId, request.query.first, request.query.second),
    );
  };
}
