// Root cause: deterministic rules over a session's events, each documented with its
// confidence formula in docs/forensics.md. Every rule yields candidates; an integrity
// failure outranks everything (nothing else can be trusted), the rest rank by confidence,
// then by the earliest evidence.
import { assessStaleness, CRITICAL_FACTOR, type MaxAgeDefaults } from './staleness.js';
import { isDenial, str, type Trace, type TraceEvent } from './trace.js';

export type RootCauseType = 'STALE_CONTEXT' | 'POLICY_DENIAL' | 'TOOL_ERROR' | 'HUMAN_REJECTION' | 'INTEGRITY_FAILURE' | 'NONE';

export interface Candidate {
  root_cause_type: RootCauseType;
  description: string;
  confidence: number;
  remediation: string;
  /** The log_ids the finding rests on. */
  evidence: string[];
}

export interface RootCause extends Candidate {
  detected: boolean;
  /** The other findings, ranked. */
  candidates: Candidate[];
}

const round2 = (x: number) => Math.round(x * 100) / 100;
const quote = (s: string | null, fallback: string) => (s === null ? fallback : `"${s}"`);

function integrity(trace: Trace): Candidate[] {
  const bad = [...trace.events].filter((e) => e.integrity === 'invalid').sort((a, b) => a.seq - b.seq);
  if (bad.length === 0) return [];
  const list = bad.slice(0, 5).map((e) => `seq ${e.seq} (${e.integrity_problems.join('; ')})`).join(', ');
  return [
    {
      root_cause_type: 'INTEGRITY_FAILURE',
      description: `${bad.length} ${bad.length === 1 ? 'entry' : 'entries'} of this trace fail verification: ${list}${bad.length > 5 ? ', …' : ''}. The recorded history cannot be trusted, so no other finding can be either.`,
      confidence: 1,
      remediation: `Treat this trace as tampered: run a full verification (POST /api/v1/integrity/verify), compare the entries at seq ${bad.map((e) => e.seq).slice(0, 5).join(', ')} with an evidence bundle or backup taken earlier, and find who had write access to the database.`,
      evidence: bad.map((e) => e.log_id),
    },
  ];
}

function staleContext(trace: Trace, defaults: MaxAgeDefaults): Candidate[] {
  const worstBySource = new Map<string, { ratio: number; f: ReturnType<typeof assessStaleness>['findings'][number]; users: Set<string> }>();
  for (const f of assessStaleness(trace, defaults).findings) {
    if ((f.staleness !== 'stale' && f.staleness !== 'critical') || f.age_seconds === null || f.max_age_seconds === null) continue;
    const ratio = f.age_seconds / f.max_age_seconds;
    const seen = worstBySource.get(f.source_id);
    if (!seen || ratio > seen.ratio) worstBySource.set(f.source_id, { ratio, f, users: new Set([...(seen?.users ?? []), f.used_by_log_id]) });
    else seen.users.add(f.used_by_log_id);
  }
  return [...worstBySource.values()].map(({ ratio, f, users }) => {
    const user = trace.byRef.get(f.used_by_log_id) as TraceEvent;
    const what = user.event_type === 'decision.made' && str(user.data.decision_id) ? `decision ${str(user.data.decision_id)}` : `${user.event_type} (seq ${user.seq})`;
    const type = f.source_type ?? 'context';
    return {
      root_cause_type: 'STALE_CONTEXT',
      description: `${what[0]?.toUpperCase()}${what.slice(1)} used ${type} "${f.source_id}" that was ${f.age_seconds} s old, ${round2(ratio)}× its max age of ${f.max_age_seconds} s${ratio > CRITICAL_FACTOR ? ' (critical)' : ''}.`,
      confidence: round2(Math.min(0.95, 0.5 + 0.15 * ratio)),
      remediation: `Re-fetch "${f.source_id}" before acting on it: refuse ${type} data older than ${f.max_age_seconds} s at the point of use, and check why the feed was ${f.age_seconds} s behind.`,
      evidence: [f.context_log_id, ...users],
    };
  });
}

