// The compliance lifecycle without HTTP: content retention, legal holds and erasure. Erasing a
// version 2 entry removes its data, extra and salt and keeps its commitment, so the chain, the
// tree and every proof still verify (docs/ledger-format.md §14). Every erasure happens in three
// steps, each safe to repeat after a crash: it is planned (a row in `erasures`), recorded (a
// compliance.erasure entry in the company's chain, idempotent by the erasure's id), and applied
// (the content removed, in one transaction). Nothing under an active legal hold is erased.
import { randomUUID } from 'node:crypto';
import { ERASURE_EVENT_TYPE } from '@audit-ledger/core';
import type { LogEntryRow } from '../store/chain.js';
import { erasableSource } from '@audit-ledger/core';
import type { LedgerStore } from '../store/ledger.js';
import type { ComplianceStore, ErasureRow, HoldRow, HoldScope } from '../store/compliance.js';
import type { ErasureKind } from '../store/schema.js';
import { InputError } from '../kernel/domain-error.js';
import { iso } from '../kernel/time.js';
import { EntriesNotFoundError, HoldNotFoundError, HoldReleasedError, NotErasableError, UnderLegalHoldError } from './errors.js';
import { ADMIN_SOURCE, type AdminTrail, type TrailActor } from '../ingestion/recorder.js';

/** At most this many entries per erasure record; a larger request is recorded in several. */
export const ERASURE_CHUNK = 1000;
const DAY_MS = 86_400_000;
/** The most due entries a retention preview reads. */
export const PREVIEW_LIMIT = 100_000;

export interface RetentionPolicy {
  /** Days content is kept; null: forever. 0: erased at the next run. */
  content_days: number | null;
  by_event_type: Record<string, number>;
}

export interface RetentionView extends RetentionPolicy {
  updated_at: string | null;
  updated_by: TrailActor | null;
  last_run_at: string | null;
  erased_total: number;
  pending_erasures: number;
}

export interface HoldView {
  id: string;
  scope: HoldScope;
  reason: string;
  case_reference: string | null;
  status: 'active' | 'released';
  created_at: string;
  created_by: TrailActor;
  released_at: string | null;
  released_by: TrailActor | null;
  release_reason: string | null;
}

export interface ErasureView {
  id: string;
  kind: ErasureKind;
  legal_basis: string;
  requested_by: TrailActor;
  created_at: string;
  /** Entries whose content this request removed. */
  erased_count: number;
  /** Named entries whose content was already gone (nothing to do). */
  already_erased: number;
  log_ids: string[];
  /** The compliance.erasure entries that record it (one per 1000 entries). */
  record_log_ids: string[];
  status: 'applied' | 'pending';
}

/** The one kind a hold's scope names, or an input error: exactly one kind, and a time range's from before its to (as instants). */
function holdScope(s: Record<string, unknown>): HoldScope {
  const kinds = [['trace_id'], ['session_id'], ['agent_id'], ['from', 'to'], ['all']].filter((k) => k.some((f) => s[f] !== undefined));
  if (kinds.length !== 1) throw new InputError([{ field: '/body/scope', message: 'must name exactly one of trace_id, session_id, agent_id, a time range (from, to) or all' }]);
  if (typeof s.from === 'string' && typeof s.to === 'string' && Date.parse(s.from) >= Date.parse(s.to)) throw new InputError([{ field: '/body/scope/from', message: 'must be before to' }]);
  return s as HoldScope;
}

export interface ComplianceDeps {
  /** New record ids (random UUIDs unless a test supplies its own). */
  newId?: () => string;
  store: ComplianceStore;
  ledger: Pick<LedgerStore, 'getEntriesByLogId'>;
  trail: AdminTrail;
  clock: () => number;
  /** JSON paths in data (member names) where a subject identifier may be: COMPLIANCE_SUBJECT_FIELDS. */
  subjectPaths: string[][];
  /** Entries per retention batch. */
  retentionBatch: number;
  /** Told when erased content could not yet be scrubbed from the database's files (a reader held the WAL); the next erasure or retention run tries again. */
  onScrubIncomplete?: () => void;
}

