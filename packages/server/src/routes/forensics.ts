// Forensic replay sessions (spec 2.5, 2.6, 4.3): create one for a trace, then ask for its
// timeline, causal graph, staleness and root cause. Every answer comes from the session's
// pinned, verified events, so it does not change when the trace grows.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { principalOf } from '../auth/authenticate.js';
import type { JsonObject } from '@audit-ledger/core';
import { rawBody } from '../http/raw-body.js';
import { idCursor, page, seqCursor } from '../http/cursor.js';
import { problemResponses } from '../http/problems.js';
import { ServiceId, Uuid } from '../kernel/shapes.js';
import { toMermaid } from '../forensics/graph.js';
import type { Services } from '../services.js';
import { READ } from '../auth/rules.js';

const Json = Type.Object({}, { additionalProperties: true });
const NullableString = Type.Union([Type.String(), Type.Null()]);

const Session = Type.Object({
  id: Uuid,
  company_id: Type.String(),
  trace_id: Uuid,
  token_id: NullableString,
  metadata: Json,
  created_at: Type.String({ format: 'date-time' }),
  event_count: Type.Integer({ description: 'Events of the trace in the session' }),
  tree_size: Type.Integer({ description: 'The chain length the session is pinned to: it sees entries with seq < tree_size only' }),
});

const Candidate = Type.Object({
  root_cause_type: Type.String(),
  description: Type.String(),
  confidence: Type.Number(),
  remediation: Type.String(),
  evidence: Type.Array(Uuid, { description: 'log_ids the finding rests on' }),
});

const PathStep = Type.Object({
  log_id: Uuid,
  seq: Type.Integer(),
  event_type: Type.String(),
  role: Type.Union([Type.Literal('cause'), Type.Literal('propagation'), Type.Literal('decision'), Type.Literal('outcome')]),
});

const Finding = Type.Object({
  type: Type.String({ description: 'A root-cause type; GRAPH for cycles and dangling references; ERASED for events of the trace whose content was erased (the analysis sees only their type, times and links)' }),
  severity: Type.Union([Type.Literal('info'), Type.Literal('low'), Type.Literal('medium'), Type.Literal('high')]),
  description: Type.String(),
  evidence: Type.Array(Uuid),
});

const Outcome = Type.Object({
  kind: Type.Union([
    Type.Literal('tampered'),
    Type.Literal('policy_violated'),
    Type.Literal('rejected'),
    Type.Literal('failed'),
    Type.Literal('denied'),
    Type.Literal('acted_on_stale_context'),
    Type.Literal('completed'),
  ]),
  bad: Type.Boolean(),
  log_id: Type.Union([Uuid, Type.Null()], { description: 'The event that shows the outcome (null for a good run with no completion event)' }),
  description: Type.String(),
});

const SessionParams = Type.Object({ replay_session_id: ServiceId });

/** The services these routes use. */
export type ForensicsServices = Pick<Services, 'forensics'>;

