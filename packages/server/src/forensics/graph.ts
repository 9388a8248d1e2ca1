// The causal graph of a trace: events and the context sources they read, joined by typed
// edges. Built in one pass over references (never by following them), so cycles and
// dangling references are found and reported, never looped on.
import { eventTimeMs, inputsOf, isContext, isDenial, isHitl, str, subjectOf, type Trace, type TraceEvent } from './trace.js';

export type EdgeType = 'caused_by' | 'reads' | 'decided_on' | 'denied_by' | 'reviewed_by';

export interface GraphNode {
  id: string;
  type: 'event' | 'context_source';
  label: string;
  metadata: Record<string, string | number | null>;
}

export interface GraphEdge {
  /** The effect (caused_by), reader (reads), decision (decided_on), denied event (denied_by) or reviewed decision (reviewed_by). */
  source: string;
  target: string;
  type: EdgeType;
  label: string;
}

export interface DanglingRef {
  log_id: string;
  field: string;
  reference: string;
}

export interface CausalGraph {
  nodes: GraphNode[];
  edges: GraphEdge[];
  /** Each cycle among caused_by edges, as the log_ids in it. */
  cycles: string[][];
  dangling: DanglingRef[];
}

export const sourceNodeId = (sourceId: string) => `source:${sourceId}`;

/** An event that an OpenTelemetry span became (OTLP ingestion keeps the span under data.otel). */
export const isOtelSpan = (e: TraceEvent): boolean => {
  const otel = e.data.otel;
  return e.span_id !== null && otel !== null && typeof otel === 'object' && !Array.isArray(otel) && otel.signal === 'span';
};

const nanos = (e: TraceEvent, field: 'start_time_unix_nano' | 'end_time_unix_nano'): bigint | null => {
  const v = (e.data.otel as Record<string, unknown>)[field];
  return typeof v === 'string' && /^\d+$/.test(v) ? BigInt(v) : null;
};

interface SpanIndex {
  /** The model call that asked for each tool call id (data.tool_calls). */
  byToolCall: Map<string, TraceEvent>;
  /** The tool call (tool.called or tool.failed) of each tool call id. */
  toolOf: Map<string, TraceEvent>;
  /** The span events under each span id. */
  children: Map<string, TraceEvent[]>;
}
const spanIndexes = new WeakMap<Trace, SpanIndex>();

/** The trace's span events by tool call and by parent span, built once per trace. */
export function spanIndex(trace: Trace): SpanIndex {
  let ix = spanIndexes.get(trace);
  if (ix) return ix;
  ix = { byToolCall: new Map(), toolOf: new Map(), children: new Map() };
  for (const e of trace.events) {
    if (!isOtelSpan(e)) continue;
    if (e.event_type === 'llm.call' && Array.isArray(e.data.tool_calls))
      for (const c of e.data.tool_calls) {
        const id = c !== null && typeof c === 'object' && !Array.isArray(c) ? str(c.id) : null;
        if (id !== null && !ix.byToolCall.has(id)) ix.byToolCall.set(id, e);
      }
    const callId = str(e.data.tool_call_id);
    if (callId !== null && (e.event_type === 'tool.called' || e.event_type === 'tool.failed') && !ix.toolOf.has(callId)) ix.toolOf.set(callId, e);
    if (e.parent_span_id !== null) ix.children.set(e.parent_span_id, [...(ix.children.get(e.parent_span_id) ?? []), e]);
  }
  spanIndexes.set(trace, ix);
  return ix;
}

/**
 * What an OpenTelemetry span was caused by, in OTel's direction: a parent span is recorded when it
 * ends and its result is caused by its children (spanChildren), so a child is never caused by its
 * parent. A tool call is caused by the model call that asked for it (its tool call id among that
 * call's data.tool_calls; without an id, the latest model call beside it that asked for a tool of
 * its name, else the latest model call beside it when that one names no tool calls); any other span by the sibling that ended last before it started; the
 * first child of a span by nothing recorded (its parent's start).
 */
