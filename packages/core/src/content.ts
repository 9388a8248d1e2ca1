// Version 2 entries: a salted commitment to the content (data and extra), hashed in the entry
// instead of the content itself. Erasing the content removes data, extra and the salt and keeps
// the commitment: the entry hash, the chain, the tree and every proof still verify, and the
// 256-bit salt keeps the erased content from being guessed back from the commitment.
// Specified in docs/ledger-format.md §14.
import { bytesThenUtf8, fromBase64, sha256Hex, utf8 } from '#crypto';
import { canonicalJson, type JsonObject } from './json.js';
import { linksTextOfDataText, skeletonLinksText } from './links.js';

/** The first bytes of every commitment's input, so it can be nothing else the service hashes. */
export const CONTENT_COMMITMENT_CONTEXT = 'audit-ledger/v2/content\n';
export const CONTENT_SALT_BYTES = 32;
const CONTEXT_BYTES = utf8(CONTENT_COMMITMENT_CONTEXT);

/** Whether a format version commits to its content (versions 2, 3 and 4), so the content can be erased. */
export const commitsContent = (formatVersion: number): boolean => formatVersion === 2 || formatVersion === 3 || formatVersion === 4;

/** Whether a format version hashes event_id and links (versions 3 and 4). */
export const hashesLinks = (formatVersion: number): boolean => formatVersion === 3 || formatVersion === 4;

/** The canonical content text: JCS of {"data": data, "extra": extra}, built from their canonical texts. */
export function contentText(dataJson: string, extraJson: string | null): string {
  return `{"data":${dataJson},"extra":${extraJson ?? 'null'}}`;
}

/** lowercase_hex(SHA-256(context ‖ salt ‖ UTF-8(content text))). */
export function contentCommitment(salt: Uint8Array, text: string): string {
  return sha256Hex(bytesThenUtf8([CONTEXT_BYTES, salt], text));
}

export type ContentState =
  /** Version 1: the content is hashed directly, nothing more to check. */
  | { state: 'hashed' }
  /** Version 2 or 3 with its content: data, extra and salt rebuild the commitment (and, in version 3, the links). */
  | { state: 'intact' }
  /** Version 2 with its content erased: only the commitment is left. */
  | { state: 'erased' }
  /** Version 2 whose content does not match its commitment (or is malformed). */
  | { state: 'mismatch'; detail: string };

type ContentFields = {
  format_version: number;
  data: JsonObject | null;
  extra: JsonObject | null;
  content_commitment?: string | null | undefined;
  content_salt?: string | null | undefined;
  /** Version 3. */
  links?: JsonObject | null | undefined;
};

/** Version 3: links must be null or an object, and, while the content is there, the links of its data (links.ts). */
function linksProblem(e: ContentFields, texts: { data: string | null; links?: string | null | undefined } | undefined, intact: boolean): string | null {
  if (!hashesLinks(e.format_version)) return null;
  const want = !intact ? null : texts?.data != null ? linksTextOfDataText(texts.data) : skeletonLinksText(e.data as JsonObject);
  // Stored text exactly as the rule gives it (how the service writes it): nothing to parse.
  if (want !== null && texts?.links !== undefined && (texts.links ?? 'null') === want) return null;
  const links = texts?.links !== undefined ? (texts.links === null ? null : (JSON.parse(texts.links) as unknown)) : (e.links ?? null);
  if (links !== null && (typeof links !== 'object' || Array.isArray(links))) return 'links is neither null nor a JSON object';
  if (want === null) return null;
  const got = links === null ? 'null' : canonicalJson(links as JsonObject);
  return want === got ? null : `links ${got} are not the links of the content (${want})`;
}

const canonicalOf = (data: JsonObject, extra: JsonObject | null): string => contentText(canonicalJson(data), extra === null ? null : canonicalJson(extra));

/**
 * Checks a version 2 entry's content against its commitment. With `texts` (the stored canonical
 * texts of data and extra) it hashes them as they are, and only parses them when that fails: stored
 * text that is not canonical counts by its meaning, as for the entry hash; `e.data` is then only
 * tested for null.
 */
export function contentState(e: ContentFields, texts?: { data: string | null; extra: string | null; links?: string | null }): ContentState {
  const state = commitmentState(e, texts);
  let problem: string | null;
  try {
    problem = state.state === 'intact' || state.state === 'erased' ? linksProblem(e, texts, state.state === 'intact') : null;
  } catch {
    problem = 'data or links is not JSON';
  }
  return problem === null ? state : { state: 'mismatch', detail: problem };
}

