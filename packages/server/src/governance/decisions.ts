// The decision register (docs/governance.md, "Decisions"; fields in docs/event-types.md): a read
// model over the `decision.made` entries, with the typed fields auditors ask for, read where the
// OpenTelemetry GenAI conventions name them too, and what governed each decision: its policy
// evaluations (with the register's check), its approvals and its reviews. It reads the ledger
// (the event_type index, and the decision_id at the top of data), so it holds nothing of its own
// that could disagree with the entries.
import type { JsonObject } from '@audit-ledger/core';
import { NotFoundError } from '../kernel/domain-error.js';
import type { LogEntryRow } from '../store/chain.js';
import type { GovernanceStore } from '../store/governance.js';
import type { LedgerStore } from '../store/ledger.js';
import { approvalView, type ApprovalView } from './approvals.js';
import { checkView, type PolicyCheck, versionNamed } from './execution-check.js';

const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);
const first = (d: JsonObject, ...names: string[]): string | null => {
  for (const n of names) {
    const v = str(d[n]);
    if (v !== null) return v;
  }
  return null;
};
const list = (v: unknown): string[] => (Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : typeof x === 'object' && x !== null ? (str((x as JsonObject).id) ?? str((x as JsonObject).name) ?? str((x as JsonObject).hash) ?? JSON.stringify(x)) : String(x))) : []);

export interface DecisionSummary {
  decision_id: string;
  log_id: string;
  seq: number;
  created_at: string;
  trace_id: string | null;
  agent_id: string | null;
  action: string | null;
  outcome: string | null;
  model: string | null;
  model_version: string | null;
  confidence: number | null;
  erased: boolean;
}

export interface DecisionRecord extends DecisionSummary {
  provider: string | null;
  prompt: { template_id: string | null; template_version: string | null; hash: string | null };
  inputs: { hash: string | null; documents: string[] };
  tools: string[];
  rationale: string | null;
  policy_evaluations: Array<{ log_id: string; policy_id: string | null; policy_version: number | null; verdict: string | null; reason_codes: string[]; check: PolicyCheck | null }>;
  approvals: ApprovalView[];
  reviews: Array<{ log_id: string; event_type: string; reviewer: string | null; reason: string | null; created_at: string }>;
  links: { entry: string; verification: string; proof: string; evidence_bundle: string | null; timeline: string | null };
}

export function decisionSummary(row: LogEntryRow): DecisionSummary {
  const d = (row.data === null ? {} : JSON.parse(row.data)) as JsonObject;
  const conf = d.confidence;
  return {
    decision_id: first(d, 'decision_id') ?? row.log_id,
    log_id: row.log_id,
    seq: row.seq,
    created_at: row.created_at,
    trace_id: row.trace_id,
    agent_id: row.agent_id ?? first(d, 'agent_id', 'gen_ai.agent.id'),
    action: first(d, 'action'),
    outcome: first(d, 'outcome', 'decision', 'result'),
    model: first(d, 'model', 'gen_ai.request.model', 'gen_ai.response.model'),
    model_version: first(d, 'model_version', 'gen_ai.response.model'),
    confidence: typeof conf === 'number' ? conf : null,
    erased: row.erased_at !== null,
  };
}

export class Decisions {
  constructor(private readonly deps: { ledger: LedgerStore; store: GovernanceStore; clock: () => number }) {}

  async list(companyId: string, q: { trace_id?: string | undefined; agent_id?: string | undefined; afterSeq?: number | undefined; limit: number }): Promise<LogEntryRow[]> {
    return this.deps.ledger.listEntries(companyId, { event_type: 'decision.made', trace_id: q.trace_id, agent_id: q.agent_id, afterSeq: q.afterSeq, order: 'desc', limit: q.limit });
  }

  async get(companyId: string, decisionId: string): Promise<DecisionRecord> {
    const [row] = await this.deps.ledger.listEntries(companyId, { event_type: 'decision.made', dataField: { name: 'decision_id', value: decisionId }, order: 'asc', limit: 1 });
    if (!row) throw new NotFoundError(`decision ${decisionId} not found`);
    const d = (row.data === null ? {} : JSON.parse(row.data)) as JsonObject;
    const evaluations = await this.deps.ledger.listEntries(companyId, { event_type: 'policy.evaluated', dataField: { name: 'decision_id', value: decisionId }, order: 'asc', limit: 200 });
    const checks = new Map((await this.deps.store.getChecks(companyId, evaluations.map((e) => e.log_id))).map((c) => [c.log_id, checkView(c).policy_check]));
    const approvals = await this.deps.store.listApprovals(companyId, { kind: 'request', decision_id: decisionId, limit: 100 });
    const reviews = await this.deps.ledger.listEntries(companyId, { event_type: 'hitl.rejected', dataField: { name: 'decision_id', value: decisionId }, order: 'asc', limit: 100 });
    const now = this.deps.clock();
    return {
      ...decisionSummary(row),
      provider: first(d, 'provider', 'gen_ai.provider.name', 'gen_ai.system'),
      prompt: { template_id: first(d, 'prompt_template_id', 'prompt_template'), template_version: first(d, 'prompt_template_version', 'prompt_version'), hash: first(d, 'prompt_hash') },
      inputs: { hash: first(d, 'inputs_hash'), documents: list(d.retrieved_documents ?? d.documents) },
      tools: list(d.tools_used ?? d.tools),
      rationale: first(d, 'rationale', 'reasoning', 'reason'),
      policy_evaluations: evaluations.map((e) => {
        const ed = (e.data === null ? {} : JSON.parse(e.data)) as JsonObject;
        return { log_id: e.log_id, policy_id: str(ed.policy_id), policy_version: versionNamed(ed), verdict: first(ed, 'verdict', 'result'), reason_codes: list(ed.reason_codes), check: checks.get(e.log_id) ?? null };
      }),
      approvals: approvals.map((a) => approvalView(a, now)),
      reviews: reviews.map((r) => {
        const rd = (r.data === null ? {} : JSON.parse(r.data)) as JsonObject;
        return { log_id: r.log_id, event_type: r.event_type, reviewer: str(rd.reviewer), reason: str(rd.rejection_reason), created_at: r.created_at };
      }),
      links: {
        entry: `/api/v1/logs/${row.log_id}`,
        verification: `/api/v1/logs/${row.log_id}/verify`,
        proof: `/api/v1/logs/${row.log_id}/proof`,
        evidence_bundle: row.trace_id ? `/api/v1/exports/evidence?trace_id=${row.trace_id}` : `/api/v1/exports/evidence?from_seq=${row.seq}&to_seq=${row.seq}`,
        timeline: row.trace_id ? `/api/v1/logs?trace_id=${row.trace_id}&order=asc` : null,
      },
    };
  }
}
