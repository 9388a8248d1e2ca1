// Root cause, outcome first (docs/forensics.md): read the trace's outcome (outcome.ts); on a good
// outcome, report the anomalies as findings and no cause; on a bad one, walk back from the
// outcome along what each event depends on (derivation.ts) to the earliest anomaly on its
// ancestry, judging each anomaly when the decision that depended on it was made. The evidence is
// the path from the cause to the outcome; the confidence comes from that path. Pure and
// deterministic: the same session always gives the same answer.
import { type Dependencies, dependencies, isDecisionLike } from './derivation.js';
import { type Anomaly, cap, clamp, denialAnomaly, type Finding, type PathStep, type RootCause, type RootCauseType, type Severity, sentence, staleAnomaly, toolAnomalies, unquote } from './anomalies.js';
import { label, liftedBefore, type Outcome, outcomeOf, quoted } from './outcome.js';
import { assessStaleness, type MaxAgeDefaults } from './staleness.js';
import { eventTimeMs, isDenial, isGate, requiresApproval, str, toolOf, toolSuccessBetween, type Trace, type TraceEvent } from './trace.js';
import type { CausalGraph } from './graph.js';


export type { Candidate, Finding, PathStep, RootCause, RootCauseType, Role, Severity } from './anomalies.js';

interface Link {
  /** The next event toward the outcome. */
  next: TraceEvent | undefined;
  weak: boolean;
}

/** Everything the outcome depends on, with the next step toward it; strong links first, then weak ones. */
function ancestry(o: TraceEvent, deps: Dependencies): Map<TraceEvent, Link> {
  const seen = new Map<TraceEvent, Link>([[o, { next: undefined, weak: false }]]);
  for (const allowWeak of [false, true]) {
    const queue = [...seen.keys()];
    for (let head = 0; head < queue.length; head++) {
      const e = queue[head] as TraceEvent;
      const weakHere = (seen.get(e) as Link).weak;
      for (const d of deps.of.get(e.log_id) ?? []) {
        if (seen.has(d.on) || (d.weak && !allowWeak)) continue;
        seen.set(d.on, { next: e, weak: weakHere || d.weak });
        queue.push(d.on);
      }
    }
  }
  return seen;
}

/** From an event on the ancestry to the outcome, following `next`. */
function pathTo(start: TraceEvent, links: Map<TraceEvent, Link>): TraceEvent[] {
  const path: TraceEvent[] = [];
  for (let e: TraceEvent | undefined = start; e && !path.includes(e); e = links.get(e)?.next) path.push(e);
  return path;
}

/** Whether a tool's failure was recovered (a success of the same tool) after it and before `by`. */
function recoveredBefore(trace: Trace, a: Anomaly, by: TraceEvent): boolean {
  const tool = toolOf(a.at);
  const from = trace.events.indexOf(a.at);
  const until = trace.events.indexOf(by);
  return toolSuccessBetween(trace, tool, from + 1, until) !== undefined;
}

interface Placed {
  a: Anomaly;
  /** cause → … → outcome. */
  path: TraceEvent[];
  weak: boolean;
  decision: TraceEvent | undefined;
}

/** The anomaly on the outcome's ancestry, placed on its path, or undefined when it is not there or had no effect by then. */
function place(trace: Trace, a: Anomaly, links: Map<TraceEvent, Link>, outcome: Outcome): Placed | undefined {
  const link = links.get(a.at);
  if (!link) return undefined;
  const tail = pathTo(a.at, links);
  const decision = tail.find(isDecisionLike);
  if (a.type === 'TOOL_ERROR' && recoveredBefore(trace, a, decision ?? (outcome.event as TraceEvent))) return undefined;
  if (a.type === 'POLICY_DENIAL' && liftedBefore(trace, a.at, trace.events.indexOf(outcome.event as TraceEvent) + 1)) return undefined;
  return { a, path: [...(a.before ?? []), ...a.cause, ...a.via, ...tail.filter((e) => !a.cause.includes(e))], weak: link.weak, decision };
}

