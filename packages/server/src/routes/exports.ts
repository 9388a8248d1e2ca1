// Exports: the company's entries as JSON Lines or CSV, streamed; and evidence bundles
// that an auditor verifies offline with `audit-ledger verify-bundle`.
import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { principalOf } from '../auth/authenticate.js';
import { rawBody } from '../http/raw-body.js';
import { problemResponses } from '../http/problems.js';
import { CheckpointSchema, Instant, KeyTransitionSchema, Uuid } from '../kernel/shapes.js';

const Open = (properties: Parameters<typeof Type.Object>[0], description: string) => Type.Object(properties, { additionalProperties: true, description });

const ProvenEntry = Type.Object({
  entry: Open(
    { log_id: Uuid, seq: Type.Integer(), event_type: Type.String(), hash: Type.String(), prev_hash: Type.String(), signature: Type.String(), key_id: Type.String() },
    'The entry: its hashed fields, hash, signature and key_id (docs/ledger-format.md)',
  ),
  inclusion_proof: Type.Object({ leaf_index: Type.Integer(), tree_size: Type.Integer(), proof: Type.Array(Type.String()) }),
});

/** The evidence bundle (docs/ledger-format.md §10); entries keep every stored field, named or not. */
const EvidenceBundleSchema = Type.Object(
  {
    format: Type.Literal('audit-ledger/evidence-bundle/v1'),
    company_id: Uuid,
    generated_at: Type.String({ format: 'date-time' }),
    selection: Type.Union([Type.Object({ trace_id: Uuid }), Type.Object({ from_seq: Type.Integer(), to_seq: Type.Integer() })]),
    checkpoint: CheckpointSchema,
    public_keys: Type.Array(Open({ key_id: Type.String(), algorithm: Type.String(), public_key: Type.String(), note_verifier_key: Type.String() }, 'A copy of a signing key (trust only a key you pinned)')),
    key_transitions: Type.Array(KeyTransitionSchema, { description: 'Key rotations: each new key endorsed by the old (docs/ledger-format.md §12)' }),
    entries_after_checkpoint: Type.Integer({ description: 'Matching entries newer than the checkpoint, left out: nothing signed covers them yet' }),
    entries: Type.Array(ProvenEntry),
    agent_keys: Type.Array(
      Type.Object({ key_id: Type.String(), agent_id: Type.String(), public_key: Type.String(), active_from: Type.String({ format: 'date-time' }), active_to: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]) }),
      { description: "The agent key register's entries for the agent keys the entries name (docs/ledger-format.md §20), as the service holds them now; an auditor may check against a register of their own (audit-ledger-verify --agent-keys)" },
    ),
    erasure_records: Type.Array(ProvenEntry, { description: 'The compliance.erasure entries that the erased entries among `entries` name, proven the same way (docs/ledger-format.md §14)' }),
    timestamp: Type.Union(
      [
        Type.Object({
          tsa: Type.String({ description: 'The Time Stamping Authority (TSA_URL)' }),
          tree_size: Type.Integer({ description: 'The timestamped checkpoint\'s tree size (at most the bundle\'s)' }),
          gen_time: Type.String({ format: 'date-time', description: 'When the TSA saw it (from the token; unsigned copy)' }),
          checkpoint_note: Type.String({ description: 'The timestamped checkpoint\'s signed note, exactly as signed' }),
          token: Type.String({ description: 'The RFC 3161 TimeStampToken (CMS SignedData), DER in base64: its imprint is SHA-256 of checkpoint_note' }),
          consistency_proof: Type.Array(Type.String(), { description: 'RFC 9162 consistency proof (hex) from the timestamped tree to the bundle\'s checkpoint' }),
        }),
        Type.Null(),
      ],
      { description: 'The RFC 3161 timestamp of the newest timestamped checkpoint the bundle\'s tree extends (docs/ledger-format.md §19); null without TSA_URL or before the first token' },
    ),
  },
  { description: 'The bundle (docs/ledger-format.md, "Evidence bundles")' },
);
import { csvLines, jsonLines, MAX_EVIDENCE_ENTRIES } from '../exports/formats.js';
import type { Services } from '../services.js';
import { iso } from '../kernel/time.js';
import { READ } from '../auth/rules.js';
import { actorOf } from '../auth/authenticate.js';


