// Usage counting that never slows a request: counts are added up in memory and flushed
// to usage_daily every FLUSH_MS (and on close, and before usage is read). A crash loses
// at most the last interval's counts; ledger entries themselves are never affected.
import { iso } from '../kernel/time.js';
import type { UsageRow, UsageStore } from '../store/usage.js';
import type { AppendedEvent } from '../ledger/appender/errors.js';
import type { PreparedEvent } from '../ledger/appender/types.js';

const FLUSH_MS = 10_000;
const DAY_MS = 86_400_000;

export interface UsageCounterDeps {
  usageStore: UsageStore;
  clock: () => number;
  logError: (obj: object, msg: string) => void;
}

export class UsageCounter {
  private readonly usageStore: UsageStore;
  private readonly clock: () => number;
  private readonly logError: (obj: object, msg: string) => void;
  private pending = new Map<string, UsageRow>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(deps: UsageCounterDeps) {
    this.usageStore = deps.usageStore;
    this.clock = deps.clock;
    this.logError = deps.logError;
  }

  /** The UTC day of the last count and the clock range it covers, so most counts skip formatting a date. */
  private today = { day: '', from: 0, to: 0 };

  private dayOf(ms: number): string {
    const t = this.today;
    if (ms < t.from || ms >= t.to) {
      const from = Math.floor(ms / DAY_MS) * DAY_MS;
      this.today = { day: iso(from).slice(0, 10), from, to: from + DAY_MS };
    }
    return this.today.day;
  }

  private row(companyId: string, keyId: string | null): UsageRow {
    const day = this.dayOf(this.clock());
    const key = `${companyId}|${day}|${keyId ?? ''}`;
    let r = this.pending.get(key);
    if (!r) {
      r = { company_id: companyId, day, key_id: keyId ?? '', requests: 0, events: 0, rate_limited: 0, bytes: 0 };
      this.pending.set(key, r);
    }
    return r;
  }

  /** An answered request of a company (keyId null: a user token). */
  request(companyId: string, keyId: string | null, rateLimited: boolean): void {
    const r = this.row(companyId, keyId);
    r.requests++;
    if (rateLimited) r.rate_limited++;
  }

  /** Events appended for a company through one request. */
  events(companyId: string, keyId: string | null, count: number, bytes: number): void {
    const r = this.row(companyId, keyId);
    r.events += count;
    r.bytes += bytes;
  }

  /** Events of one request as the appender answered them: only those newly appended count, with the bytes of their data and extra fields. */
  appended(companyId: string, keyId: string | null, events: PreparedEvent[], results: AppendedEvent[]): void {
    let n = 0;
    let bytes = 0;
    results.forEach((r, i) => {
      if (r.duplicate) return;
      const e = events[i] as PreparedEvent;
      n++;
      bytes += Buffer.byteLength(e.dataJson) + (e.extraJson === null ? 0 : Buffer.byteLength(e.extraJson));
    });
    if (n > 0) this.events(companyId, keyId, n, bytes);
  }

  start(): void {
    this.timer = setInterval(() => void this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  /** Writes what has been counted; counts that fail to write are kept for the next flush. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.pending.size === 0) return;
      const rows = [...this.pending.values()];
      this.pending = new Map();
      try {
        await this.usageStore.add(rows);
      } catch (err) {
        this.logError({ err }, 'usage flush failed; counts kept for the next one');
        for (const r of rows) {
          const key = `${r.company_id}|${r.day}|${r.key_id}`;
          const cur = this.pending.get(key);
          if (!cur) this.pending.set(key, r);
          else {
            cur.requests += r.requests;
            cur.events += r.events;
            cur.rate_limited += r.rate_limited;
            cur.bytes += r.bytes;
          }
        }
      }
    });
    return this.flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