function otelCause(e: TraceEvent, trace: Trace): { event: TraceEvent; how: string } | null {
  const ix = spanIndex(trace);
  const callId = str(e.data.tool_call_id);
  const asked = callId !== null ? ix.byToolCall.get(callId) : undefined;
  if (asked && asked !== e) return { event: asked, how: 'requested by the model call' };
  if (e.parent_span_id === null) return null;
  const start = nanos(e, 'start_time_unix_nano');
  if (start === null) return null;
  // A tool call that carries no call id (Traceloop's tool spans): the latest model call beside it,
  // started before it, that asked for a tool of its name (started, not ended: an instrumentation
  // may end a model call's span a moment after the app has its answer and has started the tool).
  // A model call that names no tool calls at all (LlamaIndex.TS's, as Traceloop records them: its
  // streamed tool calls are not in the span): the latest model call beside the tool, started
  // before it, that names none (a model call that named others asked for those, not for this one),
  // unless a call of the same tool ended in between (this one is its retry: caused by it, below).
  const tool = str(e.data.tool);
  if (callId === null && tool !== null && (e.event_type === 'tool.called' || e.event_type === 'tool.failed')) {
    const siblings = ix.children.get(e.parent_span_id) ?? [];
    let by: { e: TraceEvent; start: bigint } | null = null;
    let before: { e: TraceEvent; start: bigint } | null = null;
    for (const s of siblings) {
      const began = s.event_type === 'llm.call' ? nanos(s, 'start_time_unix_nano') : null;
      if (began === null || began > start) continue;
      const names = Array.isArray(s.data.tool_calls) ? s.data.tool_calls.map((c) => (c !== null && typeof c === 'object' && !Array.isArray(c) ? str(c.name) : null)) : [];
      if (names.includes(tool) && (by === null || began > by.start)) by = { e: s, start: began };
      if (before === null || began > before.start) before = { e: s, start: began };
    }
    if (by) return { event: by.e, how: 'requested by the model call (by tool name)' };
    const after = before?.start;
    const retry = after !== undefined && siblings.some((s) => {
      const end = s !== e && str(s.data.tool) === tool && (s.event_type === 'tool.called' || s.event_type === 'tool.failed') ? nanos(s, 'end_time_unix_nano') : null;
      return end !== null && end >= after && end <= start;
    });
    if (before && !retry && !(Array.isArray(before.e.data.tool_calls) && before.e.data.tool_calls.length > 0)) return { event: before.e, how: 'requested by the model call before it' };
  }
  let best: { e: TraceEvent; end: bigint } | null = null;
  for (const s of ix.children.get(e.parent_span_id) ?? []) {
    const end = s === e ? null : nanos(s, 'end_time_unix_nano');
    if (end !== null && end <= start && (best === null || end > best.end)) best = { e: s, end };
  }
  return best ? { event: best.e, how: 'after the span before it' } : null;
}

/**
 * The span events a span's result was caused by: its children, except the tool calls it asked for itself (a model call whose tool calls are its child spans,
 * as the AI SDK's classic spans nest them): those are caused by it.
 */
function spanChildren(e: TraceEvent, trace: Trace): TraceEvent[] {
  if (!isOtelSpan(e)) return [];
  const ix = spanIndex(trace);
  // Every child, even one that ended after its parent (a framework ending the run's span on an
  // error before the model call's): the parent waited for it all the same.
  return (ix.children.get(e.span_id as string) ?? []).filter((c) => {
    const callId = str(c.data.tool_call_id);
    return c !== e && (callId === null || ix.byToolCall.get(callId) !== e);
  });
}

/** The tool calls whose results a model call was given (its data.tool_results): it was caused by them. */
function toolResultsUsed(e: TraceEvent, trace: Trace): TraceEvent[] {
  if (!isOtelSpan(e) || e.event_type !== 'llm.call' || !Array.isArray(e.data.tool_results)) return [];
  const ix = spanIndex(trace);
  const out: TraceEvent[] = [];
  for (const r of e.data.tool_results) {
    const id = r !== null && typeof r === 'object' && !Array.isArray(r) ? str(r.id) : null;
    const tool = id !== null ? ix.toolOf.get(id) : undefined;
    if (tool && tool !== e && !out.includes(tool)) out.push(tool);
  }
  return out;
}

export type SpanCause = { event: TraceEvent; how: 'child span' | 'given the tool result' };

/**
 * What an OpenTelemetry span's result was caused by besides its own cause (otelCause): its child
 * spans, and, for a model call, the tool calls whose results it was given. One list for the
 * dependencies (derivation.ts) and the graph's edges.
 */
