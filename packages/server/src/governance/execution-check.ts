// The execution check: the binding between an approval and the action that ran (docs/governance.md, "Executions"): an
// `action.executed` or `tool.called` event whose data names `approval_id` is checked once it is
// committed: its arguments must hash to the approved arguments_hash, the approval must be
// approved, in its window, and have a use left (a request is single use unless granted with
// max_uses; a standing approval checks the arguments against its JSON Schema instead). The event
// is always stored as sent (the ledger never drops what happened, nor changes it); the check is
// recorded beside it as an `approval.checked` entry (its parent_event_id is the execution), and
// anything but `ok` fires `approval.violated`. A `policy.evaluated` event that names a policy
// version is checked against the register and marked when the version is unknown.
import type { JsonObject } from '@audit-ledger/core';
import type { EventSink } from '../kernel/events.js';
import { iso } from '../kernel/time.js';
import type { AppendedEvent } from '../ledger/appender/errors.js';
import type { PreparedEvent } from '../ledger/appender/types.js';
import type { ApprovalRow, CheckRow, GovernanceStore } from '../store/governance.js';
import { outsideConstraints } from './constraints.js';
import { canonicalHash } from './record.js';
import type { Trail } from '../ingestion/recorder.js';

export const EXECUTION_TYPES: ReadonlySet<string> = new Set(['action.executed', 'tool.called']);

export type ApprovalCheckResult = 'ok' | 'mismatch' | 'not_approved' | 'expired' | 'consumed' | 'unknown';
export type PolicyCheckResult = 'ok' | 'unknown_version' | 'unknown_policy';

export interface ApprovalCheck {
  result: ApprovalCheckResult;
  approval_id: string;
  /** What approved it, when ok: a request, or a standing approval. */
  basis: 'request' | 'standing' | null;
  detail: string | null;
  /** The approval.checked entry that records this check. */
  check_log_id: string | null;
}

export interface PolicyCheck {
  result: PolicyCheckResult;
  policy_id: string;
  version: number | null;
}

/** One execution's verdict, before its `approval.checked` entry is appended with the group's. */
interface Verdict {
  /** The execution's place in the group ingested. */
  index: number;
  e: PreparedEvent;
  r: AppendedEvent;
  approvalId: string;
  /** The approval as it is after the use taken, if any. */
  row: ApprovalRow | undefined;
  verdict: { result: ApprovalCheckResult; detail: string | null };
  basis: ApprovalCheck['basis'];
  usedOne: boolean;
}

/** What ingestion answers beside an entry that named an approval or a policy version. */
export interface GovernanceMarks {
  approval_check?: ApprovalCheck;
  policy_check?: PolicyCheck;
}

export interface BindingDeps {
  store: GovernanceStore;
  recorder: Trail;
  events: EventSink;
  clock: () => number;
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);

/** Whether an event needs a governance check: cheap, so every other event costs nothing more. */
export function governed(e: PreparedEvent): boolean {
  if (EXECUTION_TYPES.has(e.event_type)) return 'approval_id' in e.data;
  return e.event_type === 'policy.evaluated' && typeof e.data.policy_id === 'string';
}

/** The policy version an evaluation names: policy_version (a number or digits), or null. */
export function versionNamed(data: JsonObject): number | null {
  const v = data.policy_version ?? data.version;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return v;
  if (typeof v === 'string' && /^\d{1,9}$/.test(v)) return Number(v);
  return null;
}

export function checkView(row: CheckRow): GovernanceMarks {
  if (row.kind === 'approval') return { approval_check: { result: row.result as ApprovalCheckResult, approval_id: row.subject_id, basis: row.basis as ApprovalCheck['basis'], detail: row.detail, check_log_id: row.check_log_id } };
  const d = JSON.parse(row.detail ?? '{}') as { version?: number | null };
  return { policy_check: { result: row.result as PolicyCheckResult, policy_id: row.subject_id, version: d.version ?? null } };
}

/** Whether every approval given is recorded by its committed entry (an approval counts from then). */
export const approvalsRecorded = (row: Pick<ApprovalRow, 'approvers'>): boolean => (JSON.parse(row.approvers) as Array<{ log_id: string }>).every((a) => a.log_id !== '');

/** What an execution (or a self-check) names: compared with the approval. */
export interface ExecutionSubject {
  /** `data.action` as sent (null when absent): only a non-empty string can match an approval. */
  action: unknown;
  tool: string | null;
  agent_id: string | null;
  arguments: unknown;
  hasArguments: boolean;
}

