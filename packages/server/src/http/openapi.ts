// The parts of the OpenAPI document that no single route schema holds: servers, tag
// descriptions, explicit `security` on every operation (empty for public ones), the recorded
// examples (openapi-examples.json, recorded from a real run of every operation by
// scripts/record-openapi-examples.ts), and the 3.1 `webhooks`
// section describing what the service POSTs to subscribed endpoints. Applied once to the
// document @fastify/swagger generates from the route schemas; `redocly lint` runs on the result
// in CI (redocly.yaml lists the rules and why any is relaxed).
import { EVENT_TYPES, type EventType } from '../kernel/events.js';
import RECORDED_EXAMPLES from './openapi-examples.json' with { type: 'json' };
import { PROBLEM_CODE_DESCRIPTION } from './problems.js';

type Doc = Record<string, unknown> & { paths?: Record<string, Record<string, Operation>>; components?: Record<string, unknown> };
interface Operation {
  operationId?: string;
  security?: unknown[];
  requestBody?: { content?: Record<string, { schema?: unknown; example?: unknown }> };
  responses?: Record<string, { content?: Record<string, { schema?: unknown; example?: unknown }> }>;
}

export const TAGS = [
  { name: 'auth', description: 'Users sign in for an access token; the company API key is created, listed and revoked here.' },
  { name: 'users', description: 'Users and roles (admin, reviewer, auditor), managed by admins; every change is a ledger entry under audit-ledger/admin.' },
  { name: 'api-keys', description: 'The company integration API key (alk_…), sent as X-API-Key or Authorization: Bearer.' },
  { name: 'logs', description: 'Append audit events (a 200 means committed), read them back with their hash, link and signature, verify one, prove its inclusion.' },
  { name: 'otlp', description: 'OpenTelemetry OTLP/HTTP ingestion: spans and log records become ledger entries (docs/integrations.md).' },
  { name: 'integrity', description: 'The verifiable log: chain status, signed checkpoints (C2SP), consistency proofs, full verification jobs, signing keys and their rotation.' },
  { name: 'tlog', description: 'The company log as a C2SP tlog-tiles log (checkpoint, Merkle tiles, entry bundles) for standard mirrors, witnesses and monitors, behind the company credentials or published (docs/transparency.md).' },
  { name: 'exports', description: 'Streaming exports (JSON Lines, CSV) and evidence bundles that verify offline.' },
  { name: 'forensics', description: 'Replays of a trace: timeline, causal graph, stale context and the root cause of its outcome.' },
  { name: 'hitl', description: 'Human review: a reviewer rejecting an agent decision, recorded in the ledger.' },
  { name: 'operations', description: 'Health, readiness, liveness and Prometheus metrics, for operators and orchestrators.' },
  { name: 'usage', description: 'Per-day usage of the company, per API key.' },
  { name: 'webhooks', description: 'Endpoints subscribed to the company events, their deliveries (Standard Webhooks signatures) and the event log.' },
  { name: 'streams', description: 'Log streams: the ledger sent as it grows to syslog, Splunk, Datadog, an HTTPS receiver or a directory, each batch carrying its checkpoint and proofs (docs/integrations.md).' },
  { name: 'compliance', description: 'Retention, legal holds and erasure: content is erased with the ledger still verifiable; every change is a ledger entry under audit-ledger/admin (docs/compliance.md).' },
];

/** Credentials that are not a user or an API key: declared here because the route checks them itself. */
const SPECIAL_SECURITY: Record<string, unknown[]> = {
  // Public unless METRICS_TOKEN is set: then a bearer token is required.
  getMetrics: [{}, { metricsToken: [] }],
  rotateSigningKey: [{ operatorToken: [] }],
};

export const EXTRA_SECURITY_SCHEMES = {
  metricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN, when the service sets one (else /metrics is public)' },
  operatorToken: { type: 'http', scheme: 'bearer', description: 'LEDGER_OPERATOR_TOKEN: operator actions on the whole service (key rotation)' },
} as const;

/** An event needs `data` or its other name `payload` (prepareEvent refuses neither; JSON Schema says it here). */
const DATA_OR_PAYLOAD = [{ required: ['data'] }, { required: ['payload'] }];