function commitmentState(e: ContentFields, texts?: { data: string | null; extra: string | null }): ContentState {
  if (!commitsContent(e.format_version)) return { state: 'hashed' };
  if (typeof e.content_commitment !== 'string') return { state: 'mismatch', detail: `a version ${e.format_version} entry without content_commitment` };
  if (e.content_salt === null || e.content_salt === undefined) {
    if ((e.data ?? null) !== null || (e.extra ?? null) !== null) return { state: 'mismatch', detail: 'content without a salt: data and extra must be null once erased' };
    return { state: 'erased' };
  }
  if (e.data === null || e.data === undefined) return { state: 'mismatch', detail: 'a salt without content' };
  let salt: Uint8Array;
  try {
    salt = fromBase64(e.content_salt);
  } catch {
    return { state: 'mismatch', detail: 'content_salt is not canonical base64' };
  }
  if (salt.length !== CONTENT_SALT_BYTES) return { state: 'mismatch', detail: `content_salt is ${salt.length} bytes, not ${CONTENT_SALT_BYTES}` };
  const got = contentCommitment(salt, texts?.data != null ? contentText(texts.data, texts.extra) : canonicalOf(e.data, e.extra));
  if (got === e.content_commitment) return { state: 'intact' };
  if (texts?.data != null) {
    try {
      const again = contentCommitment(salt, canonicalOf(JSON.parse(texts.data) as JsonObject, texts.extra === null ? null : (JSON.parse(texts.extra) as JsonObject)));
      if (again === e.content_commitment) return { state: 'intact' };
    } catch {
      return { state: 'mismatch', detail: 'data or extra is not JSON' };
    }
  }
  return { state: 'mismatch', detail: `data and extra commit to ${got}, the entry's content_commitment is ${e.content_commitment}` };
}

/** The event type of an erasure record (docs/ledger-format.md §14). */
export const ERASURE_EVENT_TYPE = 'compliance.erasure';
/** The reserved source every administrative entry carries. */
export const ADMIN_SOURCE = 'audit-ledger/admin';

/**
 * Why an erased entry's erasure record does not account for it, or null when it does: the record
 * must be an erasure entry of the reserved source, later in the same chain, listing the entry.
 */
/**
 * The one kind of the service's own entries whose content may be erased: an approval request
 * (its arguments and reason are the agent's and may name a data subject). The binding stays in
 * the approval.approved entries, which carry the arguments_hash (docs/ledger-format.md §14).
 */
export const ERASABLE_SERVICE_ENTRY = { source: 'audit-ledger/governance', event_type: 'approval.requested' } as const;

/** Whether an entry's content may ever be erased by its source and type: any but the service's own, except ERASABLE_SERVICE_ENTRY. */
export function erasableSource(source: string | null | undefined, eventType: string | null | undefined): boolean {
  if (typeof source !== 'string' || !source.startsWith('audit-ledger/')) return true;
  return source === ERASABLE_SERVICE_ENTRY.source && eventType === ERASABLE_SERVICE_ENTRY.event_type;
}

export function erasureRecordProblem(
  entry: { seq: number; log_id: string; company_id: string; source?: string | null; event_type?: string | null },
  record: { seq: number; company_id: string; event_type: string; source: string | null; data: JsonObject | null } | undefined,
): string | null {
  // The service never erases its own entries (the compliance record is kept), but for an
  // approval request's: no record can account for any other.
  if (!erasableSource(entry.source, entry.event_type)) return `its content is gone, but it is the service's own entry (source ${String(entry.source)}, ${String(entry.event_type)}), which is never erased`;
  if (record === undefined) return 'its content was erased, and no erasure record of the chain names it';
  if (record.company_id !== entry.company_id || record.event_type !== ERASURE_EVENT_TYPE || record.source !== ADMIN_SOURCE) {
    return `its erasure record (seq ${record.seq}) is not a ${ERASURE_EVENT_TYPE} entry of ${ADMIN_SOURCE}`;
  }
  if (record.seq <= entry.seq) return `its erasure record (seq ${record.seq}) precedes it`;
  const ids = record.data?.log_ids;
  if (!Array.isArray(ids) || !ids.includes(entry.log_id)) return `its erasure record (seq ${record.seq}) does not list it`;
  return null;
}
