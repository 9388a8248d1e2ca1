// Erased entries in a bundle or an export (docs/ledger-format.md §14): each must be accounted for
// by its erasure record, which comes later in the chain. Used by bundle.ts.
import type { Check } from './checks.js';
import { erasureRecordProblem } from './content.js';
import type { JsonObject } from './json.js';

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * Erased entries waiting for their erasure record (which comes later in the chain): each is
 * checked against the record when it is seen; those left at the end are failures.
 */
export class ErasureLedger {
  private readonly pending = new Map<string, Array<{ seq: number; log_id: string; company_id: string; source: string | null; event_type: string | null }>>();
  count = 0;
  /** Erased entries a record was found for but does not account for, or whose record never came. */
  private failed = 0;

  erased(e: Record<string, unknown>): void {
    this.count++;
    const id = typeof e.erasure_id === 'string' ? e.erasure_id : '';
    const list = this.pending.get(id) ?? [];
    list.push({ seq: Number(e.seq), log_id: String(e.log_id), company_id: String(e.company_id), source: typeof e.source === 'string' ? e.source : null, event_type: typeof e.event_type === 'string' ? e.event_type : null });
    this.pending.set(id, list);
  }

  /** Checks the entries waiting for `record`, if any; returns the failures. */
  record(record: Record<string, unknown>): Check[] {
    const waiting = this.pending.get(String(record.log_id));
    if (!waiting) return [];
    this.pending.delete(String(record.log_id));
    const r = { seq: Number(record.seq), company_id: String(record.company_id), event_type: String(record.event_type), source: typeof record.source === 'string' ? record.source : null, data: (record.data ?? null) as JsonObject | null };
    const failures = waiting.flatMap((w) => {
      const problem = erasureRecordProblem(w, r);
      return problem ? [{ status: 'fail' as const, code: 'erased' as const, message: `entry seq ${w.seq} (log_id ${w.log_id}): ${problem}`, seq: w.seq }] : [];
    });
    this.failed += failures.length;
    return failures;
  }

  /** Failures for the erased entries whose record never came. */
  unaccounted(): Check[] {
    const left = [...this.pending.values()].flat();
    this.failed += left.length;
    this.pending.clear();
    return left.map((w) => ({ status: 'fail' as const, code: 'erased' as const, message: `entry seq ${w.seq} (log_id ${w.log_id}): its content was erased, and no erasure record in the document names it`, seq: w.seq }));
  }

  /**
   * The note on the erased entries a record accounts for (call after unaccounted()). It counts only
   * those: the ones no record accounts for are FAIL lines, never also "accounted for".
   */
  note(): Check | null {
    const ok = this.count - this.failed;
    if (ok <= 0) return null;
    const rest = this.failed > 0 ? `; ${plural(this.failed, 'other erased entry is', 'other erased entries are')} not accounted for (the FAIL lines)` : '';
    return { status: 'note', code: 'erased', message: `${plural(ok, 'entry', 'entries')} with erased content, each accounted for by its erasure record: each commitment, hash and signature still verifies${rest}` };
  }
}