export const subjectOf = (e: PreparedEvent): ExecutionSubject => ({
  action: 'action' in e.data ? e.data.action : null,
  tool: str(e.data.tool) ?? str(e.data.tool_name),
  agent_id: e.envelope.agent_id,
  arguments: e.data.arguments,
  hasArguments: 'arguments' in e.data,
});

/**
 * Whether an execution names what was approved (docs/governance.md, "Executions"): its `action`
 * equals the approval's action; or, sending no `action` at all, its tool equals the tool the
 * approval names (a tool call reported over OTLP carries the tool's name, not the action). An
 * action that is sent but is not a non-empty string (`123`, `""`, an array) never matches, and a
 * tool never stands in for a different action. null when it matches, else why not.
 */
function actionMismatch(row: ApprovalRow, x: ExecutionSubject, what: string): string | null {
  if (x.action !== null) {
    if (typeof x.action !== 'string' || x.action.length === 0) return `the execution's action must be a non-empty string (it is ${JSON.stringify(x.action)}); the ${what} covers "${row.action}"`;
    if (x.action !== row.action) return `the action is "${x.action}" but the ${what} covers "${row.action}"`;
    if (row.tool !== null && x.tool !== null && x.tool !== row.tool) return `the tool is "${x.tool}" but the ${what} covers "${row.tool}"`;
    return null;
  }
  if (row.tool !== null && x.tool === row.tool) return null;
  return `the execution names no action (the ${what} covers "${row.action}"${row.tool === null ? '' : `, tool "${row.tool}"`})`;
}

/** The verdict on an execution before a use is taken (pure, never throws): anything but ok is final. */
export function judge(row: ApprovalRow, x: ExecutionSubject, now: string): { result: ApprovalCheckResult; detail: string | null } {
  if (row.kind === 'request') {
    if (!x.hasArguments) return { result: 'mismatch', detail: 'the execution carries no arguments to compare with the approved ones' };
    const h = canonicalHash(x.arguments);
    if (h !== row.arguments_hash) return { result: 'mismatch', detail: `the arguments hash to ${h} but the approval covers ${row.arguments_hash}` };
    const wrong = actionMismatch(row, x, 'approval');
    if (wrong !== null) return { result: 'mismatch', detail: wrong };
  } else {
    const wrong = actionMismatch(row, x, 'standing approval');
    if (wrong !== null) return { result: 'mismatch', detail: wrong };
    if (row.agent_id !== null && x.agent_id !== row.agent_id) return { result: 'mismatch', detail: `the agent is ${x.agent_id === null ? 'unnamed' : `"${x.agent_id}"`} but the standing approval covers "${row.agent_id}"` };
    if (row.constraints !== null) {
      const outside = outsideConstraints(row.company_id, JSON.parse(row.constraints) as JsonObject, x.arguments);
      if (outside !== null) return { result: 'mismatch', detail: outside };
    }
    if (Date.parse(row.valid_from) > Date.parse(now)) return { result: 'not_approved', detail: `the standing approval starts at ${row.valid_from}` };
  }
  if (row.status === 'approved' && !approvalsRecorded(row)) return { result: 'not_approved', detail: 'the approval is not recorded yet (its entry is being committed)' };
  if (row.status !== 'approved') return { result: 'not_approved', detail: `the approval is ${Date.parse(row.expires_at) <= Date.parse(now) && row.status === 'pending' ? 'expired undecided' : row.status}${row.status === 'pending' ? ` (${(JSON.parse(row.approvers) as unknown[]).length} of ${row.required_approvals} approvals)` : ''}` };
  if (Date.parse(row.expires_at) <= Date.parse(now)) return { result: 'expired', detail: `the approval expired at ${row.expires_at}` };
  if (row.max_uses !== null && row.uses >= row.max_uses) return { result: 'consumed', detail: `every use of the approval (${row.max_uses}) was already taken` };
  return { result: 'ok', detail: null };
}


export class ExecutionBinding {
  constructor(private readonly deps: BindingDeps) {}

  /** Whether ingestion must hand an event here once committed (ingestion's CommitChecks). */
  needs(e: PreparedEvent): boolean {
    return governed(e);
  }