function confidence(p: Placed, competing: number, outcome: Outcome): number {
  const base: Record<RootCauseType, number> = { STALE_CONTEXT: 0.6 + 0.3 * p.a.severity, TOOL_ERROR: 0.8, POLICY_DENIAL: 0.9, POLICY_VIOLATION: 0.95, HUMAN_REJECTION: 0.6, AGENT_FAILURE: 0.5, INTEGRITY_FAILURE: 1, NONE: 0 };
  let c = base[p.a.type];
  if (p.a.type === 'INTEGRITY_FAILURE') return 1;
  c -= Math.min(0.1, 0.02 * Math.max(0, p.path.length - 4));
  if (p.weak) c -= 0.2;
  c -= Math.min(0.2, 0.1 * competing);
  const reason = outcome.kind === 'rejected' ? `${str(outcome.event?.data.rejection_reason) ?? ''} ${str(outcome.event?.data.reason) ?? ''}`.toLowerCase() : '';
  if (reason && p.a.names.some((n) => n.length > 2 && reason.includes(n.toLowerCase().replace(/_/g, ' ')))) c += 0.05;
  return clamp(c);
}

function outcomeSentence(o: Outcome): string {
  const e = o.event;
  switch (o.kind) {
    case 'rejected': {
      const reason = str(e?.data.rejection_reason) ?? str(e?.data.reason);
      return `Reviewer ${quoted(str(e?.data.reviewer ?? null))} then rejected it${reason ? `: "${unquote(reason)}"` : ''}.`;
    }
    case 'failed':
      return `The run then failed (${e ? label(e) : 'no completion'}).`;
    case 'denied':
      return `The run stopped there: nothing approved an alternative.`;
    case 'policy_violated':
      return ''; // the cause's sentence says it
    case 'acted_on_stale_context':
      return 'The run went ahead on it.';
    default:
      return '';
  }
}

function steps(p: Placed, outcomeEvent: TraceEvent | undefined): PathStep[] {
  const seen = new Set<TraceEvent>();
  return p.path.filter((e) => !seen.has(e) && seen.add(e)).map((e) => ({
    log_id: e.log_id,
    seq: e.seq,
    event_type: e.event_type,
    role: p.a.cause.includes(e) ? 'cause' : e === outcomeEvent ? 'outcome' : isDecisionLike(e) ? 'decision' : 'propagation',
  }));
}

function fallbackFor(outcome: Outcome, trace: Trace, deps: Dependencies): Anomaly | undefined {
  const e = outcome.event as TraceEvent;
  if (outcome.kind === 'rejected') {
    return { type: 'HUMAN_REJECTION', cause: [e], via: [], at: e, severity: 0.5, what: `nothing ${reviewed(e, deps).map(label).join(' and ') || 'the rejected decision'} rests on was stale, failed or denied, so the reviewer's judgment is the only signal`, remedy: `Rework the decision against the reviewer's reason before resubmitting; if such rejections recur, add that check to the agent so it is caught before review.`, names: [] };
  }
  if (outcome.kind === 'failed') {
    return { type: 'AGENT_FAILURE', cause: [e], via: [], at: e, severity: 0.5, what: `the run reported failure${str(e.data.error) ? ` (${unquote(str(e.data.error) as string)})` : ''} and nothing before it explains why`, remedy: 'Record what failed (tool.failed with the tool and error, or the error in the failure event) so the next failure can be traced; check the agent logs for this run.', names: [] };
  }
  if (outcome.kind === 'policy_violated' && outcome.check) return approvalViolation(trace, e, outcome.check);
  if (outcome.kind === 'policy_violated') {
    const d = [...trace.events].reverse().find((x) => isGate(x) && eventTimeMs(x) <= eventTimeMs(e)) as TraceEvent;
    if (requiresApproval(d)) {
      const a = denialAnomaly(trace, d, `required an approval (verdict ${str(d.data.verdict) ?? str(d.data.result)}) for`);
      return { ...a, type: 'POLICY_VIOLATION', cause: [d], at: e, severity: 1, what: `${label(e)} ran although ${a.what}, and no approval was given in between`, remedy: `Make the agent wait for the approval policy ${quoted(str(d.data.policy_id))} asks for (POST /approvals, then the execution naming approval_id), and review what ${label(e)} did.` };
    }
    const a = denialAnomaly(trace, d);
    return { ...a, type: 'POLICY_VIOLATION', cause: [d], at: e, severity: 1, what: `${label(e)} ran although ${a.what}, with no approval in between`, remedy: `Stop the agent from acting on denied requests: enforce policy ${quoted(str(d.data.policy_id))} in the action path itself, and review what ${label(e)} did.` };
  }
  return undefined;
}

/**
 * An execution whose approval check failed: the cause is the check, shown after the approval it
 * names (its request, which names the policy version, and its decisions), so the evidence path
 * runs request → approvals → execution → check.
 */
