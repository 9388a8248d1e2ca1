// The labelled forensics corpus (docs/forensics.md, "The corpus"): loading its traces, sending
// each through the API exactly as a client would, and scoring the answers. Used by the CI suite
// (test/forensics-corpus.test.ts, both stores) and by `npm run forensics:eval`.
//
// A trace file is JSON:
//   { "domain", "reasoning": "why the label is right, in a sentence",
//     "label": { "root_cause_type", "evidence": [event ids a good answer must cite] },
//     "start": ISO time (default 2026-03-01T09:00:00Z),
//     "events": [ { "id", "t": seconds from start, "type", "data", "parent", "span", "parent_span",
//                   "root", "causality", "agent", "source" }
//               | { "repeat": n, "every": seconds, "from": seconds, "events": [templates with {i}] } ],
//     "reject": { "reviewer", "rejection_reason", "decision_id", "t"? }   sent through POST /hitl/reject
//     "tamper": { "event": id, "data": {...} }                             changed in the database afterwards
//     "send_order": "reverse" | "shuffle"                                  arrival order (timestamps unchanged) }
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { TestApp } from '../helpers/app.js';

export const CORPUS_DIR = import.meta.dirname;

export interface LabelledTrace {
  file: string;
  domain: string;
  reasoning: string;
  label: { root_cause_type: string; evidence: string[] };
  start?: string;
  events: Array<TemplateEvent | Repeat>;
  reject?: { reviewer: string; rejection_reason: string; decision_id: string };
  tamper?: { event: string; data: Record<string, unknown> };
  send_order?: 'reverse' | 'shuffle';
}

interface TemplateEvent {
  id: string;
  t: number;
  type: string;
  data?: Record<string, unknown>;
  parent?: string;
  span?: string;
  parent_span?: string;
  root?: string;
  causality?: string;
  agent?: string;
  source?: string;
}

interface Repeat {
  repeat: number;
  every: number;
  from: number;
  events: TemplateEvent[];
}

export function loadCorpus(dir = CORPUS_DIR): LabelledTrace[] {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => ({ file, ...(JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as Omit<LabelledTrace, 'file'>) }));
}

/** Replaces {i} and {i-1} in every string of a template. */
function fill<T>(v: T, i: number): T {
  if (typeof v === 'string') return v.replaceAll('{i}', String(i)).replaceAll('{i-1}', String(i - 1)) as T;
  if (Array.isArray(v)) return v.map((x) => fill(x, i)) as T;
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fill(x, i)])) as T;
  return v;
}

/** The trace's events as POST /logs/batch items, in the order they are sent. */
export function expand(trace: LabelledTrace, traceId: string): Array<Record<string, unknown>> {
  const start = Date.parse(trace.start ?? '2026-03-01T09:00:00.000Z');
  const flat: TemplateEvent[] = [];
  for (const e of trace.events) {
    if ('repeat' in e) {
      for (let i = 1; i <= e.repeat; i++) for (const tpl of e.events) flat.push({ ...fill(tpl, i), t: e.from + (i - 1) * e.every + tpl.t });
    } else flat.push(e);
  }
  const items = flat.map((e) => ({
    event_id: e.id,
    event_type: e.type,
    trace_id: traceId,
    timestamp: new Date(start + e.t * 1000).toISOString(),
    data: e.data ?? {},
    ...(e.parent ? { parent_event_id: e.parent } : {}),
    ...(e.span ? { span_id: e.span } : {}),
    ...(e.parent_span ? { parent_span_id: e.parent_span } : {}),
    ...(e.root ? { root_event_id: e.root } : {}),
    ...(e.causality ? { causality_type: e.causality } : {}),
    ...(e.agent ? { agent_id: e.agent } : {}),
    source: e.source ?? trace.domain.replace(/\s+/g, '-'),
  }));
  if (trace.send_order === 'reverse') items.reverse();
  if (trace.send_order === 'shuffle') {
    // A fixed permutation (seeded by the file name), so a run can be repeated.
    let seed = [...trace.file].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7);
    for (let i = items.length - 1; i > 0; i--) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      const j = seed % (i + 1);
      [items[i], items[j]] = [items[j] as (typeof items)[number], items[i] as (typeof items)[number]];
    }
  }
  return items;
}

