// What each event of a trace depends on: the relation the root cause walks back along, from the
// outcome to the earliest anomaly. Pure; built once per trace, in one pass over references.
//
// An event depends on
// - its cause (`caused_by`: parent_event_id, else parent_span_id, else root_event_id, else the
//   event before it; the last is `weak`: it says only that one thing came after another). An
//   OpenTelemetry span follows OTel's direction instead (graph.ts): it is caused by its child
//   spans, a tool call by the model call that asked for it, another span by its sibling before;
// - for a decision or action: what it decided on (`data.inputs`; without inputs, the context read
//   since the previous decision or action);
// - for anything built from other reads (a summary, an embedding, a cache entry, a tool result):
//   its sources (`data.derived_from`; `data.inputs` on an event that is not a decision; and, for
//   an event with a span, the reads and artifacts of its child spans that came before it);
// - for an OpenTelemetry model call given tool results (data.tool_results): those tool calls,
//   which it used as a decision uses its inputs (so context a tool read reaches the staleness check);
// - for a review (`hitl.*`): the decision it reviews; for a denial: what it denied.
import { type DanglingRef, isOtelSpan, parentOf, spanCauses } from './graph.js';
import { eventTimeMs, type InputRef, inputsOf, isContext, isDenial, isHitl, refsIn, str, type Trace, type TraceEvent } from './trace.js';

export type DependencyKind = 'caused_by' | 'decided_on' | 'derived_from' | 'reviews' | 'denies';

export interface Dependency {
  on: TraceEvent;
  kind: DependencyKind;
  /** Only an ordering (the event before it, with no causal field): evidence of the weakest kind. */
  weak: boolean;
}

export const isDecisionLike = (e: TraceEvent) => e.event_type === 'decision.made' || e.event_type === 'action.executed';

/** Resolves a reference to an event: by event id, else a source id's latest read at or before `at`. */
function resolve(trace: Trace, ref: InputRef, latestRead: (source: string) => TraceEvent | undefined): TraceEvent | undefined {
  const byEvent = ref.event !== undefined ? trace.byRef.get(ref.event) : undefined;
  if (byEvent) return byEvent;
  return ref.source !== undefined ? latestRead(ref.source) : undefined;
}

export interface Dependencies {
  /** What each event (by log_id) depends on. */
  of: Map<string, Dependency[]>;
  /** For each decision or action: the events it used as its inputs (explicit, or the reads since the previous one). */
  used: Map<string, TraceEvent[]>;
  /** For each event built from other reads: its sources. */
  sources: Map<string, TraceEvent[]>;
}