function approvalViolation(trace: Trace, run: TraceEvent, check: TraceEvent): Anomaly {
  const id = str(check.data.approval_id);
  const result = str(check.data.result) ?? 'unknown';
  const steps = trace.events.filter((x) => x !== check && x.event_type.startsWith('approval.') && x.event_type !== 'approval.checked' && str(x.data.approval_id) === id && eventTimeMs(x) <= eventTimeMs(run));
  const request = steps.find((x) => x.event_type === 'approval.requested');
  const policy = request?.data.policy as { policy_id?: unknown; version?: unknown } | null | undefined;
  const under = policy && typeof policy.policy_id === 'string' ? ` under policy "${policy.policy_id}"${typeof policy.version === 'number' ? ` version ${policy.version}` : ''}` : '';
  const detail = str(check.data.detail);
  const why: Record<string, string> = {
    mismatch: 'what ran is not what was approved',
    not_approved: 'the approval was not (yet) given',
    expired: 'the approval had expired',
    consumed: 'the approval was already used up',
    unknown: 'no such approval exists',
  };
  return {
    type: 'POLICY_VIOLATION',
    before: steps,
    cause: [check],
    via: [],
    at: run,
    severity: 1,
    what: `${label(run)} ran under approval ${id ?? '(unnamed)'}${under}, but ${why[result] ?? `its check says ${result}`}${detail ? ` (${detail})` : ''}`,
    remedy: `Make the agent gate the action on the approval (POST /api/v1/approvals/${id ?? '{id}'}/check, or the SDK's guarded()) with exactly the approved arguments, and review what ${label(run)} did.`,
    names: [id ?? '', 'approval'],
  };
}

/**
 * Decisions made while the approval they asked for was still pending: informational (the
 * decision may have waited for it in the agent), but a control an auditor wants to see.
 */
function decidedWhilePending(trace: Trace): Finding[] {
  const out: Finding[] = [];
  for (const [i, r] of trace.events.entries()) {
    if (r.event_type !== 'approval.requested' || str(r.data.decision_id) === null) continue;
    const id = str(r.data.approval_id);
    const end = trace.events.findIndex((x, j) => j > i && str(x.data.approval_id) === id && ((x.event_type === 'approval.approved' && x.data.final === true) || x.event_type === 'approval.rejected' || x.event_type === 'approval.expired'));
    for (let j = i + 1; j < (end === -1 ? trace.events.length : end); j++) {
      const d = trace.events[j] as TraceEvent;
      if (d.event_type === 'decision.made' && str(d.data.decision_id) === str(r.data.decision_id)) {
        out.push({ type: 'POLICY_VIOLATION', severity: 'medium', description: sentence(`${cap(label(d))} was made while approval ${id} it asked for was still pending${end === -1 ? ' (it was never decided in this trace)' : ''}`), evidence: [r.log_id, d.log_id] });
      }
    }
  }
  return out;
}

/**
 * The root cause, and what erasure hid from it: an erased event takes part by its skeleton alone
 * (type, times, links), so what its content said cannot be judged. The answer names every erased
 * event (an ERASED finding), lowers its confidence by the share erased, and never calls a run
 * clean that it can no longer see whole.
 */
export function rootCause(trace: Trace, defaults: MaxAgeDefaults, traceId: string, graph?: CausalGraph): RootCause {
  const rc = analyse(trace, defaults, traceId, graph);
  const erased = trace.events.filter((e) => e.erased);
  if (erased.length === 0 || rc.root_cause_type === 'INTEGRITY_FAILURE') return rc;
  const share = erased.length / trace.events.length;
  const seqs = erased.slice(0, 10).map((e) => e.seq).join(', ') + (erased.length > 10 ? ', …' : '');
  const what = `${erased.length} of the ${trace.events.length} events of this trace had their content erased (seq ${seqs}); the analysis sees their type, times and links, not what they held`;
  const finding: Finding = { type: 'ERASED', severity: 'medium', description: sentence(what), evidence: erased.map((e) => e.log_id) };
  if (rc.root_cause_type === 'NONE') {
    return {
      ...rc,
      description: `No failure is visible in what remains of the run (${trace.events.length} events of trace ${traceId}), but ${what}: a clean run cannot be claimed.`,
      confidence: clamp(Math.min(rc.confidence, 0.5) * (1 - share)),
      remediation: 'Nothing can be remediated from what remains. If the erased events matter, look for what they held in the systems they came from (an erasure removes it here by law or policy).',
      findings: [finding, ...rc.findings],
    };
  }
  return { ...rc, description: `${rc.description} Note: ${what}.`, confidence: clamp(rc.confidence * (1 - share / 2)), findings: [finding, ...rc.findings] };
}

