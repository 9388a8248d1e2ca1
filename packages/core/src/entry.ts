// The ledger entry and its hash. Specified in docs/ledger-format.md; change nothing here
// without changing the format version and that document.
import { sha256Hex } from '#crypto';
import { canonicalJson, type JsonObject } from './json.js';

export const LEDGER_FORMAT_VERSION = 1;
/** prev_hash of entry 0. */
export const GENESIS_PREV_HASH = '0'.repeat(64);

/** Optional envelope fields agent SDKs commonly send; each is a string or null. */
export const ENVELOPE_FIELDS = [
  'source',
  'trace_id',
  'session_id',
  'timestamp',
  'span_id',
  'parent_span_id',
  'parent_event_id',
  'root_event_id',
  'agent_id',
  'workflow_id',
  'causality_type',
  'idempotency_key',
  'schema_version',
] as const;
export type EnvelopeField = (typeof ENVELOPE_FIELDS)[number];

/** Exactly the fields the entry hash covers. Absent optional fields are null, never omitted. */
export type EntryBody = {
  format_version: number;
  company_id: string;
  seq: number;
  log_id: string;
  event_type: string;
  data: JsonObject;
  extra: JsonObject | null;
  created_at: string;
  prev_hash: string;
} & { [K in EnvelopeField]: string | null };

/** A stored entry: the hashed body plus its hash and signature. */
export type LedgerEntry = EntryBody & { hash: string; signature: string; key_id: string };

export const HASHED_FIELDS: ReadonlyArray<keyof EntryBody> = [
  'format_version',
  'company_id',
  'seq',
  'log_id',
  'event_type',
  'data',
  ...ENVELOPE_FIELDS,
  'extra',
  'created_at',
  'prev_hash',
];

/** The hashed object, built field by field so nothing outside HASHED_FIELDS can slip in. */
export function entryBody(e: EntryBody): EntryBody {
  const body: Record<string, unknown> = {};
  for (const f of HASHED_FIELDS) body[f] = e[f];
  return body as EntryBody;
}

/** SHA-256 (lowercase hex) of the RFC 8785 canonical JSON of the entry body. */
export function entryHash(e: EntryBody): string {
  return sha256Hex(canonicalJson(entryBody(e)));
}

// The hashed field names in RFC 8785 order (UTF-16 code unit order; all ASCII here).
const SORTED_FIELDS = [...HASHED_FIELDS].sort();

/**
 * The same canonical text as canonicalJson(entryBody(e)), built around the already
 * canonical JSON of data and extra instead of serializing them again: the append path
 * has them from validation. RFC 8785 serializes strings exactly as ECMAScript
 * JSON.stringify does and integers as their decimal form, so this is byte-identical
 * (a randomized test holds it to the generic path).
 */
export function canonicalEntryText(e: Omit<EntryBody, 'data' | 'extra'>, dataJson: string, extraJson: string | null): string {
  let out = '{';
  for (let i = 0; i < SORTED_FIELDS.length; i++) {
    const f = SORTED_FIELDS[i] as keyof EntryBody;
    if (i > 0) out += ',';
    out += `"${f}":`;
    if (f === 'data') out += dataJson;
    else if (f === 'extra') out += extraJson ?? 'null';
    else {
      const v = e[f as Exclude<keyof EntryBody, 'data' | 'extra'>];
      out += v === null ? 'null' : typeof v === 'number' ? String(v) : JSON.stringify(v);
    }
  }
  return out + '}';
}