export function spanCauses(e: TraceEvent, trace: Trace): SpanCause[] {
  if (!isOtelSpan(e)) return [];
  return [...spanChildren(e, trace).map((event) => ({ event, how: 'child span' as const })), ...toolResultsUsed(e, trace).map((event) => ({ event, how: 'given the tool result' as const }))];
}

/** The event that `e` was caused by, and how we know; null for a root. */
export function parentOf(
  e: TraceEvent,
  trace: Trace,
  firstOfSpan: Map<string, TraceEvent>,
  previous: TraceEvent | undefined,
  dangling: DanglingRef[],
): { event: TraceEvent; how: string } | null {
  if (e.parent_event_id !== null) {
    const p = trace.byRef.get(e.parent_event_id);
    if (p) return { event: p, how: e.causality_type ?? 'parent_event_id' };
    dangling.push({ log_id: e.log_id, field: 'parent_event_id', reference: e.parent_event_id });
    return null;
  }
  if (isOtelSpan(e)) return otelCause(e, trace);
  if (e.parent_span_id !== null) {
    const p = firstOfSpan.get(e.parent_span_id);
    if (p) return { event: p, how: e.causality_type ?? 'parent_span_id' };
    dangling.push({ log_id: e.log_id, field: 'parent_span_id', reference: e.parent_span_id });
    return null;
  }
  if (e.root_event_id !== null) {
    const p = trace.byRef.get(e.root_event_id);
    if (p && p !== e) return { event: p, how: e.causality_type ?? 'root_event_id' };
    if (!p) dangling.push({ log_id: e.log_id, field: 'root_event_id', reference: e.root_event_id });
    return null;
  }
  // No causal field at all: the event before it in the trace.
  return previous ? { event: previous, how: 'order' } : null;
}

export function buildGraph(trace: Trace): CausalGraph {
  const nodes: GraphNode[] = [];
  const edges: GraphEdge[] = [];
  const dangling: DanglingRef[] = [];
  const sources = new Map<string, GraphNode>();
  const decisions = new Map<string, TraceEvent>();

  trace.events.forEach((e) => {
    const subject = subjectOf(e);
    nodes.push({
      id: e.log_id,
      type: 'event',
      label: subject ? `${e.event_type}: ${subject}` : e.event_type,
      metadata: { seq: e.seq, event_type: e.event_type, time: new Date(eventTimeMs(e)).toISOString(), source: e.source, agent_id: e.agent_id, integrity: e.integrity },
    });
    const decisionId = e.event_type === 'decision.made' ? str(e.data.decision_id) : null;
    if (decisionId && !decisions.has(decisionId)) decisions.set(decisionId, e);
    if (isContext(e)) {
      const id = str(e.data.source_id) as string;
      if (!sources.has(id)) {
        const node: GraphNode = { id: sourceNodeId(id), type: 'context_source', label: id, metadata: { source_id: id, source_type: str(e.data.source_type) } };
        sources.set(id, node);
        nodes.push(node);
      }
    }
  });

  const firstOfSpan = new Map<string, TraceEvent>();
  for (const e of trace.events) if (e.span_id !== null && !firstOfSpan.has(e.span_id)) firstOfSpan.set(e.span_id, e);
  trace.events.forEach((e, i) => {
    const parent = parentOf(e, trace, firstOfSpan, trace.events[i - 1], dangling);
    if (parent) edges.push({ source: e.log_id, target: parent.event.log_id, type: 'caused_by', label: parent.how });
    for (const c of spanCauses(e, trace)) edges.push({ source: e.log_id, target: c.event.log_id, type: 'caused_by', label: c.how });
    if (isContext(e)) edges.push({ source: e.log_id, target: sourceNodeId(str(e.data.source_id) as string), type: 'reads', label: 'reads' });
    if (e.event_type === 'decision.made' || e.event_type === 'action.executed') {
      for (const input of inputsOf(e)) {
        const ev = input.event !== undefined ? trace.byRef.get(input.event) : undefined;
        if (ev) edges.push({ source: e.log_id, target: ev.log_id, type: 'decided_on', label: 'input' });
        else if (input.source !== undefined && sources.has(input.source)) edges.push({ source: e.log_id, target: sourceNodeId(input.source), type: 'decided_on', label: 'input' });
        else dangling.push({ log_id: e.log_id, field: 'data.inputs', reference: input.raw });
      }
    }
    if (isDenial(e)) {
      // What was denied: the event it names as its parent, else the latest decision or action before it.
      const subject = (e.parent_event_id !== null ? trace.byRef.get(e.parent_event_id) : undefined) ?? lastBefore(trace, i, (x) => x.event_type === 'decision.made' || x.event_type === 'action.executed' || x.event_type === 'tool.called');
      if (subject) edges.push({ source: subject.log_id, target: e.log_id, type: 'denied_by', label: str(e.data.policy_id) ?? 'policy' });
    }
    if (isHitl(e)) {
      const decisionId = str(e.data.decision_id);
      const decision = (decisionId !== null ? decisions.get(decisionId) : undefined) ?? (e.parent_event_id !== null ? trace.byRef.get(e.parent_event_id) : undefined);
      if (decision) edges.push({ source: decision.log_id, target: e.log_id, type: 'reviewed_by', label: str(e.data.reviewer) ?? e.event_type });
      else if (decisionId !== null) dangling.push({ log_id: e.log_id, field: 'data.decision_id', reference: decisionId });
    }
  });

  return { nodes, edges, cycles: cyclesOf(nodes, edges.filter((x) => x.type === 'caused_by')), dangling };
}

