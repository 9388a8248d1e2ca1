// Staleness: how old each context source was when a later decision or action used it, directly
// or through artifacts built from it (derivation.ts), against its declared max age (or the
// configured default for its source type).
import { type Dependencies, dependencies } from './derivation.js';
import { eventTimeMs, isContext, str, type Trace, type TraceEvent } from './trace.js';

export type Staleness = 'fresh' | 'stale' | 'critical' | 'unknown';

export interface StalenessFinding {
  source_id: string;
  source_type: string | null;
  staleness: Staleness;
  age_seconds: number | null;
  max_age_seconds: number | null;
  /** The decision or action that used the source. */
  used_by_log_id: string;
  /** The context.retrieved event that read it. */
  context_log_id: string;
  /** The artifacts the use reached it through (a summary built from it, …), nearest the use first; empty when used directly. */
  via_log_ids: string[];
  details: string;
}

export interface StalenessReport {
  overall_staleness_rating: Staleness;
  findings: StalenessFinding[];
}

/** Max age by source type; "*" is the fallback. From STALENESS_MAX_AGE_SECONDS. */
export type MaxAgeDefaults = Record<string, number>;

/** Beyond this many times its max age, stale context is critical. */
export const CRITICAL_FACTOR = 3;

/** When the context's content was current: data.as_of, else data.fetched_at, else the event's own time. */
function contentTimeMs(c: TraceEvent): { ms: number; basis: string } {
  for (const field of ['as_of', 'fetched_at'] as const) {
    const v = str(c.data[field]);
    const ms = v === null ? NaN : Date.parse(v);
    if (!Number.isNaN(ms)) return { ms, basis: field };
  }
  return { ms: eventTimeMs(c), basis: 'event time' };
}

function maxAgeOf(c: TraceEvent, defaults: MaxAgeDefaults): { seconds: number | null; basis: string } {
  const declared = c.data.max_age_seconds;
  if (typeof declared === 'number' && declared > 0) return { seconds: declared, basis: 'declared' };
  const type = str(c.data.source_type);
  if (type !== null && defaults[type] !== undefined) return { seconds: defaults[type] as number, basis: `default for ${type}` };
  if (defaults['*'] !== undefined) return { seconds: defaults['*'] as number, basis: 'default' };
  return { seconds: null, basis: 'none' };
}

export function rate(ageSeconds: number | null, maxAge: number | null): Staleness {
  if (ageSeconds === null || maxAge === null) return 'unknown';
  if (ageSeconds <= maxAge) return 'fresh';
  return ageSeconds <= maxAge * CRITICAL_FACTOR ? 'stale' : 'critical';
}

const RANK: Record<Staleness, number> = { unknown: 0, fresh: 1, stale: 2, critical: 3 };

/** A source read a use rests on: directly, or through artifacts built from it (`via`, nearest the use first). */
interface Leaf {
  context: TraceEvent;
  via: TraceEvent[];
}

/**
 * The reads a used event rests on. A read with no sources of its own is a leaf; anything built
 * from other reads (deps.sources) rests on its sources' leaves, so a summary or cache entry has
 * the age of its oldest source. A read that declares its own max age is judged itself as well.
 */
function leavesOf(used: TraceEvent, deps: Dependencies): Leaf[] {
  const out: Leaf[] = [];
  const seen = new Set<TraceEvent>();
  const walk = (e: TraceEvent, via: TraceEvent[]) => {
    if (seen.has(e)) return; // cycles among derivations are reported by the graph, never followed
    seen.add(e);
    const sources = deps.sources.get(e.log_id) ?? [];
    if (isContext(e) && (sources.length === 0 || typeof e.data.max_age_seconds === 'number')) out.push({ context: e, via });
    for (const s of sources) walk(s, [...via, e]);
  };
  walk(used, []);
  return out;
}

export function assessStaleness(trace: Trace, defaults: MaxAgeDefaults, deps: Dependencies = dependencies(trace)): StalenessReport {
  const findings: StalenessFinding[] = [];
  for (const user of trace.events) {
    const used = deps.used.get(user.log_id);
    if (!used) continue;
    const judged = new Set<TraceEvent>();
    for (const u of used) {
      for (const { context: c, via } of leavesOf(u, deps)) {
        if (judged.has(c)) continue;
        judged.add(c);
        const content = contentTimeMs(c);
        const max = maxAgeOf(c, defaults);
        const age = Math.round((eventTimeMs(user) - content.ms) / 10) / 100;
        const staleness = rate(age, max.seconds);
        const sourceId = str(c.data.source_id) as string;
        const through = via.length === 0 ? '' : ` through ${via.map((v) => `${v.event_type} (seq ${v.seq})`).join(', then ')}`;
        findings.push({
          source_id: sourceId,
          source_type: str(c.data.source_type),
          staleness,
          age_seconds: age,
          max_age_seconds: max.seconds,
          used_by_log_id: user.log_id,
          context_log_id: c.log_id,
          via_log_ids: via.map((v) => v.log_id),
          details:
            max.seconds === null
              ? `${sourceId} was ${age} s old (by ${content.basis}) when ${user.event_type} used it${through}; no max age is declared or configured`
              : `${sourceId} was ${age} s old (by ${content.basis}) when ${user.event_type} used it${through}; max age ${max.seconds} s (${max.basis})`,
        });
      }
    }
  }
  const worst = findings.reduce<Staleness>((w, f) => (RANK[f.staleness] > RANK[w] ? f.staleness : w), 'unknown');
  return { overall_staleness_rating: worst, findings };
}