  /**
   * Checks the committed events that need it, in order, and answers one entry per event (undefined
   * where nothing was checked). A repeat (an idempotent duplicate) answers the original's check.
   * Each execution's verdict is reached (and its use taken) in order; then the `approval.checked`
   * entries of the whole group are appended together, in one append, not one each.
   */
  async afterAppend(companyId: string, events: PreparedEvent[], results: AppendedEvent[]): Promise<Array<GovernanceMarks | undefined>> {
    const out: Array<GovernanceMarks | undefined> = events.map(() => undefined);
    const verdicts: Verdict[] = [];
    const executions: Array<{ index: number; e: PreparedEvent; r: AppendedEvent }> = [];
    const policyChecks: CheckRow[] = [];
    for (const [i, e] of events.entries()) {
      const r = results[i];
      if (!r || !governed(e)) continue;
      if (r.duplicate) {
        const rows = await this.deps.store.getChecks(companyId, [r.log_id]);
        // A repeat answers the original's check. An original whose use was taken but whose check
        // entry was never appended (the process stopped in between) gets that entry now; one never
        // checked at all is checked now, as the original.
        if (rows.length) {
          out[i] = {};
          for (const row of rows) {
            if (row.kind !== 'approval' || row.check_log_id !== null) Object.assign(out[i] as GovernanceMarks, checkView(row));
            else verdicts.push({ index: i, e, r, approvalId: row.subject_id, row: await this.deps.store.getApproval(companyId, row.subject_id), verdict: { result: 'ok', detail: null }, basis: row.basis as 'request' | 'standing', usedOne: true });
          }
          continue;
        }
      }
      if (EXECUTION_TYPES.has(e.event_type)) executions.push({ index: i, e, r });
      else {
        const { check, row } = await this.checkEvaluation(companyId, e, r);
        out[i] = { policy_check: check };
        policyChecks.push(row);
      }
    }
    // A group's policy checks are kept in one statement, not one write each.
    await this.deps.store.insertChecks(policyChecks);
    verdicts.push(...(await this.judgeExecutions(companyId, executions)));
    verdicts.sort((a, b) => a.index - b.index);
    const checks = await this.recordChecks(companyId, verdicts);
    for (const [k, v] of verdicts.entries()) out[v.index] = { ...out[v.index], approval_check: checks[k] as ApprovalCheck };
    return out;
  }

  /**
   * The verdicts on a group's executions, in order: each judged against its approval as read once
   * for the group, then the uses of those judged ok taken together in one transaction (each by the
   * conditional rule); an execution whose take was refused (uses ran out within the group, or the
   * approval changed meanwhile) is judged again on the approval as it is then.
   */
  private async judgeExecutions(companyId: string, executions: Array<{ index: number; e: PreparedEvent; r: AppendedEvent }>): Promise<Verdict[]> {
    const now = iso(this.deps.clock());
    const approvals = new Map<string, ApprovalRow | undefined>();
    const approval = async (id: string) => {
      if (!approvals.has(id)) approvals.set(id, await this.deps.store.getApproval(companyId, id));
      return approvals.get(id);
    };
    const verdicts: Verdict[] = [];
    const toTake: Verdict[] = [];
    for (const { index, e, r } of executions) {
      const named = e.data.approval_id;
      // An approval_id that is not a string names no approval: still checked, and a violation.
      if (typeof named !== 'string' || named.length === 0) {
        verdicts.push({ index, e, r, approvalId: JSON.stringify(named) ?? 'null', row: undefined, verdict: { result: 'unknown', detail: `approval_id must be a non-empty string (it is ${JSON.stringify(named)})` }, basis: null, usedOne: false });
        continue;
      }
      const row = await approval(named);
      const verdict = row ? judge(row, subjectOf(e), now) : { result: 'unknown' as const, detail: `no approval ${named} in this company` };
      const v: Verdict = { index, e, r, approvalId: named, row, verdict, basis: verdict.result === 'ok' && row ? row.kind : null, usedOne: verdict.result === 'ok' };
      verdicts.push(v);
      if (verdict.result === 'ok' && row) toTake.push(v);
    }
    const taken = await this.deps.store.takeUsesFor(
      toTake.map((v) => ({ company_id: companyId, log_id: v.r.log_id, kind: 'approval' as const, subject_id: v.approvalId, basis: (v.row as ApprovalRow).kind, detail: null, created_at: v.r.created_at })),
      now,
    );
    // A refused take is judged on the approval as it is now: read once per approval, however many were refused.
    const current = new Map<string, ApprovalRow | undefined>();
    for (const [k, v] of toTake.entries()) {
      const uses = taken[k];
      const row = v.row as ApprovalRow;
      if (uses !== null && uses !== undefined) {
        v.row = { ...row, uses };
        continue;
      }
      if (!current.has(v.approvalId)) current.set(v.approvalId, await this.deps.store.getApproval(companyId, v.approvalId));
      const after = current.get(v.approvalId);
      v.row = after;
      v.usedOne = false;
      v.basis = null;
      v.verdict = after && Date.parse(after.expires_at) <= Date.parse(now) ? { result: 'expired', detail: `the approval expired at ${after.expires_at}` } : after && after.status !== 'approved' ? { result: 'not_approved', detail: `the approval is ${after.status}` } : { result: 'consumed', detail: `every use of the approval (${after?.max_uses ?? 1}) was already taken` };
    }
    return verdicts;
  }

