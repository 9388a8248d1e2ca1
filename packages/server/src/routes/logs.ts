// Ingestion, reads and verification of ledger entries (spec 2.1–2.4, 4.2): schemas and thin
// handlers over the ingestion and entries services.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import Type from 'typebox';
import { recordToEntry } from '@audit-ledger/core';
import { principalOf } from '../auth/authenticate.js';
import { INGEST, READ } from '../auth/rules.js';
import { page, seqCursor } from '../http/cursor.js';
import { appendFailure } from '../http/ledger-problems.js';
import { ApiError, problemResponses } from '../http/problems.js';
import { component, EntryCheckSchema, InclusionProofSchema, Instant, JsonObjectSchema, NullableString, ServiceId, Uuid } from '../kernel/shapes.js';
import { LogInput } from '../ingestion/input.js';
import type { Services } from '../services.js';
import type { LogEntryRow } from '../entries/service.js';
import type { GovernanceMarks } from '../governance/execution-check.js';
import { iso } from '../kernel/time.js';

const ApprovalCheckSchema = Type.Object(
  {
    result: Type.Union([Type.Literal('ok'), Type.Literal('mismatch'), Type.Literal('not_approved'), Type.Literal('expired'), Type.Literal('consumed'), Type.Literal('unknown')]),
    approval_id: Type.String(),
    basis: Type.Union([Type.Literal('request'), Type.Literal('standing'), Type.Null()], { description: 'What approved it, when ok' }),
    detail: Type.Union([Type.String(), Type.Null()]),
    check_log_id: Type.Union([Type.String(), Type.Null()], { description: 'The approval.checked entry that records this check' }),
  },
  { ...component('ApprovalCheck'), description: 'Present when the event is action.executed or tool.called and names data.approval_id (docs/governance.md): not part of the entry, which is stored as sent' },
);
const PolicyCheckSchema = Type.Object(
  { result: Type.Union([Type.Literal('ok'), Type.Literal('unknown_version'), Type.Literal('unknown_policy')]), policy_id: Type.String(), version: Type.Union([Type.Integer(), Type.Null()]) },
  { ...component('PolicyCheck'), description: 'Present when the event is policy.evaluated and names data.policy_id: whether the policy version it names is in the register' },
);

const IngestResult = Type.Object({
  log_id: Uuid,
  company_id: Type.String(),
  event_type: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  seq: Type.Integer({ description: 'Position in the company chain, from 0' }),
  hash: Type.String({ description: 'Entry hash, lowercase hex SHA-256' }),
  ingested: Type.Integer({ description: 'Always 1: so a client can read single and batch answers alike' }),
  log_ids: Type.Array(Uuid, { description: '[log_id], as in the batch answer' }),
  idempotency_conflict: Type.Optional(Type.Boolean({ description: 'Present (true) when the body idempotency_key was already used for different content: the event was appended anyway, marked' })),
  idempotency_conflict_of: Type.Optional(Uuid),
  approval_check: Type.Optional(ApprovalCheckSchema),
  policy_check: Type.Optional(PolicyCheckSchema),
});

const Conflict = Type.Object(
  { index: Type.Integer(), log_id: Uuid, idempotency_conflict_of: Uuid },
  { description: 'An event whose body idempotency_key an earlier, different event already used: appended anyway and marked (docs/integrations.md)' },
);

const BatchBody = Type.Object({ logs: Type.Array(LogInput, { minItems: 1, description: 'Up to MAX_BATCH_SIZE events (default 1000); more → 413' }) }, { additionalProperties: false });
const BatchResult = Type.Object({
  ingested: Type.Integer({ description: 'Events accepted (including idempotent repeats)' }),
  appended: Type.Integer({ description: 'Events newly appended (repeats excluded)' }),
  log_ids: Type.Array(Uuid, { description: 'In request order' }),
  idempotency_conflicts: Type.Optional(Type.Array(Conflict, { description: 'Present when any event reused a body idempotency key for different content' })),
  governance_checks: Type.Optional(
    Type.Array(Type.Object({ index: Type.Integer(), log_id: Uuid, approval_check: Type.Optional(ApprovalCheckSchema), policy_check: Type.Optional(PolicyCheckSchema) }), {
      description: 'Present when any event named an approval or a policy version: the check made on each (docs/governance.md)',
    }),
  ),
});

