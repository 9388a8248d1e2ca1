// Stored rows ⇄ ledger entries.
import type { LedgerEntry } from '../core/entry.js';
import type { JsonObject } from '../core/hash.js';
import type { LogEntryRow } from '../store/chain.js';

export function rowToEntry(row: LogEntryRow): LedgerEntry {
  return { ...row, data: JSON.parse(row.data) as JsonObject, extra: row.extra === null ? null : (JSON.parse(row.extra) as JsonObject) };
}