function requireDataOrPayload(doc: Doc): void {
  const json = (op: Operation | undefined) => op?.requestBody?.content?.['application/json']?.schema as Record<string, unknown> | undefined;
  const single = json(doc.paths?.['/api/v1/logs']?.post);
  if (single) single.anyOf = DATA_OR_PAYLOAD;
  const batch = json(doc.paths?.['/api/v1/logs/batch']?.post) as { properties?: { logs?: { items?: Record<string, unknown> } } } | undefined;
  if (batch?.properties?.logs?.items) batch.properties.logs.items.anyOf = DATA_OR_PAYLOAD;
}

/** What each event type's `data` holds, with a realistic example (webhook payloads). */
const WEBHOOK_EXAMPLES: Record<EventType, { summary: string; data: Record<string, unknown> }> = {
  'api_key.created': {
    summary: 'An API key was created',
    data: { key_id: '6f2d4c1a-8b3e-4f5a-9c7d-0e1f2a3b4c5d', name: 'trading-agents-prod', key_prefix: 'alk_tkPRc-ac', rate_limit_per_minute: 6000, created_by: '3c9e2b7a-1d4f-4e8a-b6c5-2f0a9d8e7c61' },
  },
  'api_key.revoked': {
    summary: 'An API key was revoked',
    data: { key_id: '6f2d4c1a-8b3e-4f5a-9c7d-0e1f2a3b4c5d', name: 'trading-agents-prod', key_prefix: 'alk_tkPRc-ac', revoked_by: '3c9e2b7a-1d4f-4e8a-b6c5-2f0a9d8e7c61' },
  },
  'integrity.violation_detected': {
    summary: 'A verification found entries that fail their checks',
    data: { source: 'full', job_id: '019ca945-0a00-7062-9cac-fb6422d6cf9a', violation_count: 1, count: 1, kinds: ['hash_mismatch'], violations: [{ seq: 4121, log_id: '019ca945-1b22-7a10-8c3d-4e5f60718293', kind: 'hash_mismatch', detail: 'stored hash 9f2c… but the fields hash to 41ab…' }] },
  },
  'integrity.verification_completed': {
    summary: 'A full verification finished',
    data: { job_id: '019ca945-0a00-7062-9cac-fb6422d6cf9a', chain_status: 'valid', tree_size: 18240, entries_checked: 18240, violation_count: 0, duration_ms: 412 },
  },
  'hitl.rejected': {
    summary: 'A reviewer rejected an agent decision',
    data: {
      id: '019ca945-2c40-7b21-9d4e-5f60718293a4',
      log_id: '019ca945-2c40-7b21-9d4e-5f60718293a4',
      reviewer: 'maria.gonzalez@acme.example',
      rejection_reason: 'Order placed on a market feed 74 s old; the desk limit is 30 s',
      decision_id: 'b733847c-96fb-441a-95e2-4e7c6bc412f1',
      trace_id: '3f4a4992-73ff-4fd6-a9a3-3600b9a432dc',
      created_at: '2026-03-01T12:00:00.000Z',
      submitted_by: { kind: 'user', id: '3c9e2b7a-1d4f-4e8a-b6c5-2f0a9d8e7c61' },
    },
  },
  'forensics.anomaly_detected': {
    summary: "A replay's root cause found a bad outcome",
    data: {
      session_id: '019ca945-0a00-7062-9cac-fb6422d6cf9a',
      trace_id: '3f4a4992-73ff-4fd6-a9a3-3600b9a432dc',
      root_cause_type: 'STALE_CONTEXT',
      confidence: 0.75,
      description: 'Decision b733847c-96fb-441a-95e2-4e7c6bc412f1 (seq 1) used market_feed "feed:NASDAQ:ACME" when it was 74 s old, 2.47× its max age of 30 s.',
      evidence: ['019ca945-0a00-705a-944e-653f194b0aee', '019ca945-0a00-7062-9cac-fb6422d6cf91'],
    },
  },
  'webhook_endpoint.disabled': {
    summary: 'An endpoint answered 410 Gone and was disabled',
    data: { endpoint_id: '5a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d', url: 'https://hooks.acme.example/audit-ledger', reason: 'the endpoint answered 410 Gone' },
  },
  'approval.requested': {
    summary: 'An agent asked for approval of an action (docs/governance.md)',
    data: { approval_id: '019ca945-0a00-7a11-8000-000000000001', action: 'refund.issue', risk: 'high', arguments_hash: '6d1f3c0c6d1c1b7a9e3b1f2a4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f', team: 'payments-review', expires_at: '2026-03-01T13:00:00.000Z', log_id: '019ca945-0a00-7a11-8000-0000000000a1' },
  },
  'approval.decided': {
    summary: 'An approval request was approved, rejected or expired',
    data: { approval_id: '019ca945-0a00-7a11-8000-000000000001', status: 'approved', decided_by: { kind: 'user', user_id: '019ca945-0a00-7000-8000-0000000000b1', email: 'reviewer@acme.example' }, reason: null, log_id: '019ca945-0a00-7a11-8000-0000000000a2' },
  },
  'approval.escalated': {
    summary: "A request was escalated, by a reviewer or because its team's SLA ran out",
    data: { approval_id: '019ca945-0a00-7a11-8000-000000000001', to: 'payments-leads', reason: 'SLA of 30 min exceeded', sla_breached: true, log_id: '019ca945-0a00-7a11-8000-0000000000a3' },
  },
  'approval.violated': {
    summary: 'An execution named an approval that does not cover it (changed arguments, not approved, expired, used up or unknown)',
    data: { approval_id: '019ca945-0a00-7a11-8000-000000000001', execution_log_id: '019ca945-0a00-7a11-8000-0000000000a4', result: 'mismatch', detail: 'the arguments hash to 0c1e… but the approval covers 6d1f…', check_log_id: '019ca945-0a00-7a11-8000-0000000000a5' },
  },
  'policy.version_created': {
    summary: 'A new version of a policy was registered',
    data: { policy_id: 'refunds', version: 3, content_hash: '9b2c0f4e5d6a7b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e', log_id: '019ca945-0a00-7a11-8000-0000000000a6' },
  },
  'incident.opened': {
    summary: 'An incident was opened',
    data: { incident_id: '019ca945-0a00-7a11-8000-0000000000c1', title: 'Refund issued with changed amount', severity: 'high', log_id: '019ca945-0a00-7a11-8000-0000000000a7' },
  },
  'incident.updated': {
    summary: "An incident's status or assignee changed, or it was commented",
    data: { incident_id: '019ca945-0a00-7a11-8000-0000000000c1', change: 'status', status: 'investigating', log_id: '019ca945-0a00-7a11-8000-0000000000a8' },
  },
  'log_stream.failed': {
    summary: 'A log stream delivered nothing for its whole retry window and stopped; resume it once the destination is fixed',
    data: { stream_id: '019ca945-0a00-7a11-8000-0000000000d1', name: 'SOC syslog', destination_type: 'syslog', cursor_seq: 18234, failing_since: '2026-03-01T12:00:00.000Z', attempts: 31, last_error: 'connect ECONNREFUSED 10.0.4.7:6514' },
  },
};