function analyse(trace: Trace, defaults: MaxAgeDefaults, traceId: string, graph?: CausalGraph): RootCause {
  const deps = dependencies(trace);
  const staleness = assessStaleness(trace, defaults, deps).findings;
  const outcome = outcomeOf(trace, staleness);
  const outcomeView = { kind: outcome.kind, bad: outcome.bad, log_id: outcome.event?.log_id ?? null, description: outcome.description };

  if (outcome.kind === 'tampered') return integrity(trace, outcomeView);

  const anomalies: Anomaly[] = [
    ...staleness.filter((f) => f.staleness === 'stale' || f.staleness === 'critical').map((f) => staleAnomaly(trace, f)),
    ...toolAnomalies(trace),
    ...trace.events.filter(isDenial).map((d) => denialAnomaly(trace, d)),
  ];
  const graphFindings: Finding[] = [
    ...decidedWhilePending(trace),
    ...(graph
    ? [
        ...graph.cycles.map((c): Finding => ({ type: 'GRAPH', severity: 'low', description: `Causal links loop among ${c.length} events; the loop is not followed.`, evidence: c })),
        ...graph.dangling.map((d): Finding => ({ type: 'GRAPH', severity: 'low', description: `${d.field} of seq ${trace.byRef.get(d.log_id)?.seq ?? '?'} names "${d.reference}", which is not in this trace.`, evidence: [d.log_id] })),
      ]
    : []),
  ];

  if (!outcome.bad || !outcome.event) {
    const findings = [...anomalies.map((a) => asFinding(trace, a)), ...graphFindings];
    const serious = findings.filter((f) => f.severity === 'medium' || f.severity === 'high').length;
    const completed = outcome.event !== undefined;
    return {
      detected: false,
      root_cause_type: 'NONE',
      description: `The run ${completed ? 'completed' : 'shows no failure'} (${trace.events.length} events of trace ${traceId}): no rejection, failure, standing denial, forbidden action or stale input at a decision${findings.length > 0 ? `; ${findings.length} informational finding${findings.length === 1 ? '' : 's'} (recovered or controlled) below` : ''}.`,
      confidence: clamp(0.9 + (completed ? 0.05 : 0) - Math.min(0.2, 0.05 * serious) - (graphFindings.length > 0 ? 0.1 : 0)),
      remediation: 'Nothing to remediate.',
      evidence: [],
      evidence_path: [],
      outcome: outcomeView,
      candidates: [],
      findings,
    };
  }

  const links = ancestry(outcome.event, deps);
  let placed = anomalies.map((a) => place(trace, a, links, outcome)).filter((p): p is Placed => p !== undefined);
  // A denial that ended the run, or was ignored, is the cause; other anomalies compete.
  const fixed = outcome.kind === 'denied' ? placed.find((p) => p.a.at === outcome.event) : undefined;
  const strong = placed.filter((p) => !p.weak);
  if (strong.length > 0) placed = [...strong, ...placed.filter((p) => p.weak)];
  const firstTime = (p: Placed) => eventTimeMs(p.a.cause[0] as TraceEvent);
  placed.sort((a, b) => Number(a.weak) - Number(b.weak) || firstTime(a) - firstTime(b) || (a.a.cause[0] as TraceEvent).seq - (b.a.cause[0] as TraceEvent).seq);
  let chosen = fixed ?? placed[0];
  const fb = fallbackFor(outcome, trace, deps);
  if (outcome.kind === 'policy_violated' && fb) chosen = { a: fb, path: [...(fb.before ?? []), ...fb.cause, outcome.event], weak: false, decision: undefined };
  if (!chosen && fb) chosen = { a: fb, path: fb.type === 'HUMAN_REJECTION' ? [...reviewed(outcome.event, deps), outcome.event] : [outcome.event], weak: false, decision: undefined };
  if (!chosen) {
    // A bad outcome with no anomaly behind it (a stale use that is its own outcome is always placed).
    chosen = { a: fallbackFor({ ...outcome, kind: 'failed' }, trace, deps) as Anomaly, path: [outcome.event], weak: false, decision: undefined };
  }
  const others = placed.filter((p) => p !== chosen);
  const competing = others.filter((p) => !p.weak).length;
  const path = steps(chosen, outcome.event);
  const what = chosen.a.type === 'TOOL_ERROR' ? `${chosen.a.what}${toolPath(trace, chosen)}` : chosen.a.what;
  const description = `${sentence(cap(what))} ${outcomeSentence(outcome)}`.trim();
  const candidates = others.map((p) => ({ root_cause_type: p.a.type, description: sentence(cap(p.a.what)), confidence: confidence(p, competing, outcome), remediation: p.a.remedy, evidence: steps(p, outcome.event).map((s) => s.log_id) }));
  candidates.sort((a, b) => b.confidence - a.confidence);
  const onPath = new Set(placed.map((p) => p.a));
  return {
    detected: true,
    root_cause_type: chosen.a.type,
    description,
    confidence: confidence(chosen, competing, outcome),
    remediation: chosen.a.remedy,
    evidence: path.map((s) => s.log_id),
    evidence_path: path,
    outcome: outcomeView,
    candidates,
    findings: [...anomalies.filter((a) => !onPath.has(a)).map((a) => asFinding(trace, a)), ...graphFindings],
  };
}