function lastBefore(trace: Trace, i: number, pred: (e: TraceEvent) => boolean): TraceEvent | undefined {
  for (let j = i - 1; j >= 0; j--) if (pred(trace.events[j] as TraceEvent)) return trace.events[j];
  return undefined;
}

/** Strongly connected components of more than one node (or with a self-loop): Tarjan's algorithm, iterative. */
function cyclesOf(nodes: GraphNode[], edges: GraphEdge[]): string[][] {
  const out = new Map<string, string[]>();
  for (const e of edges) out.set(e.source, [...(out.get(e.source) ?? []), e.target]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let next = 0;
  for (const root of nodes.map((n) => n.id)) {
    if (index.has(root)) continue;
    const work: Array<{ v: string; i: number }> = [{ v: root, i: 0 }];
    index.set(root, next);
    low.set(root, next++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1] as { v: string; i: number };
      const succ = out.get(frame.v) ?? [];
      if (frame.i < succ.length) {
        const w = succ[frame.i++] as string;
        if (!index.has(w)) {
          index.set(w, next);
          low.set(w, next++);
          stack.push(w);
          onStack.add(w);
          work.push({ v: w, i: 0 });
        } else if (onStack.has(w)) {
          low.set(frame.v, Math.min(low.get(frame.v) as number, index.get(w) as number));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.v, Math.min(low.get(parent.v) as number, low.get(frame.v) as number));
      if (low.get(frame.v) === index.get(frame.v)) {
        const scc: string[] = [];
        let w: string;
        do {
          w = stack.pop() as string;
          onStack.delete(w);
          scc.push(w);
        } while (w !== frame.v);
        if (scc.length > 1 || (out.get(frame.v) ?? []).includes(frame.v)) cycles.push(scc.reverse());
      }
    }
  }
  return cycles;
}

/** The same graph as a Mermaid flowchart; node ids become n0, n1, … and labels are escaped. */
export function toMermaid(g: CausalGraph): string {
  const ids = new Map(g.nodes.map((n, i) => [n.id, `n${i}`]));
  const esc = (s: string) => s.replace(/"/g, '#quot;').replace(/[<>]/g, (c) => (c === '<' ? '#lt;' : '#gt;')).replace(/\n/g, ' ');
  const lines = ['flowchart TD'];
  for (const n of g.nodes) {
    const id = ids.get(n.id) as string;
    const text = n.type === 'event' ? `${esc(n.label)}<br/>seq ${String(n.metadata.seq)}` : `source: ${esc(n.label)}`;
    lines.push(n.type === 'event' ? `  ${id}["${text}"]` : `  ${id}[("${text}")]`);
    if (n.metadata.integrity === 'invalid') lines.push(`  style ${id} stroke:#d00,stroke-width:3px`);
  }
  for (const e of g.edges) lines.push(`  ${ids.get(e.source)} -->|${e.type}| ${ids.get(e.target)}`);
  return `${lines.join('\n')}\n`;
}
