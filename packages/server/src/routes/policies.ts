// The policy register and the decision register over HTTP (docs/governance.md): schemas and thin
// handlers over governance/policies.ts and governance/decisions.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { principalOf } from '../auth/authenticate.js';
import { ADMIN, READ } from '../auth/rules.js';
import { actorOf } from '../auth/authenticate.js';
import { encodeCursor, seqCursor } from '../http/cursor.js';
import { appendFailure } from '../http/ledger-problems.js';
import { problemResponses } from '../http/problems.js';
import { ActorSchema, component, NullableString } from '../kernel/shapes.js';
import { decisionSummary } from '../governance/decisions.js';
import type { Services } from '../services.js';
import { ApprovalSchema } from '../kernel/governance-shapes.js';

export type PolicyServices = Pick<Services, 'policies' | 'decisions'>;

const PolicyId = Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9][A-Za-z0-9._:/-]*$', description: 'Letters, digits and . _ : / -' });
const VersionSchema = Type.Object({
  policy_id: Type.String(),
  version: Type.Integer({ description: 'From 1, per policy, without gaps' }),
  format: Type.String(),
  content_hash: Type.String({ description: 'Lowercase hex SHA-256 of the content (UTF-8)' }),
  description: NullableString,
  created_at: Type.String({ format: 'date-time' }),
  created_by: ActorSchema,
  log_id: Type.String({ description: 'The policy.version_created entry, which holds the text too' }),
  content: Type.Optional(Type.String({ description: 'The exact text (in GET of one version)' })),
}, component('PolicyVersion'));

const DecisionSummarySchema = Type.Object({
  decision_id: Type.String(),
  log_id: Type.String(),
  seq: Type.Integer(),
  created_at: Type.String({ format: 'date-time' }),
  trace_id: NullableString,
  agent_id: NullableString,
  action: NullableString,
  outcome: NullableString,
  model: NullableString,
  model_version: NullableString,
  confidence: Type.Union([Type.Number(), Type.Null()]),
  erased: Type.Boolean(),
}, component('DecisionSummary'));
const PolicyCheckSchema = Type.Object({ result: Type.String(), policy_id: Type.String(), version: Type.Union([Type.Integer(), Type.Null()]) });
const DecisionSchema = Type.Object({
  ...DecisionSummarySchema.properties,
    provider: NullableString,
    prompt: Type.Object({ template_id: NullableString, template_version: NullableString, hash: NullableString }),
    inputs: Type.Object({ hash: NullableString, documents: Type.Array(Type.String()) }),
    tools: Type.Array(Type.String()),
    rationale: NullableString,
    policy_evaluations: Type.Array(Type.Object({ log_id: Type.String(), policy_id: NullableString, policy_version: Type.Union([Type.Integer(), Type.Null()]), verdict: NullableString, reason_codes: Type.Array(Type.String()), check: Type.Union([PolicyCheckSchema, Type.Null()]) })),
    approvals: Type.Array(ApprovalSchema),
    reviews: Type.Array(Type.Object({ log_id: Type.String(), event_type: Type.String(), reviewer: NullableString, reason: NullableString, created_at: Type.String() })),
    links: Type.Object({ entry: Type.String(), verification: Type.String(), proof: Type.String(), evidence_bundle: NullableString, timeline: NullableString }),
}, component('Decision'));