function policyDenials(trace: Trace): Candidate[] {
  return trace.events.filter(isDenial).map((e) => {
    const policy = str(e.data.policy_id);
    const reason = str(e.data.reason);
    const subject = e.parent_event_id !== null ? trace.byRef.get(e.parent_event_id) : undefined;
    const what = subject ? `${subject.event_type}${str(subject.data.action) ?? str(subject.data.tool) ? ` "${str(subject.data.action) ?? str(subject.data.tool)}"` : ''} (seq ${subject.seq})` : 'the request';
    return {
      root_cause_type: 'POLICY_DENIAL',
      description: `Policy ${quote(policy, '(unnamed)')} denied ${what}${reason ? `: ${reason}` : ''}.`,
      confidence: 0.85,
      remediation: `Check the request against policy ${quote(policy, '(unnamed)')}${reason ? ` ("${reason}")` : ''}: if the denial was right, change what the agent asks for; if not, fix the policy and have it re-evaluated.`,
      evidence: [e.log_id, ...(subject ? [subject.log_id] : [])],
    };
  });
}

function toolErrors(trace: Trace): Candidate[] {
  const byTool = new Map<string, TraceEvent[]>();
  for (const e of trace.events) if (e.event_type === 'tool.failed') byTool.set(str(e.data.tool) ?? '(unnamed tool)', [...(byTool.get(str(e.data.tool) ?? '(unnamed tool)') ?? []), e]);
  return [...byTool.entries()].map(([tool, failures]) => {
    const last = failures[failures.length - 1] as TraceEvent;
    const lastIndex = trace.events.indexOf(last);
    // Recovered: a later call of the same tool, or an action, that did not fail again.
    const retry = trace.events.slice(lastIndex + 1).find((x) => (x.event_type === 'tool.called' && str(x.data.tool) === tool) || (x.event_type === 'action.executed' && str(x.data.tool) === tool));
    const error = str(last.data.error) ?? 'no error given';
    const times = failures.length === 1 ? '' : ` (${failures.length} times)`;
    return {
      root_cause_type: 'TOOL_ERROR',
      description: retry
        ? `Tool "${tool}" failed${times}: ${error}; a later call (seq ${retry.seq}) succeeded, so the trace recovered.`
        : `Tool "${tool}" failed${times}: ${error}, and the trace did not recover.`,
      confidence: retry ? 0.35 : 0.8,
      remediation: retry
        ? `"${tool}" recovered on retry; if "${error}" recurs, raise its timeout or add backoff, and alert on repeated failures.`
        : `Restore or fix tool "${tool}" ("${error}"), then rerun the trace; add a retry with backoff if the failure is transient.`,
      evidence: [...failures.map((f) => f.log_id), ...(retry ? [retry.log_id] : [])],
    };
  });
}

function humanRejections(trace: Trace): Candidate[] {
  return trace.events
    .filter((e) => e.event_type === 'hitl.rejected')
    .map((e) => {
      const reviewer = str(e.data.reviewer);
      const decisionId = str(e.data.decision_id);
      const reason = str(e.data.rejection_reason) ?? str(e.data.reason);
      const decision = trace.events.find((x) => x.event_type === 'decision.made' && decisionId !== null && str(x.data.decision_id) === decisionId);
      return {
        root_cause_type: 'HUMAN_REJECTION' as const,
        description: `Reviewer ${quote(reviewer, '(unknown)')} rejected ${decisionId ? `decision ${decisionId}` : 'the outcome'}${reason ? `: ${reason}` : ''}.`,
        confidence: 0.75,
        remediation: `Rework ${decisionId ? `decision ${decisionId}` : 'the decision'} against the reviewer's reason${reason ? ` ("${reason}")` : ''} before resubmitting; if such rejections recur, add that check to the agent's policy so it is caught before review.`,
        evidence: [e.log_id, ...(decision ? [decision.log_id] : [])],
      };
    });
}

export function rootCause(trace: Trace, defaults: MaxAgeDefaults, traceId: string): RootCause {
  const firstSeq = (c: Candidate) => Math.min(...c.evidence.map((id) => trace.byRef.get(id)?.seq ?? Infinity));
  const ranked = [...staleContext(trace, defaults), ...policyDenials(trace), ...toolErrors(trace), ...humanRejections(trace)].sort(
    (a, b) => b.confidence - a.confidence || firstSeq(a) - firstSeq(b) || a.root_cause_type.localeCompare(b.root_cause_type),
  );
  const all = [...integrity(trace), ...ranked];
  const [top, ...rest] = all;
  if (!top) {
    return {
      detected: false,
      root_cause_type: 'NONE',
      description: `No rule matched the ${trace.events.length} events of trace ${traceId}: every entry verifies, and there is no stale context, policy denial, tool failure or human rejection.`,
      confidence: 0,
      remediation: 'Nothing to remediate.',
      evidence: [],
      candidates: [],
    };
  }
  return { detected: true, ...top, candidates: rest };
}
