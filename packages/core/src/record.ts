// Entries as they are stored and exported: data and extra kept as their canonical JSON text (the
// exact bytes hashed), everything else as in the entry. The server's log_entries row has this
// shape; so does each line of a JSON Lines export once parsed.
import { sha256Hex } from '#crypto';
import { canonicalEntryText, entryBody, type LedgerEntry } from './entry.js';
import { canonicalJson, type JsonObject } from './json.js';
import { type ContentState, contentState } from './content.js';

/**
 * A stored entry: data and extra as canonical JSON text (null once a version 2 entry's content
 * is erased), and, for an erased entry, the log_id of the erasure record (not hashed).
 */
export type EntryRecord = Omit<LedgerEntry, 'data' | 'extra' | 'links'> & { data: string | null; extra: string | null; erasure_id?: string | null; links?: string | null };

/** A stored signed checkpoint (docs/ledger-format.md §8). */
export interface CheckpointRecord {
  company_id: string;
  tree_size: number;
  /** Lowercase hex. */
  root_hash: string;
  timestamp: string;
  key_id: string;
  /** The C2SP signed note, exactly as signed. */
  note: string;
}

export function recordToEntry(row: EntryRecord): LedgerEntry {
  const { links, ...rest } = row;
  return {
    ...rest,
    data: row.data === null ? null : (JSON.parse(row.data) as JsonObject),
    extra: row.extra === null ? null : (JSON.parse(row.extra) as JsonObject),
    ...(links !== undefined ? { links: links === null ? null : (JSON.parse(links) as JsonObject) } : {}),
  };
}

/**
 * The hash a stored record's fields give. The fast path splices the stored (canonical) data
 * and extra text; if that disagrees with the stored hash, the record is parsed and hashed the
 * generic way, as an auditor would (stored text that is not canonical counts by its meaning).
 */
export function recomputeHash(row: EntryRecord): string {
  const fast = sha256Hex(canonicalEntryText(row, row.data, row.extra, row.links ?? null));
  if (fast === row.hash || row.format_version === 2) return fast; // version 2 hashes no content text
  const generic = genericText(row);
  return generic === null ? fast : sha256Hex(generic);
}

/** The exact bytes a stored record's hash covers (JCS of its hashed body, docs/ledger-format.md §3), chosen as recomputeHash chooses. */
export function canonicalRecordText(row: EntryRecord): string {
  const fast = canonicalEntryText(row, row.data, row.extra, row.links ?? null);
  if (row.format_version === 2 || sha256Hex(fast) === row.hash) return fast;
  return genericText(row) ?? fast;
}

/** The record parsed and canonicalized the generic way, as an auditor would; null when it cannot be. */
function genericText(row: EntryRecord): string | null {
  try {
    return canonicalJson(entryBody(recordToEntry(row)) as JsonObject);
  } catch {
    return null;
  }
}

/** A stored entry's content against its commitment (versions 2 and 3; version 3 also its links), hashing the stored texts. */
export function recordContentState(row: EntryRecord): ContentState {
  const present: JsonObject | null = row.data === null ? null : {};
  return contentState(
    { format_version: row.format_version, data: present, extra: row.extra === null ? null : {}, content_commitment: row.content_commitment, content_salt: row.content_salt },
    { data: row.data, extra: row.extra, links: row.links ?? null },
  );
}
