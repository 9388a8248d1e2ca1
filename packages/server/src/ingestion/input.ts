// What a client may send for one event, and how it becomes the fields the ledger hashes.
import Type from 'typebox';
import { canonicalJson, ENVELOPE_FIELDS, type EnvelopeField, type JsonObject, skeletonLinks } from '@audit-ledger/core';
import type { FieldError } from '../kernel/domain-error.js';
import { Uuid } from '../kernel/shapes.js';
import type { PreparedEvent } from '../ledger/appender/types.js';
import { RESERVED_SOURCE_PREFIX } from '../store/columns.js';

/** Whether a client-sent source claims the service's reserved prefix, in any letter case (`AUDIT-LEDGER/admin` too). */
export const isReservedSource = (source: unknown): boolean => typeof source === 'string' && source.toLowerCase().startsWith(RESERVED_SOURCE_PREFIX);

const MAX_DEPTH = 64;

const text = (max: number, description?: string) => Type.Union([Type.String({ minLength: 1, maxLength: max, ...(description ? { description } : {}) }), Type.Null()]);

/** One event. Unknown top-level fields are accepted and kept under `extra`. */
export const LogInput = Type.Object(
  {
    event_type: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'Kind of audit event, e.g. tool.called' }),
    data: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Free-form payload (a JSON object)' })),
    payload: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Another name for data; send one of them' })),
    source: Type.Optional(text(200)),
    trace_id: Type.Optional(Type.Union([Uuid, Type.Null()])),
    session_id: Type.Optional(Type.Union([Uuid, Type.Null()])),
    timestamp: Type.Optional(Type.Union([Type.String({ format: 'date-time', description: 'Client time, ISO 8601 with offset' }), Type.Null()])),
    span_id: Type.Optional(text(128)),
    parent_span_id: Type.Optional(text(128)),
    parent_event_id: Type.Optional(text(128)),
    root_event_id: Type.Optional(text(128)),
    agent_id: Type.Optional(text(200)),
    workflow_id: Type.Optional(text(200)),
    causality_type: Type.Optional(text(64)),
    idempotency_key: Type.Optional(text(255, 'Repeats with the same key return the original log_id and append nothing')),
    schema_version: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 32 }), Type.Number(), Type.Null()], { description: 'Stored as a string' })),
    event_id: Type.Optional(text(200, "Your own id for the event, so later events can name it (parent_event_id, data.inputs, data.derived_from) before you know its log_id. Hashed beside the envelope: kept when the event's content is erased")),
    agent_key_id: Type.Optional(Type.String({ pattern: '^[0-9a-f]{16}$', description: "The agent's own key (registered with POST /agent-keys) that signed this event: send it with agent_signature (docs/ledger-format.md §20)" })),
    agent_signature: Type.Optional(
      Type.String({ pattern: '^[A-Za-z0-9+/]{86}==$', description: "The agent's Ed25519 signature, base64, over the event as it will be stored (docs/ledger-format.md §20; the SDK's agentKey option makes it). The entry is written in format version 4 and hashes it; a signature that does not hold is refused with 400 agent_signature_invalid" }),
    ),
  },
  { additionalProperties: true },
);

export type LogInputT = Type.Static<typeof LogInput>;

const KNOWN = new Set<string>(['event_type', 'data', 'payload', 'event_id', 'agent_key_id', 'agent_signature', ...ENVELOPE_FIELDS]);

function depthExceeds(value: unknown, max: number): boolean {
  // Iterative, so a hostile nesting depth cannot overflow the stack.
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length) {
    const [v, d] = stack.pop() as [unknown, number];
    if (v === null || typeof v !== 'object') continue;
    if (d >= max) return true;
    for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return false;
}

/**
 * Turns a schema-valid item into a PreparedEvent, or returns the field errors that
 * the schema cannot express. `pointer` locates the item in the request (for errors).
 */
export function prepareEvent(input: LogInputT, pointer: string, opts: { strictKey?: boolean; maxEntryBytes?: number } = {}): PreparedEvent | FieldError[] {
  const errors: FieldError[] = [];
  if (input.data !== undefined && input.payload !== undefined) errors.push({ field: `${pointer}/payload`, message: 'send data or payload, not both' });
  const data = (input.data ?? input.payload) as JsonObject | undefined;
  if (data === undefined) errors.push({ field: `${pointer}/data`, message: 'is required (a JSON object)' });
  const extra: JsonObject = {};
  for (const [k, v] of Object.entries(input)) if (!KNOWN.has(k)) extra[k] = v as JsonObject[string];
  const hasExtra = Object.keys(extra).length > 0;
  if (depthExceeds(data, MAX_DEPTH)) errors.push({ field: `${pointer}/data`, message: `nests deeper than ${MAX_DEPTH} levels` });
  if (depthExceeds(extra, MAX_DEPTH)) errors.push({ field: pointer, message: `an extra field nests deeper than ${MAX_DEPTH} levels` });
  if ((input.agent_key_id === undefined) !== (input.agent_signature === undefined)) {
    errors.push({ field: `${pointer}/${input.agent_key_id === undefined ? 'agent_key_id' : 'agent_signature'}`, message: 'agent_key_id and agent_signature come together' });
  }
  if (errors.length || data === undefined) return errors;

  // The body parser (http/json-body.ts) refused every number it could not keep exactly, so
  // every value here has a canonical form.
  const dataJson = canonicalJson(data);
  const extraJson = hasExtra ? canonicalJson(extra) : null;
  // Counted only near the cap: a UTF-16 length times 3 bounds the UTF-8 size, so most events need no count.
  if (opts.maxEntryBytes !== undefined && (dataJson.length + (extraJson?.length ?? 0)) * 3 > opts.maxEntryBytes) {
    const size = Buffer.byteLength(dataJson) + (extraJson === null ? 0 : Buffer.byteLength(extraJson));
    if (size > opts.maxEntryBytes) return [{ field: pointer, message: `the entry's content (data and extra fields, canonical JSON) is ${size} bytes; MAX_ENTRY_BYTES allows ${opts.maxEntryBytes}` }];
  }

  const envelope = {} as Record<EnvelopeField, string | null>;
  for (const f of ENVELOPE_FIELDS) {
    const v = input[f];
    envelope[f] = v === undefined || v === null ? null : String(v);
  }
  const links = skeletonLinks(data);
  return {
    event_type: input.event_type,
    data,
    dataJson,
    envelope,
    eventId: input.event_id ?? null,
    linksJson: links === null ? null : canonicalJson(links),
    extra: hasExtra ? extra : null,
    extraJson,
    strictKey: opts.strictKey === true && envelope.idempotency_key !== null,
    ...(input.agent_key_id !== undefined && input.agent_signature !== undefined ? { agentSignature: { keyId: input.agent_key_id, signature: input.agent_signature } } : {}),
  };
}