const parseActor = (text: string): TrailActor => JSON.parse(text) as TrailActor;

export function holdView(h: HoldRow): HoldView {
  return {
    id: h.hold_id,
    scope: JSON.parse(h.scope) as HoldScope,
    reason: h.reason,
    case_reference: h.case_reference,
    status: h.released_at === null ? 'active' : 'released',
    created_at: h.created_at,
    created_by: parseActor(h.created_by),
    released_at: h.released_at,
    released_by: h.released_by === null ? null : parseActor(h.released_by),
    release_reason: h.release_reason,
  };
}

/**
 * Whether a hold's scope covers an entry (a time range is on the entry's created_at: [from, to)).
 * Times are compared as instants: a hold keeps the bounds exactly as its admin wrote them
 * (`11:33:01+02:00`, no milliseconds), which as text would not order against the stored
 * `…T09:33:01.732Z`. A bound that names no instant (never stored: the route refuses it) covers
 * everything rather than nothing, so a hold can only ever keep too much.
 */
export function holdCovers(scope: HoldScope, e: Pick<LogEntryRow, 'trace_id' | 'session_id' | 'agent_id' | 'created_at'>): boolean {
  if ('all' in scope) return true;
  if ('trace_id' in scope) return e.trace_id === scope.trace_id;
  if ('session_id' in scope) return e.session_id === scope.session_id;
  if ('agent_id' in scope) return e.agent_id === scope.agent_id;
  const at = Date.parse(e.created_at);
  const from = scope.from === undefined ? Number.NEGATIVE_INFINITY : Date.parse(scope.from);
  const to = scope.to === undefined ? Number.POSITIVE_INFINITY : Date.parse(scope.to);
  if (Number.isNaN(from) || Number.isNaN(to)) return true;
  return at >= from && at < to;
}

export class Compliance {
  private readonly newId: () => string;
  private closed = false;

  constructor(private readonly deps: ComplianceDeps) {
    this.newId = deps.newId ?? randomUUID;
  }

  private now(): string {
    return iso(this.deps.clock());
  }

  // ---- retention ----

  async retention(companyId: string): Promise<RetentionView> {
    const row = await this.deps.store.getRetention(companyId);
    return {
      content_days: row?.content_days ?? null,
      by_event_type: row ? (JSON.parse(row.by_event_type) as Record<string, number>) : {},
      updated_at: row?.updated_at ?? null,
      updated_by: row ? parseActor(row.updated_by) : null,
      last_run_at: row?.last_run_at ?? null,
      erased_total: Number(row?.erased_total ?? 0),
      pending_erasures: await this.deps.store.pendingErasureCount(companyId),
    };
  }

  /**
   * What a retention run now would erase, without erasing: the entries past their cutoff whose
   * content is still there, those of them a legal hold keeps, and the cutoffs. Reads at most
   * PREVIEW_LIMIT due entries (`capped` says when there are more).
   */
  async retentionPreview(companyId: string): Promise<{ due: number; held: number; capped: boolean; cutoffs: { content: string | null; by_event_type: Record<string, string> } }> {
    const { store } = this.deps;
    const policy = await store.getRetention(companyId);
    const nowMs = this.deps.clock();
    const cutoff = (days: number) => iso(nowMs - days * DAY_MS);
    const byType = policy ? Object.fromEntries(Object.entries(JSON.parse(policy.by_event_type) as Record<string, number>).map(([t, d]) => [t, cutoff(d)])) : {};
    const otherwise = policy?.content_days === null || policy === undefined ? null : cutoff(policy.content_days);
    // Nothing is ever erased without a policy that limits something.
    if (otherwise === null && Object.keys(byType).length === 0) return { due: 0, held: 0, capped: false, cutoffs: { content: null, by_event_type: {} } };
    const holds = (await store.activeHolds(companyId)).map((h) => JSON.parse(h.scope) as HoldScope);
    let due = 0;
    let held = 0;
    let capped = false;
    for (let after = -1; ; ) {
      const page = await store.dueForRetention(companyId, byType, otherwise, after, 1000);
      if (page.length === 0) break;
      after = (page.at(-1) as LogEntryRow).seq;
      for (const r of page) {
        if (holds.some((h) => holdCovers(h, r))) held++;
        else due++;
      }
      if (due + held >= PREVIEW_LIMIT) {
        capped = true;
        break;
      }
    }
    return { due, held, capped, cutoffs: { content: otherwise, by_event_type: byType } };
  }

