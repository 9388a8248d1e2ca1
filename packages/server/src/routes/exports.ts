// Exports: the company's entries as JSON Lines or CSV, streamed; and evidence bundles
// that an auditor verifies offline with `audit-ledger verify-bundle`.
import type { JsonObject } from '@audit-ledger/core';
import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { principalOf } from '../auth/authenticate.js';
import { ApiError, problemResponses } from '../http/problems.js';
import { CheckpointSchema, Instant, Uuid } from '../http/schemas.js';

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
    key_transitions: Type.Array(Open({ old_key_id: Type.String(), new_key_id: Type.String(), statement: Type.String() }, 'A key rotation: the new key endorsed by the old (docs/ledger-format.md §12)')),
    entries_after_checkpoint: Type.Integer({ description: 'Matching entries newer than the checkpoint, left out: nothing signed covers them yet' }),
    entries: Type.Array(ProvenEntry),
    erasure_records: Type.Array(ProvenEntry, { description: 'The compliance.erasure entries that the erased entries among `entries` name, proven the same way (docs/ledger-format.md §14)' }),
  },
  { description: 'The bundle (docs/ledger-format.md, "Evidence bundles")' },
);
import { buildEvidence, csvLines, entriesOf, jsonLines, MAX_EVIDENCE_ENTRIES } from '../exports/formats.js';
import type { LogEntryRow } from '../store/chain.js';
import type { Services } from '../services.js';
import { notYetCheckpointed } from '../http/ledger-problems.js';
import { iso } from '../time.js';
import { READ } from '../auth/rules.js';
import { requestActor } from '../compliance/trail.js';


const ExportQuery = Type.Object(
  {
    format: Type.Union([Type.Literal('jsonl'), Type.Literal('csv')], { default: 'jsonl' }),
    from: Type.Optional(Instant('created_at at or after')),
    to: Type.Optional(Instant('created_at before')),
    trace_id: Type.Optional(Uuid),
    event_type: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
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
export type ExportServices = Pick<Services, 'clock' | 'config' | 'ledger' | 'signingKeys' | 'trail' | 'witnessStore'>;

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
        const { companyId } = principalOf(request);
        const q = request.query;
        // The export is the ledger as it stands once its own export.generated entry is appended:
        // a complete export ends with that entry, so a checkpoint taken after it covers it.
        const record = await ctx.trail.record(companyId, 'export.generated', requestActor(request), { format: q.format, filter: { ...q } });
        const seqBelow = record.seq + 1;
        const rows = entriesOf(ctx.ledger, companyId, {
          trace_id: q.trace_id,
          event_type: q.event_type,
          from: q.from === undefined ? undefined : iso(Date.parse(q.from)),
          to: q.to === undefined ? undefined : iso(Date.parse(q.to)),
          seqBelow,
        });
        const csv = q.format === 'csv';
        const name = `audit-ledger-${companyId}-${iso(ctx.clock()).replace(/[:.]/g, '')}.${csv ? 'csv' : 'jsonl'}`;
        // Readable.from pulls the next page only when the socket has taken the last one.
        const body = Readable.from(csv ? csvLines(rows) : jsonLines(rows));
        body.on('error', (err) => request.log.error({ err }, 'export stream failed'));
        return reply
          .type(csv ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8')
          .header('content-disposition', `attachment; filename="${name}"`)
          .send(body as never);
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
        const { companyId } = principalOf(request);
        const q = request.query;
        const byTrace = q.trace_id !== undefined;
        const byRange = q.from_seq !== undefined || q.to_seq !== undefined;
        if (byTrace === byRange || (byRange && (q.from_seq === undefined || q.to_seq === undefined))) {
          throw new ApiError(400, 'validation_failed', 'Give either trace_id, or both from_seq and to_seq', {
            errors: [{ field: '/querystring', message: 'needs trace_id, or from_seq and to_seq' }],
          });
        }
        if (byRange && (q.to_seq as number) < (q.from_seq as number)) {
          throw new ApiError(400, 'validation_failed', 'to_seq must not be below from_seq', { errors: [{ field: '/querystring/to_seq', message: 'must be at least from_seq' }] });
        }
        if (byRange && (q.to_seq as number) - (q.from_seq as number) + 1 > MAX_EVIDENCE_ENTRIES) {
          throw new ApiError(400, 'validation_failed', `A bundle holds at most ${MAX_EVIDENCE_ENTRIES} entries; narrow the range`, {
            errors: [{ field: '/querystring/to_seq', message: `at most ${MAX_EVIDENCE_ENTRIES} entries from from_seq` }],
          });
        }
        const checkpoint = await ctx.ledger.latestCheckpoint(companyId);
        const rows: LogEntryRow[] = byTrace
          ? await ctx.ledger.listEntries(companyId, { trace_id: q.trace_id, order: 'asc', limit: MAX_EVIDENCE_ENTRIES + 1 })
          : await ctx.ledger.listEntries(companyId, { afterSeq: (q.from_seq as number) - 1, order: 'asc', limit: (q.to_seq as number) - (q.from_seq as number) + 1 });
        if (rows.length > MAX_EVIDENCE_ENTRIES) {
          throw new ApiError(400, 'validation_failed', `The trace has more than ${MAX_EVIDENCE_ENTRIES} entries; bundle it by seq ranges instead`, {
            errors: [{ field: '/querystring/trace_id', message: `more than ${MAX_EVIDENCE_ENTRIES} entries` }],
          });
        }
        if (rows.length === 0) throw new ApiError(404, 'not_found', byTrace ? `No entries with trace_id ${q.trace_id}` : `No entries from seq ${q.from_seq} to ${q.to_seq}`);
        if (!checkpoint || (rows[0] as LogEntryRow).seq >= checkpoint.tree_size) throw notYetCheckpointed(ctx.config.checkpointIntervalMs, 'None of these entries is');
        const selection = byTrace ? { trace_id: q.trace_id as string } : { from_seq: q.from_seq as number, to_seq: q.to_seq as number };
        const bundle = await buildEvidence(ctx, companyId, rows, checkpoint, { selection, generatedAt: iso(ctx.clock()), keyName: ctx.config.ledgerOrigin });
        await ctx.trail.record(companyId, 'evidence.generated', requestActor(request), { selection: JSON.parse(JSON.stringify(selection)) as JsonObject, checkpoint_tree_size: checkpoint.tree_size, entries: bundle.entries.length });
        const name = `evidence-${companyId}-${byTrace ? q.trace_id : `${q.from_seq}-${q.to_seq}`}.json`;
        return reply.header('content-disposition', `attachment; filename="${name}"`).send(bundle as never);
      },
    );
  };
}