function webhooks(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const type of EVENT_TYPES) {
    const ex = WEBHOOK_EXAMPLES[type];
    out[type] = {
      post: {
        operationId: `webhook_${type.replace(/\./g, '_')}`,
        summary: ex.summary,
        description: `Delivered to endpoints subscribed to \`${type}\`, signed per Standard Webhooks (headers webhook-id, webhook-timestamp, webhook-signature). Answer 2xx to acknowledge; 5xx, 429 and timeouts are retried, 410 disables the endpoint.`,
        tags: ['webhooks'],
        security: [],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['type', 'timestamp', 'data'],
                properties: { type: { type: 'string', const: type }, timestamp: { type: 'string', format: 'date-time' }, data: { type: 'object', additionalProperties: true } },
              },
              example: { type, timestamp: '2026-03-01T12:00:05.000Z', data: ex.data },
            },
          },
        },
        responses: { '200': { description: 'Acknowledged (any 2xx)' }, '410': { description: 'Gone: the service disables the endpoint' } },
      },
    };
  }
  return out;
}

/** Each operation's request body and answer, by operationId. */
const OPERATION_EXAMPLES: Record<string, { status: number; request?: unknown; response?: unknown }> = RECORDED_EXAMPLES;

/** How a route's problem responses (problemResponses: ProblemSchema) come out of @fastify/swagger: the schema inlined. */
const isProblemSchema = (schema: unknown) => (schema as { properties?: { code?: { description?: string } } } | undefined)?.properties?.code?.description === PROBLEM_CODE_DESCRIPTION;