  async setRetention(companyId: string, actor: TrailActor, policy: RetentionPolicy): Promise<RetentionView> {
    const before = await this.retention(companyId);
    await this.deps.store.putRetention({ company_id: companyId, content_days: policy.content_days, by_event_type: JSON.stringify(policy.by_event_type), updated_at: this.now(), updated_by: JSON.stringify(actor) });
    await this.deps.trail.record(companyId, 'compliance.retention_changed', actor, {
      previous: { content_days: before.content_days, by_event_type: before.by_event_type },
      content_days: policy.content_days,
      by_event_type: policy.by_event_type,
    });
    return this.retention(companyId);
  }

  // ---- legal holds ----

  /** A legal hold on one kind of scope (a trace, a session, an agent, a time range with from before to, or all). */
  async placeHold(companyId: string, actor: TrailActor, input: { scope: Record<string, unknown>; reason: string; case_reference?: string | undefined }): Promise<HoldView> {
    const scope = holdScope(input.scope);
    const row: HoldRow = {
      company_id: companyId,
      hold_id: this.newId(),
      scope: JSON.stringify(scope),
      reason: input.reason,
      case_reference: input.case_reference ?? null,
      created_at: this.now(),
      created_by: JSON.stringify(actor),
      released_at: null,
      released_by: null,
      release_reason: null,
    };
    await this.deps.store.insertHold(row);
    await this.deps.trail.record(companyId, 'compliance.hold_placed', actor, { hold_id: row.hold_id, scope: { ...scope }, reason: row.reason, case_reference: row.case_reference });
    return holdView(row);
  }

  async holds(companyId: string): Promise<HoldView[]> {
    return (await this.deps.store.listHolds(companyId)).map(holdView);
  }

  async releaseHold(companyId: string, actor: TrailActor, holdId: string, reason: string): Promise<HoldView> {
    const hold = await this.deps.store.getHold(companyId, holdId);
    if (!hold) throw new HoldNotFoundError(holdId);
    if (!(await this.deps.store.releaseHold(companyId, holdId, this.now(), JSON.stringify(actor), reason))) throw new HoldReleasedError(holdId);
    await this.deps.trail.record(companyId, 'compliance.hold_released', actor, { hold_id: holdId, reason, case_reference: hold.case_reference });
    return holdView((await this.deps.store.getHold(companyId, holdId)) as HoldRow);
  }

  // ---- erasure on request ----

