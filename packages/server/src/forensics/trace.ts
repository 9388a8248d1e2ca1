// A trace as the forensics see it: its verified entries in event-time order, and how one
// event names another. Pure; docs/event-types.md describes the vocabulary.
import type { Json, JsonObject } from '@audit-ledger/core';

/** One ledger entry of the trace, with the verdict of its own verification. */
export interface TraceEvent {
  log_id: string;
  seq: number;
  event_type: string;
  source: string | null;
  /** Once the content was erased (erased: true): its links (format version 3), else {}. */
  data: JsonObject;
  extra: JsonObject | null;
  erased: boolean;
  /** The client's own id for the event, hashed beside the envelope (format version 3); null before. */
  event_id: string | null;
  /** The client's timestamp, as sent (null when it sent none). */
  timestamp: string | null;
  created_at: string;
  span_id: string | null;
  parent_span_id: string | null;
  parent_event_id: string | null;
  root_event_id: string | null;
  causality_type: string | null;
  idempotency_key: string | null;
  agent_id: string | null;
  integrity: 'valid' | 'invalid';
  /** Why integrity is invalid. */
  integrity_problems: string[];
}

export interface Trace {
  /** Ordered by event time, then seq. */
  events: TraceEvent[];
  /** An event by any name it goes by (see refsOf). */
  byRef: Map<string, TraceEvent>;
}

/** The event's own time: its client timestamp when that parses, else the server's created_at. */
export function eventTimeMs(e: Pick<TraceEvent, 'timestamp' | 'created_at'>): number {
  const t = e.timestamp === null ? NaN : Date.parse(e.timestamp);
  return Number.isNaN(t) ? Date.parse(e.created_at) : t;
}

export function str(v: Json | undefined): string | null {
  return typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null;
}

/**
 * The names other events may use for this one: its log_id, the client's own event id (`event_id`
 * at the top level: hashed beside the envelope from format version 3, kept under extra before; or
 * in data), and its idempotency key.
 */
export function refsOf(e: TraceEvent): string[] {
  return [e.log_id, e.event_id, str(e.extra?.event_id), str(e.data.event_id), e.idempotency_key].filter((r): r is string => r !== null);
}

export function buildTrace(events: TraceEvent[]): Trace {
  const sorted = [...events].sort((a, b) => eventTimeMs(a) - eventTimeMs(b) || a.seq - b.seq);
  const byRef = new Map<string, TraceEvent>();
  for (const e of [...events].sort((a, b) => a.seq - b.seq)) for (const r of refsOf(e)) if (!byRef.has(r)) byRef.set(r, e);
  return { events: sorted, byRef };
}

/** A reference in data.inputs: a string, or an object naming an event or a source. */
export interface InputRef {
  event?: string;
  source?: string;
  raw: string;
}

export function inputsOf(e: TraceEvent): InputRef[] {
  return refsIn(e.data.inputs);
}

/** References in a field that lists events or sources (`inputs`, `derived_from`): a list, or one reference. */
export function refsIn(value: Json | undefined): InputRef[] {
  const list = Array.isArray(value) ? value : value === undefined || value === null ? [] : [value];
  return list.flatMap((i): InputRef[] => {
    if (typeof i === 'string') return [{ event: i, source: i, raw: i }];
    if (i && typeof i === 'object' && !Array.isArray(i)) {
      const ev = str(i.log_id) ?? str(i.event_id);
      const src = str(i.source_id);
      if (ev || src) return [{ ...(ev ? { event: ev } : {}), ...(src ? { source: src } : {}), raw: ev ?? (src as string) }];
    }
    return [];
  });
}

/** Short label detail for an event: the tool, policy, source, decision or reviewer it is about. */
export function subjectOf(e: TraceEvent): string | null {
  const d = e.data;
  return str(d.tool) ?? str(d['gen_ai.tool.name']) ?? str(d.policy_id) ?? str(d.source_id) ?? str(d.decision_id) ?? str(d.reviewer) ?? str(d.action) ?? null;
}

/** The tool an event is about: data.tool, or the OpenTelemetry GenAI attribute gen_ai.tool.name. */
export function toolOf(e: TraceEvent): string | null {
  return str(e.data.tool) ?? str(e.data['gen_ai.tool.name']);
}

/** The first call of `tool` that went through (a tool.called or action.executed of it) at an index in [from, until), if any. */
export function toolSuccessBetween(trace: Trace, tool: string | null, from: number, until = trace.events.length): TraceEvent | undefined {
  for (let i = Math.max(0, from); i < until; i++) {
    const x = trace.events[i] as TraceEvent;
    if ((x.event_type === 'tool.called' || x.event_type === 'action.executed') && toolOf(x) === tool) return x;
  }
  return undefined;
}

/** A policy's verdict: `verdict` (docs/governance.md) or the older `result`. */
export const verdictOf = (e: TraceEvent) => str(e.data.verdict) ?? str(e.data.result);
export const isDenial = (e: TraceEvent) => e.event_type === 'policy.denied' || (e.event_type === 'policy.evaluated' && verdictOf(e) === 'deny');
/**
 * The verdicts that oblige a human approval before the action runs (docs/governance.md, "What each
 * verdict obliges"): `step_up` (a stronger check, a person's approval), `hold` (wait for a
 * decision) and `escalate` (a reviewer decides). Running the action without a final approval in
 * between is a violation, as running a denied one is.
 */
export const APPROVAL_VERDICTS: ReadonlySet<string> = new Set(['step_up', 'hold', 'escalate']);
export const requiresApproval = (e: TraceEvent) => e.event_type === 'policy.evaluated' && APPROVAL_VERDICTS.has(verdictOf(e) ?? '');
/** A verdict the action must not run past unlifted: a denial, or one that requires approval. */
export const isGate = (e: TraceEvent) => isDenial(e) || requiresApproval(e);
/** An approval check of the governance layer that did not pass: an execution ran without a valid approval. */
export const isFailedApprovalCheck = (e: TraceEvent) => e.event_type === 'approval.checked' && str(e.data.result) !== null && str(e.data.result) !== 'ok';
export const isContext = (e: TraceEvent) => e.event_type === 'context.retrieved' && str(e.data.source_id) !== null;
export const isHitl = (e: TraceEvent) => e.event_type.startsWith('hitl.');