export const EntryView = Type.Object({
  log_id: Uuid,
  company_id: Type.String(),
  seq: Type.Integer(),
  format_version: Type.Integer(),
  event_type: Type.String(),
  data: Type.Union([JsonObjectSchema, Type.Null()], { description: 'The event payload; null once the content was erased (erased: true)' }),
  source: NullableString,
  trace_id: NullableString,
  session_id: NullableString,
  timestamp: NullableString,
  span_id: NullableString,
  parent_span_id: NullableString,
  parent_event_id: NullableString,
  root_event_id: NullableString,
  agent_id: NullableString,
  workflow_id: NullableString,
  causality_type: NullableString,
  idempotency_key: NullableString,
  schema_version: NullableString,
  extra: Type.Union([JsonObjectSchema, Type.Null()]),
  event_id: Type.Union([Type.String(), Type.Null()], { description: "Format version 3: the client's own id for the event (hashed; kept when the content is erased); null in versions 1 and 2" }),
  links: Type.Union([JsonObjectSchema, Type.Null()], {
    description: 'Format version 3: the references the content names (event_id, decision_id, source_id, derived_from, inputs), copied by the rule of docs/ledger-format.md §16 and hashed, so erasure keeps the causal skeleton; null when it names none, and in versions 1 and 2',
  }),
  agent_key_id: Type.Union([Type.String(), Type.Null()], { description: "Format version 4: the agent's own key that signed the event (GET /agent-keys); null when the agent did not sign it" }),
  agent_signature: Type.Union([Type.String(), Type.Null()], { description: "Format version 4: the agent's Ed25519 signature over the event (docs/ledger-format.md §20), base64; hashed" }),
  content_commitment: Type.Union([Type.String(), Type.Null()], { description: 'Format versions 2 and 3: hex SHA-256 commitment to data and extra, hashed in their place (docs/ledger-format.md §14); null in version 1' }),
  content_salt: Type.Union([Type.String(), Type.Null()], { description: "Format versions 2 and 3: the commitment's salt, base64 (not hashed); null in version 1 and once erased" }),
  erased: Type.Boolean({ description: 'True when the content (data, extra, salt) was erased; the entry still verifies through its commitment' }),
  erasure_id: Type.Union([Uuid, Type.Null()], { description: 'For an erased entry: the log_id of the compliance.erasure entry that records the erasure' }),
  erased_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  prev_hash: Type.String(),
  hash: Type.String(),
  content_hash: Type.String({ description: 'The entry hash again, under the name some agent SDKs read' }),
  signature: Type.String({ description: 'Ed25519, base64' }),
  key_id: Type.String(),
  idempotency_conflict: Type.Boolean({ description: 'True when this event reused a body idempotency_key an earlier, different event had used (appended anyway); not hashed, derivable from the hashed keys' }),
  idempotency_conflict_of: Type.Union([Uuid, Type.Null()], { description: 'The log_id of the entry that first used the key, when idempotency_conflict' }),
  approval_check: Type.Optional(ApprovalCheckSchema),
  policy_check: Type.Optional(PolicyCheckSchema),
});