  /** Erases the named entries, or every entry whose data carries the subject; refused whole when any is held or cannot be erased. */
  async requestErasure(companyId: string, actor: TrailActor, input: { log_ids?: string[] | undefined; subject?: string | undefined; legal_basis: string }): Promise<ErasureView> {
    if ((input.log_ids === undefined) === (input.subject === undefined)) throw new InputError([{ field: '/body', message: 'must have exactly one of log_ids and subject' }]);
    let rows: LogEntryRow[];
    if (input.log_ids !== undefined) {
      const ids = [...new Set(input.log_ids)];
      rows = await this.deps.ledger.getEntriesByLogId(companyId, ids);
      const found = new Set(rows.map((r) => r.log_id));
      const missing = ids.filter((id) => !found.has(id));
      if (missing.length > 0) throw new EntriesNotFoundError(missing);
    } else {
      rows = await this.deps.store.entriesBySubject(companyId, this.deps.subjectPaths, input.subject as string);
    }
    const reserved = rows.filter((r) => !erasableSource(r.source, r.event_type));
    if (reserved.length > 0) throw new NotErasableError(reserved.map((r) => r.log_id), `written by the service itself (source ${ADMIN_SOURCE} and the like): the compliance record is kept`);
    const v1 = rows.filter((r) => r.format_version < 2);
    if (v1.length > 0) throw new NotErasableError(v1.map((r) => r.log_id), 'format version 1 entries hash their content directly (docs/ledger-format.md §14)');
    const alreadyErased = rows.filter((r) => r.content_salt === null).length;
    const targets = rows.filter((r) => r.content_salt !== null);
    for (const hold of await this.deps.store.activeHolds(companyId)) {
      const scope = JSON.parse(hold.scope) as HoldScope;
      const held = targets.filter((r) => holdCovers(scope, r));
      if (held.length > 0) throw new UnderLegalHoldError(hold.hold_id, hold.case_reference, held.map((r) => r.log_id));
    }
    const requestId = this.newId();
    const chunks = await this.plan(companyId, requestId, 'request', input.legal_basis, actor, targets.map((r) => r.log_id));
    let erased = 0;
    const records: string[] = [];
    for (const c of chunks) {
      const done = await this.carryOut(c);
      erased += done.erased;
      records.push(done.recordLogId);
    }
    if (erased > 0) await this.scrub();
    return { id: requestId, kind: 'request', legal_basis: input.legal_basis, requested_by: actor, created_at: chunks[0]?.created_at ?? this.now(), erased_count: erased, already_erased: alreadyErased, log_ids: targets.map((r) => r.log_id), record_log_ids: records, status: 'applied' };
  }

  async erasures(companyId: string): Promise<ErasureView[]> {
    const rows = await this.deps.store.listErasures(companyId);
    const byRequest = new Map<string, ErasureRow[]>();
    for (const r of rows) byRequest.set(r.request_id, [...(byRequest.get(r.request_id) ?? []), r]);
    return [...byRequest.entries()].map(([id, list]) => {
      const first = list[0] as ErasureRow;
      return {
        id,
        kind: first.kind,
        legal_basis: first.legal_basis,
        requested_by: parseActor(first.requested_by),
        created_at: first.created_at,
        erased_count: list.reduce((n, r) => n + r.erased_count, 0),
        already_erased: 0,
        log_ids: list.flatMap((r) => JSON.parse(r.log_ids) as string[]),
        record_log_ids: list.flatMap((r) => (r.record_log_id ? [r.record_log_id] : [])),
        status: list.every((r) => r.status === 'applied') ? 'applied' : 'pending',
      };
    });
  }

  /** Plans the erasure of `logIds` in chunks of ERASURE_CHUNK (one chunk even when empty: the request is still recorded). */
  private async plan(companyId: string, requestId: string, kind: ErasureKind, basis: string, actor: TrailActor, logIds: string[]): Promise<ErasureRow[]> {
    const at = this.now();
    const chunks: ErasureRow[] = [];
    for (let i = 0; i === 0 || i < logIds.length; i += ERASURE_CHUNK) {
      chunks.push({ company_id: companyId, erasure_id: this.newId(), request_id: requestId, kind, legal_basis: basis, requested_by: JSON.stringify(actor), created_at: at, log_ids: JSON.stringify(logIds.slice(i, i + ERASURE_CHUNK)), status: 'planned', record_log_id: null, erased_count: 0, applied_at: null });
    }
    await this.deps.store.insertErasures(chunks);
    return chunks;
  }

