// The ledger entry and its hash. Specified in docs/ledger-format.md; change nothing here
// without changing the format version and that document.
import { sha256Hex } from '#crypto';
import { commitsContent, contentText, hashesLinks } from './content.js';
import { canonicalJson, type JsonObject } from './json.js';

/**
 * The version new entries are written in. Version 1 hashes data and extra directly; version 2
 * hashes a salted commitment to them (content.ts), so their content can be erased later
 * without breaking the chain; version 3 also hashes the client's event_id and the links the
 * content names (links.ts), the causal skeleton that erasure keeps. Entries of every version verify.
 */
export const LEDGER_FORMAT_VERSION = 3;
/** Version 4 is version 3 plus the agent's own signature (agent-signature.ts): the version of every entry that carries one. */
export const AGENT_SIGNED_FORMAT_VERSION = 4;
export const FORMAT_VERSIONS = [1, 2, 3, 4] as const;
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

/**
 * An entry's fields. Version 1 hashes data and extra; version 2 hashes content_commitment in
 * their place, and keeps data, extra and content_salt beside it (null once erased). Absent
 * optional fields are null, never omitted.
 */
export type EntryBody = {
  format_version: number;
  company_id: string;
  seq: number;
  log_id: string;
  event_type: string;
  /** null only for an erased version 2 entry. */
  data: JsonObject | null;
  extra: JsonObject | null;
  /** Version 2: hex SHA-256 commitment to data and extra (hashed). Absent or null in version 1. */
  content_commitment?: string | null;
  /** Version 2: base64 of the 32-byte salt (not hashed); null once the content is erased. */
  content_salt?: string | null;
  /** An erased entry: the log_id of the erasure record that erased it (not hashed). */
  erasure_id?: string | null;
  /** Version 3: the client's own id for the event (hashed; kept when the content is erased). */
  event_id?: string | null;
  /** Version 3: the references the content names, skeletonLinks(data) (hashed; kept when the content is erased). */
  links?: JsonObject | null;
  /** Version 4: the key_id of the agent key that signed the event (agent-signature.ts; hashed). */
  agent_key_id?: string | null;
  /** Version 4: the agent's Ed25519 signature over the event as it sent it, base64 (hashed). */
  agent_signature?: string | null;
  created_at: string;
  prev_hash: string;
} & { [K in EnvelopeField]: string | null };

/** A stored entry: the hashed body plus its hash and signature. */
export type LedgerEntry = EntryBody & { hash: string; signature: string; key_id: string };

type HashedField = Exclude<keyof EntryBody, 'content_salt' | 'erasure_id'>;

/** The fields a version 1 entry hash covers. */
export const HASHED_FIELDS: ReadonlyArray<HashedField> = [
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

/** The fields a version 2 entry hash covers: content_commitment in place of data and extra. */
export const HASHED_FIELDS_V2: ReadonlyArray<HashedField> = HASHED_FIELDS.flatMap((f) =>
  f === 'data' ? ['content_commitment' as const] : f === 'extra' ? [] : [f],
);

/** The fields a version 3 entry hash covers: version 2's, with event_id and links before created_at. */
export const HASHED_FIELDS_V3: ReadonlyArray<HashedField> = HASHED_FIELDS_V2.flatMap((f) => (f === 'created_at' ? ['event_id' as const, 'links' as const, f] : [f]));

/** The fields a version 4 entry hash covers: version 3's, with the agent's key_id and signature. */
export const HASHED_FIELDS_V4: ReadonlyArray<HashedField> = HASHED_FIELDS_V3.flatMap((f) => (f === 'created_at' ? ['agent_key_id' as const, 'agent_signature' as const, f] : [f]));

export { commitsContent, hashesLinks };

/** The hashed fields of an entry's format version (version 1's for an unknown version: it then fails to verify). */
export function hashedFields(formatVersion: number): ReadonlyArray<HashedField> {
  return formatVersion === 4 ? HASHED_FIELDS_V4 : formatVersion === 3 ? HASHED_FIELDS_V3 : formatVersion === 2 ? HASHED_FIELDS_V2 : HASHED_FIELDS;
}

/** The hashed object, built field by field so nothing outside the version's hashed fields can slip in. */
export function entryBody(e: EntryBody): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const f of hashedFields(e.format_version)) body[f] = e[f] ?? null;
  return body;
}

/** SHA-256 (lowercase hex) of the RFC 8785 canonical JSON of the entry body (version 2: with the stored commitment). */
export function entryHash(e: EntryBody): string {
  return sha256Hex(canonicalJson(entryBody(e) as JsonObject));
}

// The hashed field names in RFC 8785 order (UTF-16 code unit order; all ASCII here).
const SORTED_FIELDS = [...HASHED_FIELDS].sort();
/** What JSON.stringify (and so RFC 8785) escapes in a string: quote, backslash, controls, and lone surrogates (any surrogate here, to be safe). */
// eslint-disable-next-line no-control-regex -- the control characters are what it looks for
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;
const SORTED_FIELDS_V2 = [...HASHED_FIELDS_V2].sort();
const SORTED_FIELDS_V3 = [...HASHED_FIELDS_V3].sort();
const SORTED_FIELDS_V4 = [...HASHED_FIELDS_V4].sort();

/**
 * The same canonical text as canonicalJson(entryBody(e)), built around the already
 * canonical JSON of data, extra and links instead of serializing them again: the append path
 * has them from validation. RFC 8785 serializes strings exactly as ECMAScript
 * JSON.stringify does and integers as their decimal form, so this is byte-identical
 * (a randomized test holds it to the generic path).
 */
export function canonicalEntryText(e: Omit<EntryBody, 'data' | 'extra' | 'links'>, dataJson: string | null, extraJson: string | null, linksJson: string | null = null): string {
  const fields = e.format_version === 4 ? SORTED_FIELDS_V4 : e.format_version === 3 ? SORTED_FIELDS_V3 : e.format_version === 2 ? SORTED_FIELDS_V2 : SORTED_FIELDS;
  let out = '{';
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i] as HashedField;
    if (i > 0) out += ',';
    out += `"${f}":`;
    if (f === 'data') out += dataJson ?? 'null';
    else if (f === 'extra') out += extraJson ?? 'null';
    else if (f === 'links') out += linksJson ?? 'null';
    else {
      const v = (e as Record<string, unknown>)[f] ?? null;
      // A string with nothing JSON escapes is itself in quotes; only others go through JSON.stringify.
      out += v === null ? 'null' : typeof v === 'number' ? String(v) : typeof v === 'string' && !NEEDS_ESCAPE.test(v) ? `"${v}"` : JSON.stringify(v);
    }
  }
  return out + '}';
}

/** Version 2: the canonical content text (data and extra) a commitment covers. */
export { contentText };