export function forensicsRoutes(ctx: ForensicsServices): FastifyPluginAsyncTypebox {
  return async (app) => {
    const load = (companyId: string, id: string) => ctx.forensics.sessionTrace(companyId, id);

    app.post(
      '/forensics/replays',
      {
        config: READ,
        schema: {
          tags: ['forensics'],
          operationId: 'createReplay',
          summary: 'Create a replay session for a trace, pinned to the ledger as it is now',
          description: 'A replay session pins a trace at its current size, so its answers (timeline, causal graph, staleness, root cause) stay the same when more events arrive. 404 when the trace has no events.',
          body: Type.Object(
            {
              trace_id: Uuid,
              token_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Free-form reference (for example the agent run or token being investigated)' })),
              metadata: Type.Object({}, { additionalProperties: true, description: 'Free-form; stored as given' }),
            },
            { additionalProperties: false },
          ),
          response: { 200: Session, ...problemResponses(400, 401, 404, 429) },
        },
      },
      async (request) => {
        return await ctx.forensics.createSession(principalOf(request).companyId, { ...request.body, metadata: request.body.metadata as JsonObject });
      },
    );

    app.get(
      '/traces',
      {
        config: READ,
        schema: {
          tags: ['forensics'],
          operationId: 'listTraces',
          summary: "The company's traces, most recently active first",
          description:
            'One row per trace_id: first and last created_at, event count, the agents seen, and whether a replay of it found an anomaly (null when it was never replayed). Cursor pagination: pass next_cursor back as cursor.',
          querystring: Type.Object(
            { limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }), cursor: Type.Optional(Type.String({ maxLength: 200 })) },
            { additionalProperties: false },
          ),
          response: {
            200: Type.Object({
              items: Type.Array(
                Type.Object({
                  trace_id: Uuid,
                  first_at: Type.String({ format: 'date-time' }),
                  last_at: Type.String({ format: 'date-time' }),
                  event_count: Type.Integer(),
                  agents: Type.Array(Type.String()),
                  anomaly_detected: Type.Union([Type.Boolean(), Type.Null()], { description: 'Whether a replay found an anomaly (a bad outcome with its root cause); null when never replayed' }),
                  anomaly_type: Type.Union([Type.String(), Type.Null()], { description: 'The root cause type (STALE_CONTEXT, TOOL_FAILURE, …) of the latest replay that found an anomaly; null when none did' }),
                }),
              ),
              next_cursor: NullableString,
            }),
            ...problemResponses(400, 401, 429),
          },
        },
      },
      async (request) => {
        const q = request.query;
        const rows = await ctx.forensics.traces(principalOf(request).companyId, {
          beforeSeq: seqCursor(q.cursor),
          limit: q.limit,
        });
        return page(rows, q.limit, (r) => ({ seq: r.last_seq }), ({ last_seq: _seq, ...r }) => r);
      },
    );

    app.get(
      '/forensics/replays',
      {
        config: READ,
        schema: {
          tags: ['forensics'],
          operationId: 'listReplays',
          summary: 'Replay sessions, newest first',
          description: 'The company\'s replay sessions, newest first, with cursor pagination; filter by trace_id.',
          querystring: Type.Object(
            {
              trace_id: Type.Optional(Uuid),
              limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
              cursor: Type.Optional(Type.String({ maxLength: 200 })),
            },
            { additionalProperties: false },
          ),
          response: { 200: Type.Object({ items: Type.Array(Session), next_cursor: NullableString }), ...problemResponses(400, 401, 429) },
        },
      },
      async (request) => {
        const q = request.query;
        const rows = await ctx.forensics.sessions(principalOf(request).companyId, {
          traceId: q.trace_id,
          before: idCursor(q.cursor),
          limit: q.limit,
        });
        return page(rows, q.limit, (r) => ({ id: r.session_id }), (r) => ctx.forensics.view(r));
      },
    );

    app.get(
      '/forensics/replays/:replay_session_id',
      {
        config: READ,
        schema: { tags: ['forensics'], operationId: 'getReplay', description: 'The session: its trace, the number of events it covers, who created it and its metadata.', summary: 'One replay session', params: SessionParams, response: { 200: Session, ...problemResponses(400, 401, 404, 429) } },
      },
      async (request) => ctx.forensics.view(await ctx.forensics.session(principalOf(request).companyId, request.params.replay_session_id)),
    );

    app.get(
      '/forensics/replays/:replay_session_id/timeline',
      {
        config: READ,
        schema: {
          tags: ['forensics'],
          operationId: 'getReplayTimeline',
          summary: "The session's events in event-time order, then seq, each with its integrity",
          description: "Event time is the client's `timestamp` when it sent a valid one, else the server's `created_at` (`timestamp_source` says which).",
          params: SessionParams,
          response: {
            200: Type.Object({
              session_id: Uuid,
              trace_id: Uuid,
              items: Type.Array(
                Type.Object({
                  log_id: Uuid,
                  seq: Type.Integer(),
                  event_type: Type.String(),
                  timestamp: Type.String({ format: 'date-time' }),
                  timestamp_source: Type.Union([Type.Literal('client'), Type.Literal('server')]),
                  created_at: Type.String({ format: 'date-time' }),
                  source: NullableString,
                  data: Json,
                  erased: Type.Boolean({ description: 'The content was erased (docs/compliance.md): data is {}' }),
                  integrity: Type.Union([Type.Literal('valid'), Type.Literal('invalid')]),
                }),
              ),
            }),
            ...problemResponses(400, 401, 404, 429),
          },
        },
      },
      async (request) => {
        const { s, trace } = await load(principalOf(request).companyId, request.params.replay_session_id);
        return { session_id: s.session_id, trace_id: s.trace_id, items: ctx.forensics.timeline(trace) };
      },
    );

    app.get(
      '/forensics/replays/:replay_session_id/causal-graph',
      {
        config: READ,
        schema: {
          tags: ['forensics'],
          operationId: 'getReplayCausalGraph',
          summary: 'The causal graph: events and the context sources they read, with typed edges',
          description:
            'Edge types: caused_by (effect → cause), reads (event → source), decided_on (decision → input), denied_by (denied event → denial), reviewed_by (decision → review). Cycles among caused_by edges and references that name nothing in the trace are listed, never followed. `?format=mermaid` gives a Mermaid flowchart of the same graph as text/plain.',
          params: SessionParams,
          querystring: Type.Object({ format: Type.Union([Type.Literal('json'), Type.Literal('mermaid')], { default: 'json' }) }, { additionalProperties: false }),
          produces: ['application/json', 'text/plain'],
          response: {
            200: Type.Object({
              session_id: Uuid,
              trace_id: Uuid,
              nodes: Type.Array(Type.Object({ id: Type.String(), type: Type.String(), label: Type.String(), metadata: Json })),
              edges: Type.Array(Type.Object({ source: Type.String(), target: Type.String(), type: Type.String(), label: Type.String() })),
              cycles: Type.Array(Type.Array(Type.String()), { description: 'Each cycle among caused_by edges, as node ids' }),
              dangling: Type.Array(Type.Object({ log_id: Uuid, field: Type.String(), reference: Type.String() }), { description: 'References that name no event or source of the session' }),
            }),
            ...problemResponses(400, 401, 404, 429),
          },
        },
      },
      async (request, reply) => {
        const { s, trace } = await load(principalOf(request).companyId, request.params.replay_session_id);
        const graph = ctx.forensics.graph(trace);
        if (request.query.format === 'mermaid') return reply.type('text/plain; charset=utf-8').send(rawBody(toMermaid(graph)));
        return { session_id: s.session_id, trace_id: s.trace_id, ...graph };
      },
    );

    app.get(
      '/forensics/replays/:replay_session_id/staleness',
      {
        config: READ,
        schema: {
          tags: ['forensics'],
          operationId: 'getReplayStaleness',
          summary: 'How old each context source was when a later decision or action used it',
          description: 'fresh: age ≤ max age; stale: up to 3× max age; critical: beyond; unknown: no max age declared or configured (STALENESS_MAX_AGE_SECONDS). The overall rating is the worst finding (unknown when there is none).',
          params: SessionParams,
          response: {
            200: Type.Object({
              session_id: Uuid,
              trace_id: Uuid,
              overall_staleness_rating: Type.Union([Type.Literal('fresh'), Type.Literal('stale'), Type.Literal('critical'), Type.Literal('unknown')]),
              findings: Type.Array(
                Type.Object({
                  source_id: Type.String(),
                  source_type: NullableString,
                  staleness: Type.String(),
                  age_seconds: Type.Union([Type.Number(), Type.Null()]),
                  max_age_seconds: Type.Union([Type.Number(), Type.Null()]),
                  used_by_log_id: Uuid,
                  context_log_id: Uuid,
                  via_log_ids: Type.Array(Uuid, { description: 'The artifacts (summaries, caches, tool results) the use reached the source through, nearest the use first; empty when used directly' }),
                  details: Type.String(),
                }),
              ),
            }),
            ...problemResponses(400, 401, 404, 429),
          },
        },
      },
      async (request) => {
        const { s, trace } = await load(principalOf(request).companyId, request.params.replay_session_id);
        return { session_id: s.session_id, trace_id: s.trace_id, ...ctx.forensics.staleness(trace) };
      },
    );

    app.get(
      '/forensics/replays/:replay_session_id/root-cause',
      {
        config: READ,
        schema: {
          tags: ['forensics'],
          operationId: 'getReplayRootCause',
          summary: 'The most likely root cause, with its evidence and the other findings ranked',
          description:
            'Outcome first: the trace’s outcome is read from its events; detected is true only when it is bad (rejected, failed, denied and abandoned, a denied action run anyway, context used past its max age, or tampered). Then the answer walks back from the outcome along the causal graph to the earliest anomaly on its ancestry, judged when the dependent decision was made. Types: STALE_CONTEXT, POLICY_DENIAL, POLICY_VIOLATION, TOOL_ERROR, HUMAN_REJECTION, AGENT_FAILURE, INTEGRITY_FAILURE, and NONE (detected false; confidence is then how sure the answer is that nothing went wrong). Rules and confidence: docs/forensics.md.',
          params: SessionParams,
          response: {
            200: Type.Object({
              session_id: Uuid,
              trace_id: Uuid,
              detected: Type.Boolean(),
              root_cause_type: Type.String(),
              description: Type.String(),
              confidence: Type.Number(),
              remediation: Type.String(),
              evidence: Type.Array(Uuid, { description: 'The path from the cause to the outcome, in order' }),
              evidence_path: Type.Array(PathStep, { description: 'The same path, each step with its role' }),
              outcome: Outcome,
              candidates: Type.Array(Candidate, { description: 'Other causes on the outcome’s ancestry, ranked' }),
              findings: Type.Array(Finding, { description: 'Anomalies that did not cause the outcome (all of them on a good outcome): informational' }),
            }),
            ...problemResponses(400, 401, 404, 429),
          },
        },
      },
      async (request) => {
        const { s, trace } = await load(principalOf(request).companyId, request.params.replay_session_id);
        return { session_id: s.session_id, trace_id: s.trace_id, ...(await ctx.forensics.rootCause(s, trace)) };
      },
    );
  };
}
