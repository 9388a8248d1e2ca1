// The attribute readers the conventions share (conventions.ts): typed reads of OTel attribute
// values, JSON text parsed, flattened indexed keys gathered, and the message and document shapes
// of GenAI, OpenInference and LangChain. Pure.
import type { Json, JsonObject } from '@audit-ledger/core';

export const str = (v: Json | undefined): string | null => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null);
export const num = (v: Json | undefined): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : null);

/** A JSON text attribute as the value it encodes (arguments, results, messages); other text as it is. */
export function parsed(v: Json | undefined): Json | undefined {
  if (typeof v !== 'string') return v;
  const t = v.trim();
  if (!(t.startsWith('{') || t.startsWith('['))) return v;
  try {
    return JSON.parse(t) as Json;
  } catch {
    return v;
  }
}

/**
 * LangChain's serialized messages in OpenInference's output.value ({"output": {"lc": 1, "type":
 * "constructor", "kwargs": {"content": …}}}, a tool's ToolMessage): the content they carry.
 */
export function unwrapLangChain(v: Json | undefined): Json | undefined {
  const o = obj(v);
  const inner = o !== null && Object.keys(o).length === 1 ? obj(o.output) : null;
  const msg = inner ?? o;
  if (msg === null || msg.lc !== 1 || msg.type !== 'constructor') return v;
  const kwargs = obj(msg.kwargs);
  return kwargs && kwargs.content !== undefined ? parsed(kwargs.content) : v;
}

export const asArray = (v: Json | undefined): Json[] => (Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]);
export const obj = (v: Json | undefined): JsonObject | null => (v !== null && typeof v === 'object' && !Array.isArray(v) ? v : null);

/** Flattened attributes with indexed keys (`<prefix>.<i>.<rest>`) as a list of objects, in index order. */
export function indexed(a: JsonObject, prefix: string): JsonObject[] {
  const out = new Map<number, JsonObject>();
  const head = `${prefix}.`;
  for (const [k, v] of Object.entries(a)) {
    if (!k.startsWith(head)) continue;
    const m = /^(\d+)\.(.+)$/.exec(k.slice(head.length));
    if (!m) continue;
    const i = Number(m[1]);
    const o = out.get(i) ?? {};
    o[m[2] as string] = v;
    out.set(i, o);
  }
  return [...out.entries()].sort((x, y) => x[0] - y[0]).map(([, o]) => o);
}

export function put(out: JsonObject, k: string, v: Json | undefined): void {
  if (v !== undefined && v !== null && v !== '' && !(Array.isArray(v) && v.length === 0)) out[k] = v;
}

/** The tool calls a model asked for, as [{id, name}], from GenAI output messages. */
export function genaiToolCalls(messages: Json | undefined): JsonObject[] {
  // Parsing a model call's messages is most of this reading's cost: only when they hold a tool call.
  if (typeof messages === 'string' && !messages.includes('"tool_call"')) return [];
  const calls: JsonObject[] = [];
  for (const m of asArray(parsed(messages))) {
    for (const p of asArray(obj(m)?.parts)) {
      const part = obj(p);
      if (part?.type === 'tool_call') calls.push({ ...(str(part.id) ? { id: str(part.id) as string } : {}), ...(str(part.name) ? { name: str(part.name) as string } : {}) });
    }
  }
  return calls;
}

/** The tool results a model call was given, as [{id}], from GenAI input messages (tool_call_response parts). */
export function genaiToolResults(messages: Json | undefined): JsonObject[] {
  if (typeof messages === 'string' && !messages.includes('"tool_call_response"')) return [];
  const ids: JsonObject[] = [];
  for (const m of asArray(parsed(messages)))
    for (const p of asArray(obj(m)?.parts)) {
      const part = obj(p);
      if (part?.type === 'tool_call_response' && str(part.id) !== null) ids.push({ id: str(part.id) as string });
    }
  return ids;
}

/** A retrieved document's {id, score?, as_of?, source?}: as_of from its metadata's as_of, updated_at, last_modified, timestamp or fetched_at. */
function document(id: Json | undefined, score: Json | undefined, meta: JsonObject | null): JsonObject {
  const out: JsonObject = {};
  put(out, 'id', str(id));
  put(out, 'score', num(score) ?? (typeof score === 'number' ? score : undefined));
  put(out, 'as_of', meta ? str(meta.as_of ?? meta.updated_at ?? meta.last_modified ?? meta.timestamp ?? meta.fetched_at) : null);
  put(out, 'source', meta ? str(meta.source ?? meta.source_id) : null);
  return out;
}

/** Documents retrieved, each {id, score?, as_of?}, from OpenInference's flattened documents. */
export function documents(a: JsonObject, prefix: string): JsonObject[] {
  return indexed(a, prefix).map((d) => document(d['document.id'], d['document.score'], obj(parsed(d['document.metadata']) as Json)));
}

/**
 * Documents retrieved, from a LlamaIndex.TS retriever's answer as Traceloop records it (the
 * retrieve span's `traceloop.entity.output`: `[{node: {id_, metadata, relationships}, score}]`):
 * each chunk's id, its score, its metadata's time, and the document it was cut from
 * (`relationships.SOURCE.nodeId`) as `document_id`.
 */
export function llamaIndexNodes(output: Json | undefined): JsonObject[] {
  return asArray(output).flatMap((n) => {
    const node = obj(obj(n)?.node);
    if (node === null) return [];
    const d = document(node.id_, obj(n)?.score, obj(node.metadata));
    put(d, 'document_id', str(obj(obj(node.relationships)?.SOURCE)?.nodeId));
    return [d];
  });
}

/** The oldest as_of of the documents: the age of what the step relied on (the staleness check reads data.as_of). */
export function oldest(docs: JsonObject[]): string | null {
  let best: { t: number; s: string } | null = null;
  for (const d of docs) {
    const s = str(d.as_of);
    const t = s === null ? Number.NaN : Date.parse(s);
    if (s !== null && Number.isFinite(t) && (best === null || t < best.t)) best = { t, s };
  }
  return best?.s ?? null;
}
