// How an OpenTelemetry span or log record becomes a ledger event (docs/integrations.md,
// "OpenTelemetry"). Pure: the decoded request in, one event (or the reason it is refused) per
// item out, in the order they will be appended.
//
// - Envelope: OTel's 16-byte trace id becomes `trace_id` as the same 16 bytes written as a UUID
//   (8-4-4-4-12 hex); the 8-byte span and parent span ids stay hex in `span_id` /
//   `parent_span_id`, and the span id is also the event's `event_id`, so later events can name a
//   span in `data.inputs`. A log record belongs to the span it names: that span id becomes its
//   `parent_span_id`. `source` is the resource's `service.name`; `agent_id`, `session_id` (when a
//   UUID) and `workflow_id` are what the span's convention names (conventions.ts: `gen_ai.agent.*`,
//   `agent.name`, `ai.telemetry.functionId`, `session.id`, …), else its nearest ancestor's among
//   the spans of the same request (an agent names itself on its root span only; a span exported
//   before its ancestors, in an earlier request, inherits nothing).
// - Time: a span is recorded when it ends (OTel exports it then), so `timestamp` is its end time,
//   to the millisecond; exact nanosecond times are kept in `data.otel`. Spans of one request are
//   appended in order of end time (a parent after the children it waited for).
// - Event type: the attribute `audit_ledger.event_type` if set; else what the span is by its
//   convention (conventions.ts: GenAI, OpenInference, OpenLLMetry, the Vercel AI SDK's ai.*): a
//   tool call → tool.called, or tool.failed when the span's status is ERROR; a model call →
//   llm.call; an agent run → agent.completed, or agent.failed on ERROR; a retrieval →
//   context.retrieved; a guardrail → policy.evaluated; an evaluation → evaluation.recorded; other
//   GenAI operations → gen_ai.<operation>; a chain or workflow → chain.completed or chain.failed,
//   or run.completed / run.failed when it has no parent (it is the run); a span no convention
//   claims → otel.span. A log record: `audit_ledger.event_type`, else evaluation.recorded for
//   GenAI's gen_ai.evaluation.result event (evaluation, score, label, explanation), else its
//   event name, else otel.log.
// - Data: the vocabulary fields the forensics read (tool, tool_call_id, arguments, result, error,
//   model, provider, token counts, finish_reasons, tool_calls the model asked for, agent,
//   source_id, documents, as_of, status, convention), then every attribute
//   `audit_ledger.data.<field>` as `<field>`, and the whole OTel item under `data.otel` (name,
//   kind, times, status, attributes, events, links), so nothing that was sent is lost.
// - Resource and scope: stored once, not copied into every item. Each (resource, scope) pair is an
//   `otel.resource` entry whose data is {resource, scope, resource_schema_url?}, with the
//   idempotency key `otlp:resource:<ref>`, so it is appended the first time it is seen and never
//   again; each item names it in `data.otel.resource_ref`: ref = lowercase hex SHA-256 of the RFC
//   8785 JSON of that data. An item's data is hashed (committed to), so the reference is too.
//
// An item is refused alone (OTLP partial success) when its ids are not the sizes OTLP defines,
// an attribute key repeats or is "__proto__", or a string is not storable text.
import { canonicalJson, type Json, type JsonObject } from '@audit-ledger/core';
import { createHash } from 'node:crypto';
import { eventTypeOf, guardrailVerdict, readSpan, type SpanReading } from './conventions.js';
import type { AnyValue, KeyValue, LogRecord, ResourceGroup, Scope, Span } from './decode.js';

export class ItemError extends Error {}

/** One OTLP item as the ledger event it becomes: the fields of POST /logs. */
export type OtlpEvent = Record<string, Json> & { event_type: string; data: JsonObject };

/** An item's event, and the ref of the otel.resource entry it names; or why it is refused. */
export type Mapped = { ok: true; event: OtlpEvent; sortKey: bigint; resourceRef: string } | { ok: false; reason: string };

/** A request mapped: its items in order, and the otel.resource entries they name, by ref. */
export interface MappedRequest {
  items: Mapped[];
  resources: Map<string, OtlpEvent>;
}