/**
 * Every problem response as what the service sends, `application/problem+json`, referring to one
 * `Problem` schema in components: @fastify/swagger inlines the schema (with its enum of every
 * code) into each of the routes' 268 problem responses, under each content type the route
 * produces, which made the document 1.8 MB and the SDK's types 0.8 MB.
 */
function shareProblemSchema(doc: Doc): void {
  let problem: unknown;
  for (const item of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(item)) {
      for (const answer of Object.values(op.responses ?? {})) {
        const schemas = Object.values(answer.content ?? {}).map((m) => m.schema);
        if (schemas.length === 0 || !schemas.every(isProblemSchema)) continue;
        problem ??= schemas[0];
        answer.content = { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } };
      }
    }
  }
  if (problem !== undefined) doc.components = { ...doc.components, schemas: { ...(doc.components?.schemas as object | undefined), Problem: problem } };
}

/** The keyword that names a schema for components (`Type.Object(…, { [COMPONENT]: 'Approval' })`). */
export const COMPONENT = 'x-component';

/**
 * Each schema a route marks with `x-component: Name` becomes `#/components/schemas/Name`, referred
 * to wherever @fastify/swagger inlined it: the governance shapes (an approval, an incident…) appear
 * in dozens of answers, and inlined they doubled the document and the SDK's types.
 */
function shareNamedSchemas(doc: Doc): void {
  const named: Record<string, unknown> = {};
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (node === null || typeof node !== 'object') return node;
    const o = node as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(o)) if (k !== COMPONENT) out[k] = walk(v);
    const name = o[COMPONENT];
    if (typeof name !== 'string') return out;
    named[name] ??= out;
    return { $ref: `#/components/schemas/${name}` };
  };
  doc.paths = walk(doc.paths) as Doc['paths'];
  if (Object.keys(named).length > 0) doc.components = { ...doc.components, schemas: { ...(doc.components?.schemas as object | undefined), ...named } };
}

/**
 * A wildcard route (`/tlog/tile/*`: a tile path has a variable number of segments) as a named
 * path parameter, `{tile_path}`, which OpenAPI can describe (a client sends it with its slashes).
 */
function nameWildcards(doc: Doc): void {
  if (!doc.paths) return;
  const paths: NonNullable<Doc['paths']> = {};
  for (const [p, item] of Object.entries(doc.paths)) {
    if (!p.endsWith('/{*}')) {
      paths[p] = item;
      continue;
    }
    for (const op of Object.values(item) as Array<Operation & { parameters?: Array<{ in: string; name: string; allowReserved?: boolean }> }>)
      for (const param of op.parameters ?? [])
        if (param.in === 'path' && param.name === '*') {
          param.name = 'tile_path';
          param.allowReserved = true;
        }
    paths[`${p.slice(0, -'{*}'.length)}{tile_path}`] = item;
  }
  doc.paths = paths;
}

/** Completes the generated document in place (and returns it). */
export function completeDocument(doc: Doc): Doc {
  nameWildcards(doc);
  shareProblemSchema(doc);
  shareNamedSchemas(doc);
  doc.servers = [{ url: '/', description: 'The service that serves this document (paths start with /api/v1)' }];
  doc.tags = TAGS;
  for (const item of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(item)) {
      const id = op.operationId ?? '';
      op.security = SPECIAL_SECURITY[id] ?? op.security ?? [];
      const ex = OPERATION_EXAMPLES[id];
      if (!ex) continue;
      if (ex.request !== undefined) for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) if (type !== 'application/x-protobuf') media.example = ex.request;
      const answer = op.responses?.[String(ex.status)];
      if (ex.response !== undefined && answer?.content) for (const [type, media] of Object.entries(answer.content)) if (type !== 'application/x-protobuf') media.example = ex.response;
    }
  }
  requireDataOrPayload(doc);
  doc.webhooks = webhooks();
  return doc;
}