/** An entry as the API answers it: the ledger entry, plus content_hash (= hash) for agent SDKs that read that name, and the idempotency-conflict mark. */
export const entryView = (row: LogEntryRow, marks?: GovernanceMarks) => {
  const entry = recordToEntry(row);
  return {
    ...marks,
    ...entry,
    event_id: row.event_id,
    links: entry.links ?? null,
    agent_key_id: row.agent_key_id ?? null,
    agent_signature: row.agent_signature ?? null,
    content_hash: entry.hash,
    content_commitment: row.content_commitment,
    content_salt: row.content_salt,
    erased: row.erased_at !== null,
    erasure_id: row.erasure_id,
    erased_at: row.erased_at,
    idempotency_conflict: row.idempotency_conflict_of !== null,
    idempotency_conflict_of: row.idempotency_conflict_of,
  };
};

const ListQuery = Type.Object(
  {
    trace_id: Type.Optional(Uuid),
    session_id: Type.Optional(Uuid),
    event_type: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'An exact event type, or a prefix ending in * (hitl.*: every type starting with hitl.)' })),
    source: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    agent_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Not indexed: on a large ledger, narrow by time or trace too' })),
    from: Type.Optional(Instant('created_at at or after')),
    to: Type.Optional(Instant('created_at before')),
    limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
    cursor: Type.Optional(Type.String({ maxLength: 200, description: 'next_cursor of the previous page' })),
    order: Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'asc', description: 'By seq' }),
  },
  { additionalProperties: false },
);



/** The services these routes use. */
export type LogServices = Pick<Services, 'config' | 'entries' | 'ingestion'>;

