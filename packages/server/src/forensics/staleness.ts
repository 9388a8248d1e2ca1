// Staleness: how old each context source was when a later decision or action used it,
// against its declared max age (or the configured default for its source type).
import { eventTimeMs, inputsOf, isContext, str, type Trace, type TraceEvent } from './trace.js';

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

const isUser = (e: TraceEvent) => e.event_type === 'decision.made' || e.event_type === 'action.executed';

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

/**
 * Which contexts each decision or action used: those its data.inputs names (by event, or
 * by source id: that source's latest read before it); with no inputs, the latest read of
 * each source since the previous decision or action (what the agent had just fetched for it).
 * One pass over the trace.
 */
function* usages(trace: Trace): Generator<{ user: TraceEvent; context: TraceEvent }> {
  const latest = new Map<string, TraceEvent>();
  let sinceLastUser = new Map<string, TraceEvent>();
  for (const e of trace.events) {
    if (isContext(e)) {
      const id = str(e.data.source_id) as string;
      latest.set(id, e);
      sinceLastUser.delete(id); // keep insertion order = order of latest read
      sinceLastUser.set(id, e);
      continue;
    }
    if (!isUser(e)) continue;
    const inputs = inputsOf(e);
    const used = new Set<TraceEvent>();
    for (const input of inputs) {
      const byEvent = input.event !== undefined ? trace.byRef.get(input.event) : undefined;
      if (byEvent && isContext(byEvent)) used.add(byEvent);
      else if (input.source !== undefined && latest.has(input.source)) used.add(latest.get(input.source) as TraceEvent);
    }
    if (inputs.length === 0) for (const c of sinceLastUser.values()) used.add(c);
    for (const context of used) yield { user: e, context };
    sinceLastUser = new Map();
  }
}

export function assessStaleness(trace: Trace, defaults: MaxAgeDefaults): StalenessReport {
  const findings: StalenessFinding[] = [];
  for (const { user, context: c } of usages(trace)) {
    const content = contentTimeMs(c);
    const max = maxAgeOf(c, defaults);
    const age = Math.round((eventTimeMs(user) - content.ms) / 10) / 100;
    const staleness = rate(age, max.seconds);
    const sourceId = str(c.data.source_id) as string;
    findings.push({
      source_id: sourceId,
      source_type: str(c.data.source_type),
      staleness,
      age_seconds: age,
      max_age_seconds: max.seconds,
      used_by_log_id: user.log_id,
      context_log_id: c.log_id,
      details:
        max.seconds === null
          ? `${sourceId} was ${age} s old (by ${content.basis}) when ${user.event_type} used it; no max age is declared or configured`
          : `${sourceId} was ${age} s old (by ${content.basis}) when ${user.event_type} used it; max age ${max.seconds} s (${max.basis})`,
    });
  }
  const worst = findings.reduce<Staleness>((w, f) => (RANK[f.staleness] > RANK[w] ? f.staleness : w), 'unknown');
  return { overall_staleness_rating: worst, findings };
}