export interface Answer {
  file: string;
  label: string;
  predicted: string;
  detected: boolean;
  confidence: number;
  correct: boolean;
  /** Of the labelled evidence, the fraction the answer cites (1 for a NONE label). */
  evidenceRecall: number;
  missing: string[];
  description: string;
}

/** Sends one trace through the API and asks for its root cause. */
export async function run(t: Pick<TestApp, 'inject' | 'store'>, key: string, companyId: string, trace: LabelledTrace): Promise<Answer> {
  const traceId = randomUUID();
  const headers = { 'x-api-key': key };
  const items = expand(trace, traceId);
  for (let i = 0; i < items.length; i += 1000) {
    const res = await t.inject({ method: 'POST', url: '/api/v1/logs/batch', headers, payload: { logs: items.slice(i, i + 1000) } });
    if (res.statusCode !== 200) throw new Error(`${trace.file}: batch refused: ${res.body}`);
  }
  const ids = new Map<string, string>();
  const rows = await t.store.db.selectFrom('log_entries').select(['log_id', 'event_id']).where('company_id', '=', companyId).where('trace_id', '=', traceId).execute();
  for (const r of rows) if (r.event_id) ids.set(r.event_id, r.log_id);
  if (trace.reject) {
    const res = await t.inject({ method: 'POST', url: '/api/v1/hitl/reject', headers, payload: trace.reject });
    if (res.statusCode !== 201 || res.json().trace_id !== traceId) throw new Error(`${trace.file}: rejection refused or not joined to the trace: ${res.body}`);
    ids.set('$rejection', res.json().log_id);
  }
  if (trace.tamper) {
    await t.store.db.updateTable('log_entries').set({ data: JSON.stringify(trace.tamper.data) }).where('company_id', '=', companyId).where('log_id', '=', ids.get(trace.tamper.event) as string).execute();
  }
  const session = await t.inject({ method: 'POST', url: '/api/v1/forensics/replays', headers, payload: { trace_id: traceId, metadata: { corpus: trace.file } } });
  if (session.statusCode !== 200) throw new Error(`${trace.file}: no session: ${session.body}`);
  const rc = (await t.inject({ method: 'GET', url: `/api/v1/forensics/replays/${session.json().id}/root-cause`, headers })).json();
  const cited = new Set<string>(rc.evidence as string[]);
  const missing = trace.label.evidence.filter((id) => !cited.has(ids.get(id) ?? `missing:${id}`));
  const labelType = trace.label.root_cause_type;
  return {
    file: trace.file,
    label: labelType,
    predicted: rc.root_cause_type,
    detected: rc.detected,
    confidence: rc.confidence,
    correct: rc.root_cause_type === labelType && rc.detected === (labelType !== 'NONE'),
    evidenceRecall: trace.label.evidence.length === 0 ? 1 : 1 - missing.length / trace.label.evidence.length,
    missing,
    description: rc.description,
  };
}

export interface Scores {
  traces: number;
  correct: number;
  accuracy: number;
  /** Mean evidence recall over traces with a labelled cause. */
  evidenceRecall: number;
  /** Clean traces (label NONE) reported with detected: true. */
  falsePositives: string[];
  cleanTraces: number;
  confusion: Map<string, Map<string, number>>;
  perType: Array<{ type: string; precision: number; recall: number; support: number }>;
  reliability: Array<{ bucket: string; answers: number; correct: number; fraction: number | null }>;
  brier: number;
  /** Whether every correct answer has a higher confidence than every wrong one. */
  separated: boolean;
}

export const BUCKETS: Array<[number, number]> = [
  [0, 0.5],
  [0.5, 0.7],
  [0.7, 0.85],
  [0.85, 1.0001],
];