/** The event type of the entry that stores a resource and scope once. */
export const RESOURCE_EVENT_TYPE = 'otel.resource';

const SPAN_KIND = ['UNSPECIFIED', 'INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'];
const STATUS = ['UNSET', 'OK', 'ERROR'];
const STATUS_ERROR = 2;
const DATA_PREFIX = 'audit_ledger.data.';

function toJson(v: AnyValue, depth = 0): Json {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'bigint') return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
  if ('array' in v) return v.array.map((x) => toJson(x, depth + 1));
  return attrs(v.kvlist, depth + 1);
}

/** Key-value pairs as an object. A repeated key would lose a value, so it refuses the item. */
function attrs(kvs: KeyValue[], depth = 0): JsonObject {
  const out: JsonObject = {};
  for (const { key, value } of kvs) {
    if (key === '__proto__') throw new ItemError('the attribute key "__proto__" is refused');
    if (Object.hasOwn(out, key)) throw new ItemError(`the attribute "${key}" appears twice`);
    out[key] = toJson(value, depth);
  }
  return out;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Every string and key must be storable as sent: well-formed Unicode without U+0000 (as for JSON bodies). */
function checkText(v: Json, at: string): void {
  if (typeof v === 'string') {
    if (LONE_SURROGATE.test(v) || v.includes('\u0000')) throw new ItemError(`${at} holds a string that is not well-formed Unicode or contains U+0000`);
  } else if (Array.isArray(v)) v.forEach((x, i) => checkText(x, `${at}[${i}]`));
  else if (v !== null && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) {
      checkText(k, at);
      checkText(x, `${at}.${k}`);
    }
}

const nanosText = (ns: bigint) => ns.toString();
const isoOfNanos = (ns: bigint) => new Date(Number(ns / 1_000_000n)).toISOString();

function traceUuid(hex: string, what: string): string {
  if (hex.length !== 32 || /^0+$/.test(hex)) throw new ItemError(`${what} must be 16 bytes, not all zero`);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function spanHex(hex: string, what: string, required: boolean): string | null {
  if (hex === '' && !required) return null;
  if (hex.length !== 16 || /^0+$/.test(hex)) throw new ItemError(`${what} must be 8 bytes, not all zero`);
  return hex;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const str = (v: Json | undefined): string | null => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null);

/** The fields the forensics read, from GenAI semantic-convention attributes. */
function vocabulary(a: JsonObject): JsonObject {
  const out: JsonObject = {};
  const set = (k: string, v: Json | undefined) => {
    if (v !== undefined && v !== null && v !== '') out[k] = v;
  };
  set('operation', a['gen_ai.operation.name']);
  set('tool', a['gen_ai.tool.name']);
  set('tool_call_id', a['gen_ai.tool.call.id']);
  set('agent', a['gen_ai.agent.name']);
  set('model', a['gen_ai.response.model'] ?? a['gen_ai.request.model']);
  set('provider', a['gen_ai.provider.name'] ?? a['gen_ai.system']);
  set('prompt_tokens', a['gen_ai.usage.input_tokens']);
  set('completion_tokens', a['gen_ai.usage.output_tokens']);
  set('source_id', a['gen_ai.data_source.id']);
  set('error', a['error.type']);
  return out;
}

/** `audit_ledger.data.<field>` attributes, as data fields. */
function declared(a: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(a)) if (k.startsWith(DATA_PREFIX) && k.length > DATA_PREFIX.length) out[k.slice(DATA_PREFIX.length)] = v;
  return out;
}

/** Who a span belongs to: its own agent, session and workflow, else its nearest ancestor's (in the request). */
export interface Belonging {
  agent: string | null;
  session: string | null;
  workflow: string | null;
}

function envelope(resource: JsonObject, a: JsonObject, own?: Belonging): Record<string, Json> {
  const env: Record<string, Json> = {};
  const service = str(resource['service.name']);
  env.source = service ?? 'otel';
  const agent = own?.agent ?? str(a['gen_ai.agent.id']) ?? str(a['gen_ai.agent.name']) ?? str(resource['gen_ai.agent.name']);
  if (agent !== null) env.agent_id = agent;
  const session = own?.session ?? str(a['gen_ai.conversation.id']) ?? str(a['session.id']);
  if (session !== null && UUID.test(session)) env.session_id = session.toLowerCase();
  if (own?.workflow) env.workflow_id = own.workflow;
  for (const f of ['parent_event_id', 'root_event_id', 'causality_type', 'workflow_id'] as const) {
    const v = str(a[`audit_ledger.${f}`]);
    if (v !== null) env[f] = v;
  }
  return env;
}

const scopeJson = (s: Scope, schemaUrl: string): JsonObject => ({ name: s.name, version: s.version, attributes: attrs(s.attributes), ...(schemaUrl ? { schema_url: schemaUrl } : {}) });

/**
 * The idempotency key of an item: the item as sent (its trace and span ids, and data.otel, which
 * holds everything else it carried), so an exporter's retry appends nothing twice, whatever the
 * mapping reads out of it or inherits from the request around it (a retry in another batch, or
 * after an upgrade that reads more, is the same item).
 */
function keyOf(event: OtlpEvent): string {
  const item = { trace_id: event.trace_id ?? null, span_id: event.span_id ?? null, parent_span_id: event.parent_span_id ?? null, source: event.source ?? null, otel: event.data.otel ?? null };
  return `otlp:${createHash('sha256').update(canonicalJson(item as JsonObject)).digest('hex')}`;
}

function finish(event: OtlpEvent): OtlpEvent {
  checkText(event, 'the item');
  event.idempotency_key = keyOf(event);
  return event;
}

/** A span's attributes and what they say, read once per request (the inheritance pass reads them first). */
const readings = new WeakMap<Span, { a: JsonObject; reading: SpanReading }>();
function read(span: Span): { a: JsonObject; reading: SpanReading } {
  let r = readings.get(span);
  if (!r) {
    const a = attrs(span.attributes);
    r = { a, reading: readSpan(span.name, a) };
    readings.set(span, r);
  }
  return r;
}

/**
 * Each span's agent, session and workflow: its own, else the nearest ancestor's that names one,
 * among the spans of this request (by trace and span id; a refused span names nothing).
 */
function inheritance(groups: Array<ResourceGroup<Span>>): (span: Span) => Belonging {
  const byId = new Map<string, { parent: string; own: Belonging }>();
  for (const g of groups)
    for (const s of g.scopes)
      for (const span of s.items) {
        try {
          const { reading } = read(span);
          byId.set(`${span.traceId}/${span.spanId}`, { parent: span.parentSpanId, own: { agent: reading.agent, session: reading.session, workflow: reading.workflow } });
        } catch (err) {
          if (!(err instanceof ItemError)) throw err;
        }
      }
  return (span) => {
    const out: Belonging = { agent: null, session: null, workflow: null };
    const seen = new Set<string>();
    for (let id = span.spanId; id !== '' && !seen.has(id) && seen.size < 256; ) {
      seen.add(id);
      const at = byId.get(`${span.traceId}/${id}`);
      if (!at) break;
      out.agent ??= at.own.agent;
      out.session ??= at.own.session;
      out.workflow ??= at.own.workflow;
      id = at.parent;
    }
    return out;
  };
}

function mapSpan(span: Span, resource: JsonObject, resourceRef: string, belonging: (span: Span) => Belonging): OtlpEvent {
  const trace_id = traceUuid(span.traceId, 'traceId');
  const span_id = spanHex(span.spanId, 'spanId', true) as string;
  const parent_span_id = spanHex(span.parentSpanId, 'parentSpanId', false);
  const { a, reading } = read(span);
  const failed = span.status.code === STATUS_ERROR;
  // A chain, workflow or task with no parent is the run itself (a LangChain runnable, a Traceloop
  // workflow): run.completed or run.failed, which the forensics read as the run's outcome.
  const event_type = str(a['audit_ledger.event_type']) ?? (reading.kind === 'chain' && parent_span_id === null ? (failed ? 'run.failed' : 'run.completed') : eventTypeOf(reading, failed));
  const vocab: JsonObject = { ...reading.fields, ...(reading.convention !== null ? { convention: reading.convention } : {}) };
  if (reading.kind === 'guardrail') vocab.verdict = guardrailVerdict(reading, failed);
  // The error's first line (some instrumentations put the stack trace in the status message; the
  // whole message stays in data.otel.status).
  if (failed && span.status.message.trim() !== '') vocab.error = span.status.message.trim().split('\n')[0] as string;
  else if (failed && vocab.error === undefined) vocab.error = (str(a['exception.message']) ?? span.events.map((e) => str(attrs(e.attributes)['exception.message'])).find((m) => m !== null)) ?? 'error';
  if (event_type === 'agent.completed' || event_type === 'agent.failed') vocab.status = failed ? 'failed' : 'succeeded';
  const end = span.endTimeUnixNano !== 0n ? span.endTimeUnixNano : span.startTimeUnixNano;
  const otel: JsonObject = {
    signal: 'span',
    name: span.name,
    kind: SPAN_KIND[span.kind] ?? String(span.kind),
    start_time_unix_nano: nanosText(span.startTimeUnixNano),
    end_time_unix_nano: nanosText(span.endTimeUnixNano),
    duration_ms: Number(span.endTimeUnixNano - span.startTimeUnixNano) / 1e6,
    status: { code: STATUS[span.status.code] ?? String(span.status.code), ...(span.status.message ? { message: span.status.message } : {}) },
    attributes: a,
    events: span.events.map((e) => ({ name: e.name, time_unix_nano: nanosText(e.timeUnixNano), attributes: attrs(e.attributes) })),
    links: span.links.map((l) => ({ trace_id: l.traceId, span_id: l.spanId, ...(l.traceState ? { trace_state: l.traceState } : {}), attributes: attrs(l.attributes) })),
    resource_ref: resourceRef,
    ...(span.traceState ? { trace_state: span.traceState } : {}),
    ...(span.flags ? { flags: span.flags } : {}),
    ...(span.droppedAttributesCount || span.droppedEventsCount || span.droppedLinksCount
      ? { dropped: { attributes: span.droppedAttributesCount, events: span.droppedEventsCount, links: span.droppedLinksCount } }
      : {}),
  };
  return finish({
    event_type,
    ...envelope(resource, a, belonging(span)),
    trace_id,
    span_id,
    // A root span is the run's first event: naming itself as the root, it is caused by nothing
    // (rather than by the event before it, which for a span recorded at its end is its own child).
    ...(parent_span_id !== null ? { parent_span_id } : { root_event_id: span_id }),
    event_id: span_id,
    ...(end !== 0n ? { timestamp: isoOfNanos(end) } : {}),
    data: { ...vocab, ...declared(a), otel },
  });
}

function mapLog(rec: LogRecord, resource: JsonObject, resourceRef: string): OtlpEvent {
  const a = attrs(rec.attributes);
  const trace_id = rec.traceId === '' ? null : traceUuid(rec.traceId, 'traceId');
  const parent_span_id = spanHex(rec.spanId, 'spanId', false);
  const name = rec.eventName !== '' ? rec.eventName : str(a['event.name']);
  // The GenAI evaluation event: a score given to the span it belongs to.
  const evaluation = name === 'gen_ai.evaluation.result';
  const event_type = str(a['audit_ledger.event_type']) ?? (evaluation ? 'evaluation.recorded' : (name ?? 'otel.log'));
  const time = rec.timeUnixNano !== 0n ? rec.timeUnixNano : rec.observedTimeUnixNano;
  const scored: JsonObject = {};
  if (evaluation)
    for (const [k, field] of [['gen_ai.evaluation.name', 'evaluation'], ['gen_ai.evaluation.score.value', 'score'], ['gen_ai.evaluation.score.label', 'label'], ['gen_ai.evaluation.explanation', 'explanation']] as const)
      if (a[k] !== undefined && a[k] !== null) scored[field] = a[k];
  const otel: JsonObject = {
    signal: 'log',
    time_unix_nano: nanosText(rec.timeUnixNano),
    observed_time_unix_nano: nanosText(rec.observedTimeUnixNano),
    severity_number: rec.severityNumber,
    ...(rec.severityText ? { severity_text: rec.severityText } : {}),
    body: toJson(rec.body),
    attributes: a,
    ...(rec.eventName ? { event_name: rec.eventName } : {}),
    resource_ref: resourceRef,
    ...(rec.flags ? { flags: rec.flags } : {}),
    ...(rec.droppedAttributesCount ? { dropped: { attributes: rec.droppedAttributesCount } } : {}),
  };
  return finish({
    event_type,
    ...envelope(resource, a),
    ...(trace_id !== null ? { trace_id } : {}),
    ...(parent_span_id !== null ? { parent_span_id } : {}),
    ...(time !== 0n ? { timestamp: isoOfNanos(time) } : {}),
    data: { ...vocabulary(a), ...scored, ...declared(a), otel },
  });
}

/** The otel.resource entry of a (resource, scope) pair, and its ref (module comment). */
function resourceEntry(resource: JsonObject, resourceSchema: string, scope: JsonObject): { ref: string; event: OtlpEvent; bytes: number } {
  const data: JsonObject = { resource, scope, ...(resourceSchema ? { resource_schema_url: resourceSchema } : {}) };
  const text = canonicalJson(data);
  checkText(data, 'the resource and scope');
  const ref = createHash('sha256').update(text).digest('hex');
  const source = str(resource['service.name']) ?? 'otel';
  return { ref, bytes: Buffer.byteLength(text), event: { event_type: RESOURCE_EVENT_TYPE, source, idempotency_key: `otlp:resource:${ref}`, data } };
}

function mapAll<T>(groups: Array<ResourceGroup<T>>, one: (item: T, resource: JsonObject, resourceRef: string) => OtlpEvent, time: (item: T) => bigint, maxEntryBytes: number): MappedRequest {
  const items: Mapped[] = [];
  const resources = new Map<string, OtlpEvent>();
  for (const g of groups) {
    let resource: JsonObject | ItemError;
    try {
      resource = attrs(g.resource);
    } catch (err) {
      resource = err as ItemError;
    }
    for (const s of g.scopes) {
      // The pair is one entry, built once per scope, whatever the number of items: one that
      // passes the cap refuses every item here, once (600 copies of a 300 KB resource once cost
      // 6 s of CPU to refuse).
      let entry: ReturnType<typeof resourceEntry> | ItemError;
      try {
        if (resource instanceof ItemError) throw new ItemError(`its resource: ${resource.message}`);
        entry = resourceEntry(resource, g.schemaUrl, scopeJson(s.scope, s.schemaUrl));
        if (entry.bytes > maxEntryBytes) throw new ItemError(`its resource and scope are ${entry.bytes} bytes (stored once, as an ${RESOURCE_EVENT_TYPE} entry); MAX_ENTRY_BYTES allows ${maxEntryBytes}`);
      } catch (err) {
        if (!(err instanceof ItemError)) throw err;
        entry = err;
      }
      for (const item of s.items) {
        try {
          if (entry instanceof ItemError) throw entry;
          items.push({ ok: true, event: one(item, resource as JsonObject, entry.ref), sortKey: time(item), resourceRef: entry.ref });
          resources.set(entry.ref, entry.event);
        } catch (err) {
          if (!(err instanceof ItemError)) throw err;
          items.push({ ok: false, reason: err.message });
        }
      }
    }
  }
  return { items, resources };
}

/** Spans as events, refused ones with their reason; the accepted ones in order of end time (stable). */
export function mapSpans(groups: Array<ResourceGroup<Span>>, maxEntryBytes = Number.POSITIVE_INFINITY): MappedRequest {
  const belonging = inheritance(groups);
  return mapAll(groups, (span, resource, ref) => mapSpan(span, resource, ref, belonging), (s) => (s.endTimeUnixNano !== 0n ? s.endTimeUnixNano : s.startTimeUnixNano), maxEntryBytes);
}

/** Log records as events, refused ones with their reason; the accepted ones in order of time (stable). */
export function mapLogs(groups: Array<ResourceGroup<LogRecord>>, maxEntryBytes = Number.POSITIVE_INFINITY): MappedRequest {
  return mapAll(groups, mapLog, (r) => (r.timeUnixNano !== 0n ? r.timeUnixNano : r.observedTimeUnixNano), maxEntryBytes);
}