export function policyRoutes(ctx: PolicyServices): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.put(
      '/policies/:policy_id',
      {
        config: ADMIN,
        schema: {
          tags: ['policies'],
          operationId: 'putPolicy',
          summary: "Register a new immutable version of a policy's text",
          description:
            'Appends `policy.version_created` with the exact text and its SHA-256 (201 means committed). The same text as the latest version makes no new version (200, the latest). The text is kept exactly as sent: `content` is a string (send JSON policies as their text).',
          params: Type.Object({ policy_id: PolicyId }),
          body: Type.Object(
            {
              content: Type.String({ minLength: 1, maxLength: 262_144, description: 'The policy exactly as enforced: a Rego or Cedar document, JSON, a rule list…' }),
              format: Type.Optional(Type.String({ minLength: 1, maxLength: 50, pattern: '^[a-z0-9.+-]+$', description: 'rego, cedar, json, yaml, text… (default text)' })),
              description: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
            },
            { additionalProperties: false },
          ),
          response: { 200: VersionSchema, 201: VersionSchema, ...problemResponses(400, 401, 403, 413, 429, 503) },
        },
      },
      async (request, reply) => {
        const p = principalOf(request);
        const r = await ctx.policies.put(p.companyId, actorOf(p), request.params.policy_id, request.body).catch((err: unknown) => appendFailure(err, () => '/body'));
        return reply.code(r.created ? 201 : 200).send(r.version);
      },
    );

    app.get(
      '/policies',
      {
        config: READ,
        schema: { tags: ['policies'], operationId: 'listPolicies', description: 'Each policy of the register with its latest version number.', summary: 'Registered policies and their latest version', response: { 200: Type.Object({ items: Type.Array(Type.Object({ policy_id: Type.String(), latest_version: Type.Integer() })) }), ...problemResponses(401, 429) } },
      },
      async (request) => ({ items: await ctx.policies.list(principalOf(request).companyId) }),
    );

    app.get(
      '/policies/:policy_id/versions',
      {
        config: READ,
        schema: { tags: ['policies'], operationId: 'listPolicyVersions', description: 'Every version of a policy, newest first, with its content hash and the entry that recorded it.', summary: "A policy's versions, newest first (without their text)", params: Type.Object({ policy_id: PolicyId }), response: { 200: Type.Object({ items: Type.Array(VersionSchema) }), ...problemResponses(401, 404, 429) } },
      },
      async (request) => ({ items: await ctx.policies.versions(principalOf(request).companyId, request.params.policy_id) }),
    );

    app.get(
      '/policies/:policy_id/versions/:version',
      {
        config: READ,
        schema: {
          tags: ['policies'],
          operationId: 'getPolicyVersion', description: "The exact text that version recorded: its SHA-256 is the version's content_hash, and the policy.version_created entry holds the same text.",
          summary: 'One version, with its exact text',
          params: Type.Object({ policy_id: PolicyId, version: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) }),
          response: { 200: VersionSchema, ...problemResponses(400, 401, 404, 429) },
        },
      },
      async (request) => (await ctx.policies.version(principalOf(request).companyId, request.params.policy_id, request.params.version)),
    );

    app.get(
      '/decisions',
      {
        config: READ,
        schema: {
          tags: ['decisions'],
          operationId: 'listDecisions', description: 'decision.made entries with their typed fields (model, outcome, confidence…), newest first; filter by trace_id or agent_id.',
          summary: 'The decision register: decision.made entries, newest first',
          querystring: Type.Object(
            { trace_id: Type.Optional(Type.String({ format: 'uuid' })), agent_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }), cursor: Type.Optional(Type.String({ maxLength: 200 })) },
            { additionalProperties: false },
          ),
          response: { 200: Type.Object({ items: Type.Array(DecisionSummarySchema), next_cursor: Type.Union([Type.String(), Type.Null()]) }), ...problemResponses(400, 401, 429) },
        },
      },
      async (request) => {
        const q = request.query;
        const rows = await ctx.decisions.list(principalOf(request).companyId, { trace_id: q.trace_id, agent_id: q.agent_id, afterSeq: seqCursor(q.cursor), limit: q.limit });
        const last = rows.at(-1);
        return { items: rows.map(decisionSummary), next_cursor: rows.length === q.limit && last ? encodeCursor({ seq: last.seq }) : null };
      },
    );

    app.get(
      '/decisions/:decision_id',
      {
        config: READ,
        schema: {
          tags: ['decisions'],
          operationId: 'getDecision', description: 'The decision.made entry whose data.decision_id is this, read into typed fields (docs/event-types.md), with the policy evaluations and approvals that name the decision and the links an auditor follows.',
          summary: 'One decision with its typed fields, policy evaluations, approvals and reviews, and links to its entry, verification, timeline and evidence bundle',
          params: Type.Object({ decision_id: Type.String({ minLength: 1, maxLength: 200 }) }),
          response: { 200: DecisionSchema, ...problemResponses(401, 404, 429) },
        },
      },
      async (request) => (await ctx.decisions.get(principalOf(request).companyId, request.params.decision_id)),
    );
  };
}