export function dependencies(trace: Trace): Dependencies {
  const of = new Map<string, Dependency[]>();
  const used = new Map<string, TraceEvent[]>();
  const sources = new Map<string, TraceEvent[]>();
  const add = (e: TraceEvent, d: Dependency) => {
    if (d.on === e) return;
    const list = of.get(e.log_id) ?? [];
    if (!list.some((x) => x.on === d.on && x.kind === d.kind)) list.push(d);
    of.set(e.log_id, list);
  };
  const firstOfSpan = new Map<string, TraceEvent>();
  const childrenOfSpan = new Map<string, TraceEvent[]>();
  for (const e of trace.events) {
    if (e.span_id !== null && !firstOfSpan.has(e.span_id)) firstOfSpan.set(e.span_id, e);
    if (e.parent_span_id !== null) {
      const children = childrenOfSpan.get(e.parent_span_id);
      if (children) children.push(e);
      else childrenOfSpan.set(e.parent_span_id, [e]);
    }
  }
  const decisions = new Map<string, TraceEvent>();
  for (const e of trace.events) {
    const id = e.event_type === 'decision.made' ? str(e.data.decision_id) : null;
    if (id !== null && !decisions.has(id)) decisions.set(id, e);
  }

  const latest = new Map<string, TraceEvent>();
  let sinceLastUser = new Map<string, TraceEvent>();
  const ignored: DanglingRef[] = [];
  trace.events.forEach((e, i) => {
    const parent = parentOf(e, trace, firstOfSpan, trace.events[i - 1], ignored);
    if (parent) add(e, { on: parent.event, kind: 'caused_by', weak: parent.how === 'order' });
    // An OpenTelemetry span's result is caused by its child spans, a model call's by the tool
    // results it was given (graph.ts, spanCauses).
    const causes = spanCauses(e, trace);
    for (const c of causes) add(e, { on: c.event, kind: 'caused_by', weak: false });
    const latestRead = (source: string) => latest.get(source);

    // Built from other reads.
    const derived: TraceEvent[] = [];
    for (const ref of refsIn(e.data.derived_from)) {
      const s = resolve(trace, ref, latestRead);
      if (s) derived.push(s);
    }
    if (!isDecisionLike(e)) for (const ref of inputsOf(e)) {
      const s = resolve(trace, ref, latestRead);
      if (s) derived.push(s);
    }
    if (!isDecisionLike(e) && e.span_id !== null) {
      const t = eventTimeMs(e);
      // An OpenTelemetry span's children are part of its work whatever their recorded times say
      // (an instrumentation may end a child's span a moment after the parent's, in a later callback).
      const otel = isOtelSpan(e);
      for (const c of childrenOfSpan.get(e.span_id) ?? []) if (c !== e && (otel || eventTimeMs(c) <= t) && (isContext(c) || c.data.derived_from !== undefined)) derived.push(c);
    }
    if (derived.length > 0) {
      const unique = [...new Set(derived)].filter((s) => s !== e);
      sources.set(e.log_id, unique);
      for (const s of unique) add(e, { on: s, kind: 'derived_from', weak: false });
    }

    // An agent framework's decisions are its model calls: one given tool results used them (and,
    // through them, the context those tools read), as a decision uses its inputs.
    const given = causes.filter((c) => c.how === 'given the tool result').map((c) => c.event);
    if (given.length > 0 && !isDecisionLike(e)) used.set(e.log_id, given);
    if (isDecisionLike(e)) {
      const inputs = inputsOf(e);
      const u = new Set<TraceEvent>();
      for (const ref of inputs) {
        const s = resolve(trace, ref, latestRead);
        if (s) u.add(s);
      }
      if (inputs.length === 0) for (const c of sinceLastUser.values()) u.add(c);
      used.set(e.log_id, [...u]);
      for (const s of u) add(e, { on: s, kind: 'decided_on', weak: inputs.length === 0 });
      sinceLastUser = new Map();
    }
    if (isContext(e)) {
      const id = str(e.data.source_id) as string;
      latest.set(id, e);
      sinceLastUser.delete(id);
      sinceLastUser.set(id, e);
    }
    if (isHitl(e)) {
      const decisionId = str(e.data.decision_id);
      const decision = (decisionId !== null ? decisions.get(decisionId) : undefined) ?? (e.parent_event_id !== null ? trace.byRef.get(e.parent_event_id) : undefined);
      if (decision) add(e, { on: decision, kind: 'reviews', weak: false });
    }
    if (isDenial(e)) {
      const subject = deniedSubject(trace, e, i);
      if (subject) add(e, { on: subject, kind: 'denies', weak: false });
    }
  });
  return { of, used, sources };
}

/** What a denial denied: the event it names as its parent, else the latest decision, action or tool call before it. */
export function deniedSubject(trace: Trace, denial: TraceEvent, index = trace.events.indexOf(denial)): TraceEvent | undefined {
  if (denial.parent_event_id !== null) {
    const p = trace.byRef.get(denial.parent_event_id);
    if (p) return p;
  }
  for (let j = index - 1; j >= 0; j--) {
    const x = trace.events[j] as TraceEvent;
    if (isDecisionLike(x) || x.event_type === 'tool.called') return x;
  }
  return undefined;
}
