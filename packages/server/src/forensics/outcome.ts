// The outcome of a trace, read from its events before anything is blamed: the root cause is
// looked for only behind a bad outcome (rootcause.ts). Pure; docs/forensics.md lists the rules.
import { deniedSubject, isDecisionLike } from './derivation.js';
import type { StalenessFinding } from './staleness.js';
import { isDenial, isFailedApprovalCheck, isGate, str, toolOf, toolSuccessBetween, type Trace, type TraceEvent, verdictOf } from './trace.js';

export type OutcomeKind =
  /** An entry of the trace fails verification: nothing it records can be trusted. */
  | 'tampered'
  /** Something ran although a policy denied it, with no approval in between. */
  | 'policy_violated'
  /** A human reviewer rejected a decision, and no later review approved the rework. */
  | 'rejected'
  /** The run reported failure, or ended on a tool failure it never recovered from. */
  | 'failed'
  /** A policy denied what the run tried, nothing approved an alternative, and the run did not complete. */
  | 'denied'
  /** A decision or action used context past its declared max age: the freshness control was bypassed. */
  | 'acted_on_stale_context'
  /** None of the above. */
  | 'completed';

export interface Outcome {
  kind: OutcomeKind;
  bad: boolean;
  /** The event that shows the outcome (the rejection, the failure, the forbidden action…); none for a good run without a completion event. */
  event: TraceEvent | undefined;
  /** For an execution whose approval check failed: the approval.checked entry that says so. */
  check?: TraceEvent;
  description: string;
}

const COMPLETED = new Set(['agent.completed', 'run.completed', 'agent.finished']);
const FAILED_STATUS = new Set(['failed', 'failure', 'error', 'aborted', 'abandoned', 'cancelled', 'canceled', 'timeout']);
const CONSENT = new Set(['consent.obtained', 'consent.granted']);

const completion = (e: TraceEvent): 'succeeded' | 'failed' | null => {
  if (e.event_type === 'agent.failed' || e.event_type === 'run.failed') return 'failed';
  if (!COMPLETED.has(e.event_type)) return null;
  const status = (str(e.data.status) ?? str(e.data.outcome) ?? 'succeeded').toLowerCase();
  return FAILED_STATUS.has(status) ? 'failed' : 'succeeded';
};

/** The action and the tool an event is about (either may be absent), to recognize the same thing running later. */
const subjectsOf = (e: TraceEvent): string[] => [str(e.data.action), toolOf(e)].filter((s): s is string => s !== null);

/**
 * Whether `x` does what `subject` asked for: the same action or the same tool. Either counts: a
 * denied `tool.called` of tool T (no action) and a later `action.executed` of action A through tool
 * T is the denied request run anyway (once called clean at confidence 0.95 because only the
 * action was compared).
 */
const sameThing = (x: TraceEvent, subject: TraceEvent) => {
  const wanted = subjectsOf(subject);
  return subjectsOf(x).some((s) => wanted.includes(s));
};



/**
 * Whether the denial was lifted before `until` (an index into the trace): a human approved it
 * (a `hitl.approved`, an escalation approved), consent was obtained, or the same policy later
 * allowed it.
 */
export function liftedBefore(trace: Trace, denial: TraceEvent, until: number): TraceEvent | undefined {
  const policy = str(denial.data.policy_id);
  const from = trace.events.indexOf(denial);
  for (let i = from + 1; i < until; i++) {
    const x = trace.events[i] as TraceEvent;
    if (x.event_type === 'hitl.approved' || CONSENT.has(x.event_type)) return x;
    // An approval of the governance layer, once final (every approver a critical request needs).
    if (x.event_type === 'approval.approved' && x.data.final === true) return x;
    if (x.event_type === 'policy.evaluated' && verdictOf(x) === 'allow' && (policy === null || str(x.data.policy_id) === policy)) return x;
  }
  return undefined;
}

/** A denied action (or one a verdict required approval for) that ran anyway unlifted: the action, and the verdict it ignored. */
function violation(trace: Trace): { action: TraceEvent; denial: TraceEvent } | undefined {
  for (const [i, d] of trace.events.entries()) {
    if (!isGate(d)) continue;
    // What was denied: the request it answered, or else what the evaluation itself says it governs (its action or tool).
    const subject = deniedSubject(trace, d, i) ?? (subjectsOf(d).length > 0 ? d : undefined);
    for (let j = i + 1; j < trace.events.length; j++) {
      const x = trace.events[j] as TraceEvent;
      if ((x.event_type !== 'action.executed' && x.event_type !== 'tool.called') || subject === undefined) continue;
      // The denied request itself, run: an action it caused directly, or one doing the same action
      // or going through the same tool, however it was reached (an LLM step caused by the denial
      // that decides to go ahead). Anything else the denial led to is a response to it (rerunning
      // the tests a deploy gate wanted, a notification), not a violation: following causation
      // alone would call those violations too (measured on the corpus).
      const run = (x.parent_event_id !== null && trace.byRef.get(x.parent_event_id) === subject) || sameThing(x, subject);
      if (run && !liftedBefore(trace, d, j)) return { action: x, denial: d };
    }
  }
  return undefined;
}

