// Human review rejections (spec 2.7, 4.4), without HTTP. A rejection is appended to the ledger
// as a `hitl.rejected` entry, so it is as tamper-evident as what it rejects and shows up in the
// trace's forensics; the overrides list reads those entries back.
import type { JsonObject } from '@audit-ledger/core';
import type { EventSink } from '../kernel/events.js';
import type { Recorder } from '../ingestion/recorder.js';
import { RESERVED_SOURCE_PREFIX } from '../store/columns.js';
import { uuidv7 } from '../ledger/uuidv7.js';
import { NotFoundError } from '../kernel/domain-error.js';
import { GOVERNANCE_SOURCE } from '../governance/record.js';

/** What GET /hitl/audit-trail lists: human review and approval steps. */
export const TRAIL_TYPES = ['hitl.rejected', 'hitl.escalated', 'approval.requested', 'approval.approved', 'approval.rejected', 'approval.escalated', 'approval.expired', 'approval.checked', 'approval.precheck', 'approval.standing_granted', 'approval.standing_revoked'] as const;
import type { LogEntryRow } from '../store/chain.js';
import type { LedgerStore } from '../store/ledger.js';

/** Under the reserved prefix, so clients cannot forge an override through POST /logs. */
export const HITL_SOURCE = `${RESERVED_SOURCE_PREFIX}hitl`;

/** The credential that submitted a rejection. */
export interface Submitter {
  kind: 'user' | 'api_key';
  id: string;
}

export interface RejectionInput {
  reviewer: string;
  rejection_reason: string;
  decision_id?: string | undefined;
  trace_id?: string | undefined;
}

export interface Override {
  id: string;
  log_id: string;
  reviewer: string;
  rejection_reason: string;
  decision_id: string | null;
  trace_id: string | null;
  created_at: string;
  submitted_by: { kind: string; id: string };
}

export interface OverrideQuery {
  decision_id?: string | undefined;
  trace_id?: string | undefined;
  /** Continue after this seq (newest first). */
  afterSeq?: number | undefined;
  limit: number;
}

export interface RejectionsDeps {
  ledger: LedgerStore;
  recorder: Pick<Recorder, 'record'>;
  events: EventSink;
  clock: () => number;
}

export function overrideView(row: LogEntryRow): Override {
  // Review records are written under a reserved source and are never erased (docs/compliance.md).
  const d = JSON.parse(row.data ?? '{}') as Record<string, unknown>;
  return {
    id: String(d.rejection_id),
    log_id: row.log_id,
    reviewer: String(d.reviewer),
    rejection_reason: String(d.rejection_reason),
    decision_id: typeof d.decision_id === 'string' ? d.decision_id : null,
    trace_id: row.trace_id,
    created_at: row.created_at,
    submitted_by: d.submitted_by as { kind: string; id: string },
  };
}

export class Rejections {
  constructor(private readonly deps: RejectionsDeps) {}

  /**
   * Appends the rejection (resolved once committed; the appender's errors pass through) and
   * emits `hitl.rejected`. Without trace_id, it joins the trace of the `decision.made` event
   * whose data.decision_id matches, when there is one.
   */
  async reject(companyId: string, submittedBy: Submitter, input: RejectionInput): Promise<Override> {
    let traceId = input.trace_id ?? null;
    if (traceId === null && input.decision_id !== undefined) {
      const [decision] = await this.deps.ledger.listEntries(companyId, { event_type: 'decision.made', dataField: { name: 'decision_id', value: input.decision_id }, order: 'asc', limit: 1 });
      traceId = decision?.trace_id ?? null;
    }
    const rejectionId = uuidv7(this.deps.clock());
    const appended = await this.deps.recorder.record(
      companyId,
      HITL_SOURCE,
      'hitl.rejected',
      {
        rejection_id: rejectionId,
        reviewer: input.reviewer,
        rejection_reason: input.rejection_reason,
        decision_id: input.decision_id ?? null,
        submitted_by: { kind: submittedBy.kind, id: submittedBy.id },
      },
      { trace_id: traceId },
    );
    const view: Override = {
      id: rejectionId,
      log_id: appended.log_id,
      reviewer: input.reviewer,
      rejection_reason: input.rejection_reason,
      decision_id: input.decision_id ?? null,
      trace_id: traceId,
      created_at: appended.created_at,
      submitted_by: { kind: submittedBy.kind, id: submittedBy.id },
    };
    await this.deps.events.emit(companyId, 'hitl.rejected', view as unknown as JsonObject);
    return view;
  }

  /** One recorded rejection by its id. */
  async get(companyId: string, rejectionId: string): Promise<Override> {
    const [row] = await this.deps.ledger.listEntries(companyId, { event_type: 'hitl.rejected', source: HITL_SOURCE, dataField: { name: 'rejection_id', value: rejectionId }, order: 'asc', limit: 1 });
    if (!row) throw new NotFoundError(`override ${rejectionId} not found`);
    return overrideView(row);
  }

  /**
   * An escalation recorded on its own (the alias POST /hitl/escalate without approval_id): a
   * `hitl.escalated` entry with what the caller said, naming who sent it.
   */
  async recordEscalation(companyId: string, submittedBy: Submitter, input: { current_reviewer: string; escalation_target: string; escalation_reason: string; decision_id?: string | undefined; trace_id?: string | undefined }) {
    const escalationId = uuidv7(this.deps.clock());
    const appended = await this.deps.recorder.record(
      companyId,
      HITL_SOURCE,
      'hitl.escalated',
      { escalation_id: escalationId, current_reviewer: input.current_reviewer, escalation_target: input.escalation_target, escalation_reason: input.escalation_reason, decision_id: input.decision_id ?? null, submitted_by: { kind: submittedBy.kind, id: submittedBy.id } },
      { trace_id: input.trace_id },
    );
    return { id: escalationId, log_id: appended.log_id, created_at: appended.created_at };
  }

  /** The human-review trail: every rejection, escalation and approval step, newest first. */
  async trail(companyId: string, q: { trace_id?: string | undefined; afterSeq?: number | undefined; limit: number }): Promise<LogEntryRow[]> {
    return this.deps.ledger.listEntries(companyId, { sources: [HITL_SOURCE, GOVERNANCE_SOURCE], event_types: [...TRAIL_TYPES], trace_id: q.trace_id, afterSeq: q.afterSeq, order: 'desc', limit: q.limit });
  }

  /** Recorded rejections, newest first. */
  async list(companyId: string, q: OverrideQuery): Promise<{ items: Override[]; lastSeq: number | undefined }> {
    const rows = await this.deps.ledger.listEntries(companyId, {
      event_type: 'hitl.rejected',
      source: HITL_SOURCE,
      trace_id: q.trace_id,
      dataField: q.decision_id === undefined ? undefined : { name: 'decision_id', value: q.decision_id },
      afterSeq: q.afterSeq,
      order: 'desc',
      limit: q.limit,
    });
    return { items: rows.map(overrideView), lastSeq: rows[rows.length - 1]?.seq };
  }
}