  /** Records (once: idempotent by the erasure's id) and applies one planned or recorded erasure. */
  private async carryOut(e: ErasureRow): Promise<{ erased: number; recordLogId: string }> {
    let recordLogId = e.record_log_id;
    if (recordLogId === null) {
      const record = await this.deps.trail.record(
        e.company_id,
        ERASURE_EVENT_TYPE,
        parseActor(e.requested_by),
        { erasure_id: e.erasure_id, request_id: e.request_id, kind: e.kind, legal_basis: e.legal_basis, log_ids: JSON.parse(e.log_ids) as string[] },
        { idempotency_key: `erasure:${e.erasure_id}` },
      );
      recordLogId = record.log_id;
      await this.deps.store.markRecorded(e.company_id, e.erasure_id, recordLogId);
    }
    const erased = await this.deps.store.applyErasure({ ...e, record_log_id: recordLogId }, this.now());
    return { erased, recordLogId };
  }

  // ---- the retention job ----

  /** One company's retention run, asked for by a person now (recorded as compliance.retention_run), and the policy's progress after it. */
  async runRetentionNow(companyId: string, actor: TrailActor): Promise<{ erased_count: number; retention: RetentionView }> {
    const erased = await this.runRetention(companyId);
    await this.deps.trail.record(companyId, 'compliance.retention_run', actor, { erased_count: erased });
    return { erased_count: erased, retention: await this.retention(companyId) };
  }

  /** Finishes erasures a crash interrupted, then applies every company's retention policy in bounded batches. */
  async runRetention(onlyCompany?: string): Promise<number> {
    let total = 0;
    for (const e of await this.deps.store.unfinishedErasures(onlyCompany)) {
      if (this.closed) return total;
      total += (await this.carryOut(e)).erased;
    }
    const companies = onlyCompany !== undefined ? [onlyCompany] : await this.deps.store.companiesWithRetention();
    for (const companyId of companies) {
      if (this.closed) break;
      total += await this.retainCompany(companyId);
    }
    if (total > 0) await this.scrub();
    return total;
  }

  /** After content was erased: removes the copies the database still holds (store's scrubErasedContent). */
  private async scrub(): Promise<void> {
    if (!(await this.deps.store.scrubErasedContent())) this.deps.onScrubIncomplete?.();
  }

  private async retainCompany(companyId: string): Promise<number> {
    const { store } = this.deps;
    const policy = await store.getRetention(companyId);
    if (!policy) return 0;
    // One run per company at a time, across processes; a run that finds it taken leaves it.
    const erased = await store.withRetentionLock(companyId, async () => {
      const nowMs = this.deps.clock();
      const cutoff = (days: number) => iso(nowMs - days * DAY_MS);
      const byType = Object.fromEntries(Object.entries(JSON.parse(policy.by_event_type) as Record<string, number>).map(([t, d]) => [t, cutoff(d)]));
      const otherwise = policy.content_days === null ? null : cutoff(policy.content_days);
      const basis = `retention policy: content kept ${policy.content_days === null ? 'without limit' : `${policy.content_days} days`}${Object.keys(byType).length ? `, by event type ${policy.by_event_type}` : ''}`;
      const holds = (await store.activeHolds(companyId)).map((h) => JSON.parse(h.scope) as HoldScope);
      const runId = this.newId();
      const actor: TrailActor = { kind: 'service', task: 'retention' };
      let count = 0;
      try {
        for (let after = -1; !this.closed; ) {
          const due = await store.dueForRetention(companyId, byType, otherwise, after, this.deps.retentionBatch);
          if (due.length === 0) break;
          after = (due.at(-1) as LogEntryRow).seq;
          const free = due.filter((r) => !holds.some((h) => holdCovers(h, r)));
          if (free.length === 0) continue;
          for (const chunk of await this.plan(companyId, runId, 'retention', basis, actor, free.map((r) => r.log_id))) count += (await this.carryOut(chunk)).erased;
        }
      } finally {
        await store.finishRetentionRun(companyId, this.now(), count);
      }
      return count;
    });
    return erased ?? 0;
  }

  close(): void {
    this.closed = true;
  }
}