export function logRoutes(ctx: LogServices): FastifyPluginAsyncTypebox {
  /** Who sends: the company, and the API key (null for a user). */
  const sender = (request: FastifyRequest) => {
    const p = principalOf(request);
    return { companyId: p.companyId, keyId: p.kind === 'api_key' ? p.keyId : null };
  };

  return async (app) => {
    app.post(
      '/logs',
      {
        config: INGEST,
        schema: {
          tags: ['logs'],
          operationId: 'appendLog',
          summary: 'Append one audit event',
          description: 'A 200 means the entry is committed. Send `Idempotency-Key` to make retries safe.',
          headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) }),
          body: LogInput,
          response: { 200: IngestResult, ...problemResponses(400, 401, 403, 413, 415, 422, 429, 503) },
        },
      },
      async (request) => {
        const from = sender(request);
        const result = await ctx.ingestion.appendOne(from, request.body, request.headers['idempotency-key']).catch((err) => appendFailure(err, () => '/body'));
        const companyId = from.companyId;
        return {
          log_id: result.log_id,
          company_id: companyId,
          event_type: result.event_type,
          created_at: result.created_at,
          seq: result.seq,
          hash: result.hash,
          ingested: 1,
          log_ids: [result.log_id],
          ...(result.idempotency_conflict_of !== null ? { idempotency_conflict: true, idempotency_conflict_of: result.idempotency_conflict_of } : {}),
          ...(result.approval_check ? { approval_check: result.approval_check } : {}),
          ...(result.policy_check ? { policy_check: result.policy_check } : {}),
        };
      },
    );

    app.post(
      '/logs/batch',
      {
        config: INGEST,
        schema: {
          tags: ['logs'],
          operationId: 'appendLogBatch',
          summary: 'Append many audit events, all or nothing',
          description: 'One invalid item rejects the whole batch (400 naming the item index and field) and nothing is appended.',
          body: BatchBody,
          response: { 200: BatchResult, ...problemResponses(400, 401, 403, 413, 415, 422, 429, 503) },
        },
        // Refuse an oversized batch before validating every item in it.
        preValidation: async (request) => {
          const logs = (request.body as { logs?: unknown } | undefined)?.logs;
          if (Array.isArray(logs) && logs.length > ctx.config.maxBatchSize) {
            throw new ApiError(413, 'batch_too_large', `A batch holds at most ${ctx.config.maxBatchSize} events; this one has ${logs.length}`);
          }
        },
      },
      async (request) => {
        const results = await ctx.ingestion.appendBatch(sender(request), request.body.logs).catch((err) => appendFailure(err, (i) => `/body/logs/${i}`));
        const checks = results.flatMap((r, index) => (r.approval_check || r.policy_check ? [{ index, log_id: r.log_id, ...(r.approval_check ? { approval_check: r.approval_check } : {}), ...(r.policy_check ? { policy_check: r.policy_check } : {}) }] : []));
        const conflicts = results.flatMap((r, index) => (r.idempotency_conflict_of !== null ? [{ index, log_id: r.log_id, idempotency_conflict_of: r.idempotency_conflict_of }] : []));
        return {
          ingested: results.length,
          appended: results.filter((r) => !r.duplicate).length,
          log_ids: results.map((r) => r.log_id),
          ...(conflicts.length > 0 ? { idempotency_conflicts: conflicts } : {}),
          ...(checks.length > 0 ? { governance_checks: checks } : {}),
        };
      },
    );

    app.get(
      '/logs',
      {
        config: READ,
        schema: {
          tags: ['logs'],
          operationId: 'listLogs',
          summary: 'List entries, filtered, with cursor pagination',
          description: 'Entries of the company in seq order (or newest first with order=desc), filtered by trace, session, event type, source and created_at range. Pass next_cursor back as cursor for the next page; it is null on the last page.',
          querystring: ListQuery,
          response: { 200: Type.Object({ items: Type.Array(EntryView), next_cursor: NullableString }), ...problemResponses(400, 401, 429) },
        },
      },
      async (request) => {
        const q = request.query;
        const rows = await ctx.entries.list(principalOf(request).companyId, {
          trace_id: q.trace_id,
          session_id: q.session_id,
          event_type: q.event_type,
          source: q.source,
          agent_id: q.agent_id,
          from: q.from === undefined ? undefined : iso(Date.parse(q.from)),
          to: q.to === undefined ? undefined : iso(Date.parse(q.to)),
          afterSeq: seqCursor(q.cursor),
          order: q.order,
          limit: q.limit,
        });
        const marks = await ctx.entries.marks(principalOf(request).companyId, rows);
        return page(rows, q.limit, (r) => ({ seq: r.seq }), (r) => entryView(r, marks.get(r.log_id)));
      },
    );

    app.get(
      '/logs/search',
      {
        config: READ,
        schema: {
          tags: ['logs'],
          operationId: 'searchLogs',
          summary: 'Search inside events: words in their content and conditions on JSON paths',
          description:
            'Every word of `q` must occur in the entry\'s data (a word ending in * is a prefix; case does not matter), and every `where` condition must hold: `data.<key>[.<key>…]` then `=`, `!=`, `>`, `>=`, `<` or `<=` and a JSON value (`data.customer_id = "c-42"`, `data.amount > 100`; a number never equals a string). With the list\'s filters, newest first, in pages. Only the company\'s entries; erased content is not found (it leaves the index before the erasure answers). Words are indexed after the commit, in batches, usually within a fraction of a second: `indexed_seq` says up to which seq the index covers the company\'s entries, and `wait_for_seq` waits (at most 10 s) until it covers that seq, so a client that just appended finds its entry (conditions on JSON paths read the entries themselves and need no index).',
          querystring: Type.Object(
            {
              q: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'Words to find (at most 10)' })),
              where: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 500 }), Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { maxItems: 5 })], { description: 'A condition on a value inside data; repeat for several (at most 5)' })),
              trace_id: Type.Optional(Uuid),
              event_type: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'An exact event type, or a prefix ending in *' })),
              agent_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
              from: Type.Optional(Instant('created_at at or after')),
              to: Type.Optional(Instant('created_at before')),
              limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }),
              cursor: Type.Optional(Type.String({ maxLength: 200 })),
              wait_for_seq: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: "Wait (at most 10 s) until the index covers the company's entries up to this seq (an append's `seq`; a seq past the chain's head waits for the head), then search" })),
            },
            { additionalProperties: false },
          ),
          response: {
            200: Type.Object({
              items: Type.Array(EntryView),
              next_cursor: NullableString,
              indexed_seq: Type.Union([Type.Integer({ minimum: -1 }), Type.Null()], { description: "The index held the words of every entry of the company up to this seq when the search ran (-1: none yet; null: SEARCH_INDEX=off, words cannot be searched). Later entries may not be found by words yet; entries appended before are, once it reaches them (wait_for_seq)." }),
            }),
            ...problemResponses(400, 401, 409, 422, 429),
          },
        },
      },
      async (request) => {
        const q = request.query;
        const companyId = principalOf(request).companyId;
        const { rows, indexedSeq } = await ctx.entries.search(companyId, {
          q: q.q,
          waitForSeq: q.wait_for_seq,
          where: q.where === undefined ? undefined : Array.isArray(q.where) ? q.where : [q.where],
          trace_id: q.trace_id,
          event_type: q.event_type,
          agent_id: q.agent_id,
          from: q.from === undefined ? undefined : iso(Date.parse(q.from)),
          to: q.to === undefined ? undefined : iso(Date.parse(q.to)),
          afterSeq: seqCursor(q.cursor),
          order: 'desc',
          limit: q.limit,
        });
        const marks = await ctx.entries.marks(companyId, rows);
        return { ...page(rows, q.limit, (r) => ({ seq: r.seq }), (r) => entryView(r, marks.get(r.log_id))), indexed_seq: indexedSeq };
      },
    );

    app.get(
      '/logs/:log_id',
      {
        config: READ,
        schema: {
          tags: ['logs'],
          operationId: 'getLog',
          summary: 'One stored entry with its hash, link and signature',
          description: 'The entry exactly as stored and hashed (docs/ledger-format.md), with hash, prev_hash, signature and key_id, so a client can check it on its own (the SDK\'s verifyReceipt). Another company\'s log_id is answered 404.',
          params: Type.Object({ log_id: ServiceId }),
          response: { 200: EntryView, ...problemResponses(400, 401, 404, 429) },
        },
      },
      async (request) => {
        const companyId = principalOf(request).companyId;
        const row = await ctx.entries.get(companyId, request.params.log_id);
        return entryView(row, (await ctx.entries.marks(companyId, [row])).get(row.log_id));
      },
    );

    app.get(
      '/logs/:log_id/verify',
      {
        config: READ,
        schema: {
          tags: ['logs'],
          operationId: 'verifyLog',
          summary: "Check one entry's hash, its links to both neighbours, and its signature",
          description: 'The service recomputes the entry\'s hash, checks prev_hash against the entry before it and the next entry\'s link to it, verifies the Ed25519 signature, and proves the entry\'s inclusion in the latest signed checkpoint. `problems` lists what failed.',
          params: Type.Object({ log_id: ServiceId }),
          response: { 200: EntryCheckSchema, ...problemResponses(400, 401, 404, 429) },
        },
      },
      async (request) => ctx.entries.check(principalOf(request).companyId, request.params.log_id),
    );

    app.get(
      '/logs/:log_id/proof',
      {
        config: READ,
        schema: {
          tags: ['logs'],
          operationId: 'getInclusionProof',
          summary: 'Inclusion proof of one entry in a signed tree (RFC 9162 §2.1.3)',
          description:
            'tree_size defaults to the latest checkpoint. The leaf is SHA-256(0x00 ‖ entry hash bytes); check the proof against the root of a checkpoint you hold for that size.',
          params: Type.Object({ log_id: ServiceId }),
          querystring: Type.Object({ tree_size: Type.Optional(Type.Integer({ minimum: 1 })) }, { additionalProperties: false }),
          response: {
            200: InclusionProofSchema,
            ...problemResponses(400, 401, 404, 409, 429),
          },
        },
      },
      async (request) => ctx.entries.proof(principalOf(request).companyId, request.params.log_id, request.query.tree_size),
    );
  };
}