/** For a tool error: the decision it reached, what stood in for the tool, and when the tool came back. */
function toolPath(trace: Trace, p: Placed): string {
  const d = p.decision;
  if (!d) return '';
  const at = trace.events.indexOf(d);
  const instead = p.path.filter((e) => !p.a.cause.includes(e) && e !== d && trace.events.indexOf(e) < at);
  const tool = toolOf(p.a.at);
  const back = toolSuccessBetween(trace, tool, at + 1);
  return ` and had not recovered when ${label(d)} was made${instead.length > 0 ? ` on ${instead.map(label).join(' and ')} instead` : ''}${back ? `; it came back at seq ${back.seq}, after the decision` : ''}`;
}

/** The decision a review reviews (for a rejection's path). */
function reviewed(review: TraceEvent, deps: Dependencies): TraceEvent[] {
  return (deps.of.get(review.log_id) ?? []).filter((d) => d.kind === 'reviews').map((d) => d.on);
}

function asFinding(trace: Trace, a: Anomaly): Finding {
  let severity: Severity = a.severity >= 0.8 ? 'high' : 'medium';
  let note = '';
  if (a.type === 'TOOL_ERROR') {
    const recovered = toolSuccessBetween(trace, toolOf(a.at), trace.events.indexOf(a.at) + 1);
    severity = recovered ? 'low' : 'medium';
    if (recovered) note = `; recovered at seq ${recovered.seq}`;
  }
  if (a.type === 'POLICY_DENIAL') {
    const lifted = liftedBefore(trace, a.at, trace.events.length);
    severity = lifted ? 'info' : 'low';
    note = lifted ? `; the control worked: ${label(lifted)} approved an alternative` : '; the run went on without it';
  }
  return { type: a.type, severity, description: sentence(`${cap(a.what)}${note}`), evidence: [...a.cause, ...a.via, ...(a.at !== a.cause[0] ? [a.at] : [])].map((e) => e.log_id) };
}

function integrity(trace: Trace, outcome: RootCause['outcome']): RootCause {
  const bad = trace.events.filter((e) => e.integrity === 'invalid').sort((a, b) => a.seq - b.seq);
  const list = bad.slice(0, 5).map((e) => `seq ${e.seq} (${e.integrity_problems.join('; ')})`).join(', ');
  return {
    detected: true,
    root_cause_type: 'INTEGRITY_FAILURE',
    description: `${bad.length} ${bad.length === 1 ? 'entry of this trace fails' : 'entries of this trace fail'} verification: ${list}${bad.length > 5 ? ', …' : ''}. The recorded history cannot be trusted, so no other finding can be either.`,
    confidence: 1,
    remediation: `Treat this trace as tampered: run a full verification (POST /api/v1/integrity/verify), compare the entries at seq ${bad.map((e) => e.seq).slice(0, 5).join(', ')} with an evidence bundle or backup taken earlier, and find who had write access to the database.`,
    evidence: bad.map((e) => e.log_id),
    evidence_path: bad.map((e) => ({ log_id: e.log_id, seq: e.seq, event_type: e.event_type, role: 'cause' })),
    outcome,
    candidates: [],
    findings: [],
  };
}