export function score(answers: Answer[]): Scores {
  const types = [...new Set(answers.flatMap((a) => [a.label, a.predicted]))].sort();
  const confusion = new Map(types.map((l) => [l, new Map(types.map((p) => [p, 0]))]));
  for (const a of answers) {
    const row = confusion.get(a.label) as Map<string, number>;
    row.set(a.predicted, (row.get(a.predicted) ?? 0) + 1);
  }
  const perType = types.map((type) => {
    const tp = answers.filter((a) => a.label === type && a.predicted === type).length;
    const predicted = answers.filter((a) => a.predicted === type).length;
    const support = answers.filter((a) => a.label === type).length;
    return { type, precision: predicted === 0 ? 1 : tp / predicted, recall: support === 0 ? 1 : tp / support, support };
  });
  const withCause = answers.filter((a) => a.label !== 'NONE');
  const correct = answers.filter((a) => a.correct);
  const wrong = answers.filter((a) => !a.correct);
  return {
    traces: answers.length,
    correct: correct.length,
    accuracy: correct.length / answers.length,
    evidenceRecall: withCause.length === 0 ? 1 : withCause.reduce((s, a) => s + a.evidenceRecall, 0) / withCause.length,
    falsePositives: answers.filter((a) => a.label === 'NONE' && a.detected).map((a) => a.file),
    cleanTraces: answers.filter((a) => a.label === 'NONE').length,
    confusion,
    perType,
    reliability: BUCKETS.map(([lo, hi]) => {
      const inBucket = answers.filter((a) => a.confidence >= lo && a.confidence < hi);
      const ok = inBucket.filter((a) => a.correct).length;
      return { bucket: `${lo.toFixed(2)}–${Math.min(1, hi).toFixed(2)}`, answers: inBucket.length, correct: ok, fraction: inBucket.length === 0 ? null : ok / inBucket.length };
    }),
    brier: answers.reduce((s, a) => s + (a.confidence - (a.correct ? 1 : 0)) ** 2, 0) / answers.length,
    separated: wrong.length === 0 || Math.min(...correct.map((a) => a.confidence)) > Math.max(...wrong.map((a) => a.confidence)),
  };
}

/** The scores as the text `npm run forensics:eval` prints and docs/forensics.md quotes. */
export function report(s: Scores, answers: Answer[]): string {
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const types = [...s.confusion.keys()];
  const lines = [
    `traces: ${s.traces}; correct: ${s.correct} (${pct(s.accuracy)}); evidence recall: ${s.evidenceRecall.toFixed(3)}; false positives on ${s.cleanTraces} clean traces: ${s.falsePositives.length}; Brier score: ${s.brier.toFixed(4)}; correct answers all more confident than wrong ones: ${s.separated ? 'yes' : 'no'}`,
    '',
    'confusion matrix (rows: label, columns: answer)',
    `| label \\ answer | ${types.join(' | ')} |`,
    `|---|${types.map(() => '---:').join('|')}|`,
    ...types.map((l) => `| ${l} | ${types.map((p) => String(s.confusion.get(l)?.get(p) ?? 0)).join(' | ')} |`),
    '',
    '| type | precision | recall | traces |',
    '|---|---:|---:|---:|',
    ...s.perType.map((p) => `| ${p.type} | ${p.precision.toFixed(2)} | ${p.recall.toFixed(2)} | ${p.support} |`),
    '',
    '| confidence | answers | correct | fraction correct |',
    '|---|---:|---:|---:|',
    ...s.reliability.map((r) => `| ${r.bucket} | ${r.answers} | ${r.correct} | ${r.fraction === null ? '–' : r.fraction.toFixed(2)} |`),
  ];
  const wrong = answers.filter((a) => !a.correct || a.evidenceRecall < 1);
  if (wrong.length > 0) {
    lines.push('', 'not right, or missing evidence:');
    for (const a of wrong) lines.push(`- ${a.file}: label ${a.label}, answer ${a.predicted} (${a.confidence})${a.missing.length ? `, missing ${a.missing.join(', ')}` : ''}: ${a.description}`);
  }
  return lines.join('\n');
}