/** A tool failure with no later success of the same tool anywhere in the trace. */
export function unrecoveredFailures(trace: Trace): TraceEvent[] {
  const out: TraceEvent[] = [];
  for (const [i, f] of trace.events.entries()) {
    if (f.event_type !== 'tool.failed') continue;
    const tool = toolOf(f);
    if (!toolSuccessBetween(trace, tool, i + 1)) out.push(f);
  }
  return out;
}

export function outcomeOf(trace: Trace, staleness: StalenessFinding[]): Outcome {
  const ev = trace.events;
  const invalid = ev.filter((e) => e.integrity === 'invalid').sort((a, b) => a.seq - b.seq);
  if (invalid[0]) return { kind: 'tampered', bad: true, event: invalid[0], description: `${invalid.length} of the trace's entries fail verification` };

  // An execution whose approval check failed (changed arguments, not approved, expired, used up, unknown).
  const failed = ev.find(isFailedApprovalCheck);
  if (failed) {
    const run = (failed.parent_event_id !== null ? trace.byRef.get(failed.parent_event_id) : undefined) ?? failed;
    return { kind: 'policy_violated', bad: true, event: run, check: failed, description: `${label(run)} ran under approval ${str(failed.data.approval_id)}, whose check says ${str(failed.data.result)}${str(failed.data.detail) ? ` (${str(failed.data.detail)})` : ''}` };
  }

  const v = violation(trace);
  if (v) return { kind: 'policy_violated', bad: true, event: v.action, description: `${label(v.action)} ran although ${label(v.denial)} ${isDenial(v.denial) ? 'denied it' : `required an approval (verdict ${verdictOf(v.denial) ?? '?'}) and none was given`}` };

  const lastReview = [...ev].reverse().find((e) => e.event_type === 'hitl.rejected' || e.event_type === 'hitl.approved');
  if (lastReview?.event_type === 'hitl.rejected') return { kind: 'rejected', bad: true, event: lastReview, description: `reviewer ${quoted(str(lastReview.data.reviewer))} rejected the decision` };

  const lastCompletion = [...ev].reverse().find((e) => completion(e) !== null);
  if (lastCompletion && completion(lastCompletion) === 'failed') return { kind: 'failed', bad: true, event: lastCompletion, description: `the run reported failure (${label(lastCompletion)})` };
  const completedAt = lastCompletion ? ev.indexOf(lastCompletion) : -1;
  const stranded = unrecoveredFailures(trace).filter((f) => ev.indexOf(f) > completedAt);
  if (stranded.length > 0) {
    const f = stranded[stranded.length - 1] as TraceEvent;
    return { kind: 'failed', bad: true, event: f, description: `tool ${quoted(toolOf(f))} failed and the run never recovered or completed` };
  }

  // A denial that stands, after which the run neither completed nor did anything else: it stopped there.
  const standing = ev.filter((d, i) => isDenial(d) && !liftedBefore(trace, d, ev.length) && completedAt < i && !ev.slice(i + 1).some(isDecisionLike));
  if (standing.length > 0) {
    const d = standing[standing.length - 1] as TraceEvent;
    return { kind: 'denied', bad: true, event: d, description: `${label(d)} denied what the run tried, nothing approved an alternative, and the run did not complete` };
  }

  const stale = staleness.find((f) => f.staleness === 'stale' || f.staleness === 'critical');
  if (stale) {
    const user = trace.byRef.get(stale.used_by_log_id) as TraceEvent;
    return { kind: 'acted_on_stale_context', bad: true, event: user, description: `${label(user)} used ${quoted(stale.source_id)} past its max age` };
  }
  return { kind: 'completed', bad: false, event: lastCompletion, description: lastCompletion ? 'the run completed' : 'nothing in the trace went wrong' };
}

export const quoted = (s: string | null) => (s === null ? '(unnamed)' : `"${s}"`);

/** How an event is named in a sentence: "decision 3f0b… (seq 12)", "tool.failed "crm" (seq 4)". */
export function label(e: TraceEvent): string {
  const decision = e.event_type === 'decision.made' ? str(e.data.decision_id) : null;
  if (decision) return `decision ${decision} (seq ${e.seq})`;
  const subject = isDecisionLike(e) ? (str(e.data.action) ?? toolOf(e)) : isGate(e) ? str(e.data.policy_id) : (toolOf(e) ?? str(e.data.source_id) ?? str(e.data.reviewer));
  const what = isGate(e) ? `policy ${quoted(subject)}` : `${e.event_type}${subject ? ` ${quoted(subject)}` : ''}`;
  return `${what} (seq ${e.seq})`;
}
