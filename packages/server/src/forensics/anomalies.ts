// The anomalies of a trace, each with where it entered the run: stale context at the decision
// that used it, runs of tool failures, and policy denials. rootcause.ts decides which of them,
// if any, caused the outcome. Pure.
import { deniedSubject } from './derivation.js';
import { label, type OutcomeKind, quoted } from './outcome.js';
import { CRITICAL_FACTOR, type StalenessFinding } from './staleness.js';
import { str, toolOf, type Trace, type TraceEvent } from './trace.js';

export type RootCauseType = 'STALE_CONTEXT' | 'POLICY_DENIAL' | 'POLICY_VIOLATION' | 'TOOL_ERROR' | 'HUMAN_REJECTION' | 'AGENT_FAILURE' | 'INTEGRITY_FAILURE' | 'NONE';
export type Role = 'cause' | 'propagation' | 'decision' | 'outcome';
export type Severity = 'info' | 'low' | 'medium' | 'high';

export interface PathStep {
  log_id: string;
  seq: number;
  event_type: string;
  role: Role;
}

export interface Candidate {
  root_cause_type: RootCauseType;
  description: string;
  confidence: number;
  remediation: string;
  /** The path's log_ids, from the cause to the outcome. */
  evidence: string[];
}

export interface Finding {
  /** A root-cause type; GRAPH for cycles and dangling references; ERASED for evidence whose content was erased. */
  type: RootCauseType | 'GRAPH' | 'ERASED';
  severity: Severity;
  description: string;
  evidence: string[];
}

export interface RootCause extends Candidate {
  detected: boolean;
  outcome: { kind: OutcomeKind; bad: boolean; log_id: string | null; description: string };
  /** The evidence in order, each with its role on the path from the cause to the outcome. */
  evidence_path: PathStep[];
  /** Other causes on the outcome's ancestry, ranked. */
  candidates: Candidate[];
  /** Anomalies that did not cause the outcome (all of them, on a good outcome): informational. */
  findings: Finding[];
}

export /** An anomaly of the trace: what went wrong, and where it entered the run. */
interface Anomaly {
  type: RootCauseType;
  /** What the cause acted on, shown before it (the request a policy denied). */
  before?: TraceEvent[];
  /** The cause events, earliest first. */
  cause: TraceEvent[];
  /** Between the cause and `at`: the artifacts or fallbacks it travelled through, in order. */
  via: TraceEvent[];
  /** The decision or action that used it (stale context, a fallback), or the cause itself. */
  at: TraceEvent;
  /** 0 (barely) to 1 (far over the limit, never recovered). */
  severity: number;
  what: string;
  remedy: string;
  /** Names the reviewer's reason would use for it. */
  names: string[];
}


export const round2 = (x: number) => Math.round(x * 100) / 100;
export const clamp = (x: number) => round2(Math.min(0.99, Math.max(0.05, x)));
/** A sentence's end: no doubled full stop when a quoted reason ends with one. */
export const sentence = (s: string) => `${s.replace(/[.!?…\s]+$/u, '')}.`;
export const unquote = (s: string) => s.replace(/[.!?…\s]+$/u, '');
/** A duration as people say it: 95 s, 20 min, 6 h, 41 days. */
export function human(seconds: number): string {
  if (seconds < 120) return `${round2(seconds)} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${round2(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} days`;
}
/** Sentence case, unless the sentence starts with an identifier (an event type such as tool.failed). */
export const cap = (s: string) => (/^[a-z_]+\.[a-z_]/.test(s) ? s : s.charAt(0).toUpperCase() + s.slice(1));

export function staleAnomaly(trace: Trace, f: StalenessFinding): Anomaly {
  const read = trace.byRef.get(f.context_log_id) as TraceEvent;
  const user = trace.byRef.get(f.used_by_log_id) as TraceEvent;
  const via = f.via_log_ids.map((id) => trace.byRef.get(id) as TraceEvent).reverse();
  const ratio = (f.age_seconds ?? 0) / (f.max_age_seconds ?? 1);
  const type = f.source_type ?? 'context';
  const through = via.length === 0 ? '' : ` through ${via.map(label).join(' and ')}`;
  return {
    type: 'STALE_CONTEXT',
    cause: [read],
    via,
    at: user,
    severity: Math.min(1, (ratio - 1) / 3),
    what: `${label(user)} used ${type} ${quoted(f.source_id)}${through} when it was ${human(f.age_seconds ?? 0)} old, ${round2(ratio)}× its max age of ${human(f.max_age_seconds ?? 0)}${ratio > CRITICAL_FACTOR ? ' (critical)' : ''}`,
    remedy: `Re-fetch ${quoted(f.source_id)} before acting on it: refuse ${type} data older than ${human(f.max_age_seconds ?? 0)} at the point of use${via.length > 0 ? ', including in what is built from it (summaries, caches)' : ''}, and check why it was ${human(f.age_seconds ?? 0)} behind.`,
    names: [f.source_id, type],
  };
}

/** Tool failures, one anomaly per run of failures of one tool (up to its next success). */
export function toolAnomalies(trace: Trace): Anomaly[] {
  const out: Anomaly[] = [];
  const open = new Map<string, TraceEvent[]>();
  const close = (tool: string) => {
    const failures = open.get(tool);
    open.delete(tool);
    if (!failures) return;
    const last = failures[failures.length - 1] as TraceEvent;
    const error = unquote(str(last.data.error) ?? str(last.data['error.type']) ?? 'no error given');
    out.push({
      type: 'TOOL_ERROR',
      cause: failures,
      via: [],
      at: last,
      severity: Math.min(1, 0.5 + failures.length / 10),
      what: `tool ${quoted(tool)} failed${failures.length > 1 ? ` ${failures.length} times` : ''} (${error})`,
      remedy: `Restore or fix tool ${quoted(tool)} ("${error}") and rerun; do not let a decision proceed on fallback data while it is down, or mark such decisions for review.`,
      names: [tool],
    });
  };
  for (const e of trace.events) {
    const tool = toolOf(e) ?? '(unnamed tool)';
    if (e.event_type === 'tool.failed') open.set(tool, [...(open.get(tool) ?? []), e]);
    else if (e.event_type === 'tool.called' || e.event_type === 'action.executed') close(tool);
  }
  for (const tool of [...open.keys()]) close(tool);
  return out;
}

/** A policy's verdict against a request: a denial, or (`verb` "required an approval …") a verdict that asked for one. */
export function denialAnomaly(trace: Trace, d: TraceEvent, verb = 'denied'): Anomaly {
  const version = d.data.policy_version;
  const policy = str(d.data.policy_id) === null ? null : `${str(d.data.policy_id)}${typeof version === 'number' || typeof version === 'string' ? `" version "${version}` : ''}`;
  const reason = str(d.data.reason) ?? (Array.isArray(d.data.reason_codes) ? d.data.reason_codes.join(', ') : null);
  const subject = deniedSubject(trace, d);
  return {
    type: 'POLICY_DENIAL',
    ...(subject ? { before: [subject] } : {}),
    cause: [d],
    via: [],
    at: d,
    severity: 0.8,
    what: `policy ${quoted(policy)} ${verb} ${subject ? label(subject) : 'the request'}${reason ? `: ${unquote(reason)}` : ''}`,
    remedy: `Check the request against policy ${quoted(policy)}${reason ? ` ("${unquote(reason)}")` : ''}: if the denial was right, change what the agent asks for or route it to an approver; if not, fix the policy.`,
    names: [policy ?? '', 'policy'],
  };
}