const ExportQuery = Type.Object(
  {
    format: Type.Union([Type.Literal('jsonl'), Type.Literal('csv')], { default: 'jsonl' }),
    from: Type.Optional(Instant('created_at at or after')),
    to: Type.Optional(Instant('created_at before')),
    trace_id: Type.Optional(Uuid),
    event_type: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'An exact event type, or a prefix ending in * (hitl.*)' })),
  },
  { additionalProperties: false },
);

const EvidenceQuery = Type.Object(
  {
    trace_id: Type.Optional(Uuid),
    from_seq: Type.Optional(Type.Integer({ minimum: 0 })),
    to_seq: Type.Optional(Type.Integer({ minimum: 0, description: 'Inclusive' })),
  },
  { additionalProperties: false },
);

/** The services these routes use. */
export type ExportServices = Pick<Services, 'clock' | 'exports'>;

export function exportRoutes(ctx: ExportServices): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/exports/logs',
      {
        config: READ,
        schema: {
          tags: ['exports'],
          operationId: 'exportLogs',
          summary: 'Stream every matching entry, in seq order, as JSON Lines or CSV',
          description:
            'All ledger fields of each entry. JSON Lines (`application/x-ndjson`) is the verifiable form: `audit-ledger verify-bundle FILE --checkpoint CHECKPOINT` checks a complete export against a checkpoint. CSV has a header row, `data` and `extra` as JSON text, an empty field for null and `""` for an empty string; a text cell that a spreadsheet would run as a formula (first character `=`, `+`, `-`, `@`, tab or carriage return) gets a leading apostrophe. CSV is for reading; JSON Lines holds the values exactly as stored. Streamed in constant memory; no size limit.',
          querystring: ExportQuery,
          produces: ['application/x-ndjson', 'text/csv'],
          response: { 200: Type.String({ description: 'The export file' }), ...problemResponses(400, 401, 429) },
        },
      },
      async (request, reply) => {
        const p = principalOf(request);
        const q = request.query;
        const rows = await ctx.exports.exportEntries(p.companyId, q, actorOf(p));
        const csv = q.format === 'csv';
        const name = `audit-ledger-${p.companyId}-${iso(ctx.clock()).replace(/[:.]/g, '')}.${csv ? 'csv' : 'jsonl'}`;
        // Readable.from pulls the next page only when the socket has taken the last one.
        const body = Readable.from(csv ? csvLines(rows) : jsonLines(rows));
        body.on('error', (err) => request.log.error({ err }, 'export stream failed'));
        return reply
          .type(csv ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8')
          .header('content-disposition', `attachment; filename="${name}"`)
          .send(rawBody(body));
      },
    );

    app.get(
      '/exports/evidence',
      {
        config: READ,
        schema: {
          tags: ['exports'],
          operationId: 'getEvidenceBundle',
          summary: "Evidence bundle: a trace's entries (or a seq range) with inclusion proofs to one signed checkpoint",
          description: `Give trace_id, or from_seq and to_seq (inclusive). At most ${MAX_EVIDENCE_ENTRIES} entries. Entries newer than the latest checkpoint are left out and counted in entries_after_checkpoint. Verify offline with \`audit-ledger verify-bundle FILE --public-key KEY\`; the format is in docs/ledger-format.md.`,
          querystring: EvidenceQuery,
          response: { 200: EvidenceBundleSchema, ...problemResponses(400, 401, 404, 409, 429) },
        },
      },
      async (request, reply) => {
        const p = principalOf(request);
        const q = request.query;
        const bundle = await ctx.exports.evidence(p.companyId, q, actorOf(p));
        const name = `evidence-${p.companyId}-${q.trace_id ?? `${q.from_seq}-${q.to_seq}`}.json`;
        return reply.header('content-disposition', `attachment; filename="${name}"`).send(bundle);
      },
    );
  };
}
