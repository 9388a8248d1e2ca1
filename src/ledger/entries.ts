// Stored rows ⇄ ledger entries.
import { canonicalEntryText, entryHash, type LedgerEntry } from '../core/entry.js';
import { type JsonObject, sha256Hex } from '../core/hash.js';
import type { LogEntryRow } from '../store/chain.js';

export function rowToEntry(row: LogEntryRow): LedgerEntry {
  return { ...row, data: JSON.parse(row.data) as JsonObject, extra: row.extra === null ? null : (JSON.parse(row.extra) as JsonObject) };
}

/**
 * The hash a stored row's fields give. The fast path splices the stored (canonical) data
 * and extra text; if that disagrees with the stored hash, the row is parsed and hashed the
 * generic way, as an auditor would (stored text that is not canonical counts by its meaning).
 */
export function recomputeHash(row: LogEntryRow): string {
  const fast = sha256Hex(canonicalEntryText(row, row.data, row.extra));
  if (fast === row.hash) return fast;
  try {
    return entryHash(rowToEntry(row));
  } catch {
    return fast;
  }
}