  /**
   * Appends the `approval.checked` entries of the verdicts in one append (`row`: each approval as it
   * is after the use taken, if any) and keeps each beside its execution (a use, when ok, was already
   * taken with its mark: the entry completes that mark); anything but ok fires `approval.violated`.
   */
  private async recordChecks(companyId: string, verdicts: Verdict[]): Promise<ApprovalCheck[]> {
    const appended = await this.deps.recorder.recordMany(
      companyId,
      verdicts.map(({ e, r, approvalId, row, verdict, basis }) => ({
        eventType: 'approval.checked',
        actor: { kind: 'service', task: 'approval-binding' },
        details: { approval_id: approvalId, execution_log_id: r.log_id, execution_event_type: e.event_type, result: verdict.result, basis, detail: verdict.detail, arguments_hash: 'arguments' in e.data ? canonicalHash(e.data.arguments) : null, approved_arguments_hash: row?.arguments_hash ?? null, uses: row ? row.uses : null, max_uses: row?.max_uses ?? null },
        at: { trace_id: e.envelope.trace_id, agent_id: e.envelope.agent_id, parent_event_id: r.log_id },
      })),
    );
    const entryOf = (k: number) => appended[k] as AppendedEvent;
    // The marks of the uses taken get their entries, and every other check is kept: one write each, not one per execution.
    await this.deps.store.setCheckEntries(
      companyId,
      verdicts.flatMap((v, k) => (v.usedOne ? [{ logId: v.r.log_id, checkLogId: entryOf(k).log_id }] : [])),
    );
    await this.deps.store.insertChecks(
      verdicts.flatMap((v, k) => (v.usedOne ? [] : [{ company_id: companyId, log_id: v.r.log_id, kind: 'approval' as const, subject_id: v.approvalId, result: v.verdict.result, basis: v.basis, detail: v.verdict.detail, check_log_id: entryOf(k).log_id, created_at: entryOf(k).created_at }])),
    );
    const checks: ApprovalCheck[] = [];
    for (const [k, { e, r, approvalId, verdict, basis }] of verdicts.entries()) {
      const entry = entryOf(k);
      if (verdict.result !== 'ok') {
        await this.deps.events.emit(companyId, 'approval.violated', { approval_id: approvalId, execution_log_id: r.log_id, result: verdict.result, detail: verdict.detail, check_log_id: entry.log_id, trace_id: e.envelope.trace_id });
      }
      checks.push({ result: verdict.result, approval_id: approvalId, basis, detail: verdict.detail, check_log_id: entry.log_id });
    }
    return checks;
  }

  /** The check of one policy evaluation, and the row that keeps it (afterAppend writes a group's rows together). */
  private async checkEvaluation(companyId: string, e: PreparedEvent, r: AppendedEvent): Promise<{ check: PolicyCheck; row: CheckRow }> {
    const policyId = e.data.policy_id as string;
    const version = versionNamed(e.data);
    const hash = str(e.data.content_hash) ?? str(e.data.policy_hash);
    let result: PolicyCheckResult;
    let found: number | null = version;
    if (version !== null) {
      result = (await this.deps.store.getVersion(companyId, policyId, version)) ? 'ok' : (await this.deps.store.latestVersion(companyId, policyId)) ? 'unknown_version' : 'unknown_policy';
    } else if (hash !== null) {
      const v = await this.deps.store.versionByHash(companyId, policyId, hash);
      found = v?.version ?? null;
      result = v ? 'ok' : (await this.deps.store.latestVersion(companyId, policyId)) ? 'unknown_version' : 'unknown_policy';
    } else {
      result = (await this.deps.store.latestVersion(companyId, policyId)) ? 'unknown_version' : 'unknown_policy';
    }
    return {
      check: { result, policy_id: policyId, version: found },
      row: { company_id: companyId, log_id: r.log_id, kind: 'policy', subject_id: policyId, result, basis: null, detail: JSON.stringify({ version: found, content_hash: hash }), check_log_id: null, created_at: r.created_at },
    };
  }
}
