// The company's usage report, without HTTP: requests, events and rate-limited requests per day
// and per API key over a span of UTC days (at most MAX_USAGE_DAYS), the storage its entries use,
// and its current key's rate limit. routes/usage.ts calls it once.
import { InputError } from '../kernel/domain-error.js';
import type { AccountStore } from '../store/accounts.js';
import type { LedgerStore } from '../store/ledger.js';
import type { UsageStore } from '../store/usage.js';
import type { ReportStore } from '../store/reports.js';
import { iso } from '../kernel/time.js';
import type { UsageCounter } from './usage.js';

const DAY_MS = 86_400_000;
/** The longest span one report covers. */
export const MAX_USAGE_DAYS = 366;

export interface UsageReportDeps {
  usage: Pick<UsageCounter, 'flush'>;
  usageStore: UsageStore;
  accounts: Pick<AccountStore, 'listApiKeys'>;
  ledger: Pick<LedgerStore, 'getChainHead'>;
  /** Entries per agent over the span (the ledger itself, not the request counters). */
  reportStore: Pick<ReportStore, 'countBy'>;
  clock: () => number;
}

/** The most agents a report lists (the busiest first). */
export const MAX_AGENTS = 50;

type Counts = { api_requests: number; events_ingested: number; rate_limited_requests: number };
const zero = (): Counts => ({ api_requests: 0, events_ingested: 0, rate_limited_requests: 0 });

export class UsageReport {
  constructor(private readonly deps: UsageReportDeps) {}

  /** From and to are UTC days (YYYY-MM-DD), inclusive; by default the 30 days up to today. */
  async report(companyId: string, fromDay?: string, toDay?: string) {
    const { usage, usageStore, accounts, ledger, clock } = this.deps;
    const to = toDay ?? iso(clock()).slice(0, 10);
    const from = fromDay ?? iso(Date.parse(to) - 29 * DAY_MS).slice(0, 10);
    const span = (Date.parse(to) - Date.parse(from)) / DAY_MS + 1;
    if (span < 1) throw new InputError([{ field: '/querystring/from', message: 'must not be after to' }]);
    if (span > MAX_USAGE_DAYS) throw new InputError([{ field: '/querystring/from', message: `at most ${MAX_USAGE_DAYS} days before to` }]);
    // This process's counts first, so they are exact here (other processes add theirs within 10 s).
    await usage.flush();
    const period = { from: `${from}T00:00:00.000Z`, to: iso(Date.parse(to) + DAY_MS) };
    const [rows, keys, head, bytes, agents] = await Promise.all([usageStore.list(companyId, from, to), accounts.listApiKeys(companyId), ledger.getChainHead(companyId), usageStore.storedBytes(companyId), this.deps.reportStore.countBy(companyId, period, 'agent_id')]);
    const add = (a: Counts, r: (typeof rows)[number]) => {
      a.api_requests += r.requests;
      a.events_ingested += r.events;
      a.rate_limited_requests += r.rate_limited;
    };
    const totals = zero();
    const byDay = new Map<string, Counts>();
    const byKey = new Map<string, Counts>();
    const counts = (m: Map<string, Counts>, k: string) => m.get(k) ?? (m.set(k, zero()).get(k) as Counts);
    for (const r of rows) {
      add(totals, r);
      add(counts(byDay, r.day), r);
      add(counts(byKey, r.key_id), r);
    }
    const keyInfo = new Map(keys.map((k) => [k.key_id, k]));
    const active = keys.find((k) => k.status === 'active');
    return {
      company_id: companyId,
      from,
      to,
      totals,
      by_day: [...byDay].map(([day, c]) => ({ day, ...c })),
      by_key: [...byKey].map(([keyId, c]) => ({ key_id: keyId === '' ? null : keyId, name: keyInfo.get(keyId)?.name ?? null, key_prefix: keyInfo.get(keyId)?.key_prefix ?? null, ...c })),
      by_agent: agents.sort((a, b) => b.count - a.count || String(a.key).localeCompare(String(b.key))).slice(0, MAX_AGENTS).map((a) => ({ agent_id: a.key, entries: a.count })),
      storage: { entries: head ? head.lastSeq + 1 : 0, data_bytes: bytes },
      rate_limit: active ? { key_id: active.key_id, key_prefix: active.key_prefix, rate_limit_per_minute: active.rate_limit_per_minute } : null,
    };
  }
}
