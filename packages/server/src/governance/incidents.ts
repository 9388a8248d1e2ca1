// Incidents (docs/governance.md, "Incidents"): opened (by hand, or from a replay whose root cause
// was detected), assigned, commented, moved through open → investigating → mitigated → resolved →
// closed; each change an `incident.*` entry of the source audit-ledger/governance and a note of the
// incident's own timeline. An incident report is signed JSON (the compliance report's signature
// scheme, format audit-ledger/incident-report/v1, verified offline by `audit-ledger-verify`)
// and a PDF: the linked entries each verified, their timeline, the root cause found, the approvals
// and policy evaluations involved, and the EU AI Act Article 73 reporting deadlines counted from
// when the incident was opened.
import { INCIDENT_REPORT_FORMAT, type JsonObject, type KeyTransition, reportDigest, reportSignatureMessage, type SignedReport, toBase64 } from '@audit-ledger/core';
import type { TrailActor } from '../ingestion/recorder.js';
import { GovernanceRefusal, InputError, NotFoundError } from '../kernel/domain-error.js';
import type { EventSink } from '../kernel/events.js';
import { iso } from '../kernel/time.js';
import type { Keyring } from '../ledger/keyring.js';
import { uuidv7 } from '../ledger/uuidv7.js';
import type { LogEntryRow } from '../store/chain.js';
import type { GovernanceStore, IncidentNoteRow, IncidentRow } from '../store/governance.js';
import type { LedgerStore } from '../store/ledger.js';
import type { IncidentStatus } from '../store/schema.js';
import { approvalView } from './approvals.js';
import { checkView } from './execution-check.js';
import type { Trail } from '../ingestion/recorder.js';

export const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
export const INCIDENT_STATUSES = ['open', 'investigating', 'mitigated', 'resolved', 'closed'] as const;
/** EU AI Act Art. 73 categories: (2) any serious incident, (3) widespread infringement or critical infrastructure, (4) a death. */
export const ART73_CATEGORIES = ['serious', 'widespread_or_critical_infrastructure', 'death'] as const;
export type Art73Category = (typeof ART73_CATEGORIES)[number];
const ART73_DAYS: Record<Art73Category, number> = { serious: 15, widespread_or_critical_infrastructure: 2, death: 10 };
const DAY_MS = 86_400_000;
/** Most entries an incident report verifies and lists. */
export const MAX_REPORT_ENTRIES = 2000;

export interface IncidentLinks {
  trace_ids: string[];
  decision_ids: string[];
  log_ids: string[];
  approval_ids: string[];
}

export interface IncidentInput {
  title: string;
  severity: (typeof SEVERITIES)[number];
  description?: string | undefined;
  trace_ids?: string[] | undefined;
  decision_ids?: string[] | undefined;
  log_ids?: string[] | undefined;
  approval_ids?: string[] | undefined;
  /** Whether (and how) it is a serious incident under EU AI Act Art. 73; sets the reporting deadline. */
  art73?: Art73Category | null | undefined;
}

/** What a replay's root cause says, when an incident is opened from it. */
export interface DetectedCause {
  replay_session_id: string;
  trace_id: string;
  detected: boolean;
  root_cause_type: string;
  description: string;
  confidence: number;
  evidence: string[];
}

export interface IncidentDeps {
  store: GovernanceStore;
  recorder: Trail;
  events: EventSink;
  ledger: LedgerStore;
  clock: () => number;
  keyring: Pick<Keyring, 'active'>;
  /** The service's signed key transitions, carried by each signed report (a verifier follows them from an earlier pinned key). */
  transitions: () => Promise<KeyTransition[]>;
  /** Each entry's check (hash, link, signature, inclusion), as GET /logs/{id}/verify answers it. */
  checkEntry: (companyId: string, logId: string) => Promise<JsonObject | undefined>;
  /** The root cause of a replay session (forensics), and of a trace (a new replay pinned now). */
  replayCause: (companyId: string, replaySessionId: string) => Promise<DetectedCause>;
  traceCause: (companyId: string, traceId: string) => Promise<DetectedCause | null>;
  newId?: () => string;
}

export interface IncidentView {
  id: string;
  title: string;
  severity: string;
  description: string | null;
  status: IncidentStatus;
  assignee: string | null;
  links: IncidentLinks & { art73: Art73Category | null; replay_session_id: string | null };
  opened_by: TrailActor;
  log_id: string;
  created_at: string;
  updated_at: string;
  deadlines: Deadlines;
  notes?: Array<{ id: string; kind: string; body: JsonObject; actor: TrailActor; log_id: string; created_at: string }>;
}

export interface Deadlines {
  /** The Article 73 category recorded, and the report due then; null when none was set. */
  art73: Art73Category | null;
  report_due_at: string | null;
  /** Every Article 73 deadline from when the incident was opened, for reference. */
  article_73: Array<{ category: Art73Category; days: number; due_at: string; paragraph: string }>;
}

export function deadlinesOf(openedAt: string, art73: Art73Category | null): Deadlines {
  const t = Date.parse(openedAt);
  const paragraph: Record<Art73Category, string> = { serious: 'Art. 73(2)', widespread_or_critical_infrastructure: 'Art. 73(3)', death: 'Art. 73(4)' };
  return {
    art73,
    report_due_at: art73 === null ? null : iso(t + ART73_DAYS[art73] * DAY_MS),
    article_73: ART73_CATEGORIES.map((c) => ({ category: c, days: ART73_DAYS[c], due_at: iso(t + ART73_DAYS[c] * DAY_MS), paragraph: paragraph[c] })),
  };
}

type StoredLinks = IncidentLinks & { art73: Art73Category | null; replay_session_id: string | null };

export function incidentView(row: IncidentRow, notes?: IncidentNoteRow[]): IncidentView {
  const links = JSON.parse(row.links) as StoredLinks;
  return {
    id: row.incident_id,
    title: row.title,
    severity: row.severity,
    description: row.description,
    status: row.status,
    assignee: row.assignee,
    links,
    opened_by: JSON.parse(row.opened_by) as TrailActor,
    log_id: row.log_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    deadlines: deadlinesOf(row.created_at, links.art73),
    ...(notes ? { notes: notes.map((n) => ({ id: n.note_id, kind: n.kind, body: JSON.parse(n.body) as JsonObject, actor: JSON.parse(n.actor) as TrailActor, log_id: n.log_id, created_at: n.created_at })) } : {}),
  };
}

const uniq = (xs: string[] | undefined) => [...new Set(xs ?? [])];

export class Incidents {
  private readonly newId: () => string;

  constructor(private readonly deps: IncidentDeps) {
    this.newId = deps.newId ?? (() => uuidv7(deps.clock()));
  }

  /** Opens an incident; with `fromReplay`, its title, trace and evidence come from the replay's root cause (which must have detected one). */
  /** Opens an incident: title and severity given, or taken from a replay's root cause (from_replay_session_id). */
  async open(companyId: string, actor: TrailActor, input: Partial<IncidentInput> & { from_replay_session_id?: string | undefined }): Promise<IncidentView> {
    let cause: DetectedCause | null = null;
    let base: Partial<IncidentInput> = input;
    if (input.from_replay_session_id !== undefined) {
      cause = await this.deps.replayCause(companyId, input.from_replay_session_id);
      if (!cause.detected) throw new GovernanceRefusal('nothing_detected', `the root cause of replay ${input.from_replay_session_id} detected nothing to open an incident for`);
      base = {
        ...input,
        title: input.title ?? `${cause.root_cause_type}: ${cause.description}`.slice(0, 300),
        severity: input.severity ?? (cause.root_cause_type === 'POLICY_VIOLATION' || cause.root_cause_type === 'INTEGRITY_FAILURE' ? 'high' : 'medium'),
        description: input.description ?? cause.description,
        trace_ids: [...(input.trace_ids ?? []), cause.trace_id],
        log_ids: [...(input.log_ids ?? []), ...cause.evidence],
      };
    }
    const { title, severity } = base;
    if (!title || !severity) throw new InputError([{ field: '/body', message: 'needs title and severity (or from_replay_session_id)' }]);
    const links: StoredLinks = {
      trace_ids: uniq(base.trace_ids),
      decision_ids: uniq(base.decision_ids),
      log_ids: uniq(base.log_ids),
      approval_ids: uniq(base.approval_ids),
      art73: base.art73 ?? null,
      replay_session_id: cause?.replay_session_id ?? null,
    };
    const incidentId = this.newId();
    const appended = await this.deps.recorder.record(
      companyId,
      'incident.opened',
      actor,
      { incident_id: incidentId, title, severity, description: base.description ?? null, links: links as unknown as JsonObject, root_cause: cause ? ({ root_cause_type: cause.root_cause_type, confidence: cause.confidence, evidence: cause.evidence } as JsonObject) : null },
      { trace_id: links.trace_ids.length === 1 ? links.trace_ids[0] : null },
    );
    const row: IncidentRow = { company_id: companyId, incident_id: incidentId, title, severity, description: base.description ?? null, status: 'open', assignee: null, links: JSON.stringify(links), opened_by: JSON.stringify(actor), log_id: appended.log_id, created_at: appended.created_at, updated_at: appended.created_at };
    await this.deps.store.insertIncident(row);
    await this.note(companyId, incidentId, 'opened', { title, severity }, actor, appended.log_id, appended.created_at);
    await this.deps.events.emit(companyId, 'incident.opened', { incident_id: incidentId, title, severity, log_id: appended.log_id });
    return incidentView(row);
  }

  async get(companyId: string, incidentId: string): Promise<IncidentView> {
    const row = await this.row(companyId, incidentId);
    return incidentView(row, await this.deps.store.notes(companyId, incidentId));
  }

  async list(companyId: string, q: { status?: string | undefined; before?: string | undefined; limit: number }): Promise<IncidentView[]> {
    return (await this.deps.store.listIncidents(companyId, q)).map((r) => incidentView(r));
  }

  private async row(companyId: string, incidentId: string): Promise<IncidentRow> {
    const row = await this.deps.store.getIncident(companyId, incidentId);
    if (!row) throw new NotFoundError(`incident ${incidentId} not found`);
    return row;
  }

  private async note(companyId: string, incidentId: string, kind: string, body: unknown, actor: TrailActor, logId: string, at: string): Promise<void> {
    await this.deps.store.insertNote({ company_id: companyId, incident_id: incidentId, note_id: this.newId(), kind, body: JSON.stringify(body), actor: JSON.stringify(actor), log_id: logId, created_at: at });
  }

  /** One change: recorded, noted, applied, announced. A closed incident takes comments only. */
  private async change(companyId: string, actor: TrailActor, incidentId: string, kind: 'assigned' | 'commented' | 'status_changed', body: JsonObject, set: Partial<IncidentRow>): Promise<IncidentView> {
    const row = await this.row(companyId, incidentId);
    if (row.status === 'closed' && kind !== 'commented') throw new GovernanceRefusal('incident_closed', 'the incident is closed');
    const links = JSON.parse(row.links) as StoredLinks;
    const appended = await this.deps.recorder.record(companyId, `incident.${kind}`, actor, { incident_id: incidentId, ...body }, { trace_id: links.trace_ids.length === 1 ? links.trace_ids[0] : null });
    await this.note(companyId, incidentId, kind, body, actor, appended.log_id, appended.created_at);
    await this.deps.store.updateIncident(companyId, incidentId, { ...set, updated_at: appended.created_at });
    await this.deps.events.emit(companyId, 'incident.updated', { incident_id: incidentId, change: kind, ...body, log_id: appended.log_id });
    return this.get(companyId, incidentId);
  }

  assign(companyId: string, actor: TrailActor, incidentId: string, assignee: string): Promise<IncidentView> {
    return this.change(companyId, actor, incidentId, 'assigned', { assignee }, { assignee });
  }

  comment(companyId: string, actor: TrailActor, incidentId: string, text: string): Promise<IncidentView> {
    return this.change(companyId, actor, incidentId, 'commented', { comment: text }, {});
  }

  async setStatus(companyId: string, actor: TrailActor, incidentId: string, status: IncidentStatus, note: string | undefined): Promise<IncidentView> {
    const row = await this.row(companyId, incidentId);
    if (row.status === status) throw new GovernanceRefusal('incident_status_unchanged', `the incident is already ${status}`);
    return this.change(companyId, actor, incidentId, 'status_changed', { from: row.status, status, note: note ?? null }, { status });
  }

  // ---- the report ----

  async report(companyId: string, actor: TrailActor, incidentId: string): Promise<{ id: string; document: SignedReport }> {
    const incident = await this.get(companyId, incidentId);
    const d = this.deps;
    // The entries: the linked ones, and every entry of the linked traces.
    const rows = new Map<string, LogEntryRow>();
    for (const traceId of incident.links.trace_ids) {
      for (const r of await d.ledger.listEntries(companyId, { trace_id: traceId, order: 'asc', limit: MAX_REPORT_ENTRIES })) rows.set(r.log_id, r);
    }
    const direct = incident.links.log_ids.filter((id) => !rows.has(id));
    if (direct.length) for (const r of await d.ledger.getEntriesByLogId(companyId, direct.slice(0, MAX_REPORT_ENTRIES))) rows.set(r.log_id, r);
    for (const decisionId of incident.links.decision_ids) {
      const [r] = await d.ledger.listEntries(companyId, { event_type: 'decision.made', dataField: { name: 'decision_id', value: decisionId }, order: 'asc', limit: 1 });
      if (r) rows.set(r.log_id, r);
    }
    const entries = [...rows.values()].sort((a, b) => a.seq - b.seq).slice(0, MAX_REPORT_ENTRIES);
    const verified: JsonObject[] = [];
    for (const e of entries) {
      const check = await d.checkEntry(companyId, e.log_id);
      verified.push({ log_id: e.log_id, seq: e.seq, event_type: e.event_type, created_at: e.created_at, trace_id: e.trace_id, agent_id: e.agent_id, hash: e.hash, chain_valid: check?.chain_valid ?? false, signature_valid: check?.signature_valid ?? false, merkle_included: check?.merkle_included ?? false, erased: e.erased_at !== null });
    }
    const causes: JsonObject[] = [];
    for (const traceId of incident.links.trace_ids.slice(0, 20)) {
      const c = await d.traceCause(companyId, traceId);
      if (c) causes.push(c as unknown as JsonObject);
    }
    // Approvals: those linked, and those of the linked traces and decisions.
    const approvals = new Map<string, JsonObject>();
    const now = d.clock();
    for (const id of incident.links.approval_ids) {
      const a = await d.store.getApproval(companyId, id);
      if (a) approvals.set(id, approvalView(a, now) as unknown as JsonObject);
    }
    for (const traceId of incident.links.trace_ids) for (const a of await d.store.listApprovals(companyId, { kind: 'request', trace_id: traceId, limit: 200 })) approvals.set(a.approval_id, approvalView(a, now) as unknown as JsonObject);
    for (const decisionId of incident.links.decision_ids) for (const a of await d.store.listApprovals(companyId, { kind: 'request', decision_id: decisionId, limit: 200 })) approvals.set(a.approval_id, approvalView(a, now) as unknown as JsonObject);
    const checks = await d.store.getChecks(companyId, entries.map((e) => e.log_id));
    const policy = entries
      .filter((e) => e.event_type === 'policy.evaluated')
      .map((e) => {
        const data = (e.data === null ? {} : JSON.parse(e.data)) as JsonObject;
        const c = checks.find((x) => x.log_id === e.log_id && x.kind === 'policy');
        return { log_id: e.log_id, policy_id: data.policy_id ?? null, policy_version: data.policy_version ?? null, verdict: data.verdict ?? data.result ?? null, action: data.action ?? null, tool: data.tool ?? null, check: c ? (checkView(c).policy_check as unknown as JsonObject) : null } as JsonObject;
      });
    const approvalChecks = checks.filter((c) => c.kind === 'approval').map((c) => ({ execution_log_id: c.log_id, ...(checkView(c).approval_check as unknown as JsonObject) }));
    const report: JsonObject = {
      kind: 'incident',
      report_id: this.newId(),
      company_id: companyId,
      generated_at: iso(now),
      generated_by: actor,
      incident: JSON.parse(JSON.stringify(incident)) as JsonObject,
      deadlines: JSON.parse(JSON.stringify(incident.deadlines)) as JsonObject,
      entries: { count: entries.length, all_valid: verified.every((v) => v.chain_valid === true && v.signature_valid === true), truncated: rows.size > MAX_REPORT_ENTRIES, items: verified },
      root_causes: causes,
      approvals: [...approvals.values()],
      approval_checks: approvalChecks,
      policy_evaluations: policy,
    };
    const digest = reportDigest(report);
    const key = d.keyring.active;
    const document: SignedReport = {
      format: INCIDENT_REPORT_FORMAT,
      report,
      signature: { algorithm: 'Ed25519', key_id: key.keyId, public_key: toBase64(key.raw), digest, value: toBase64(key.custody.sign(reportSignatureMessage(digest))) },
      key_transitions: await d.transitions(),
    };
    const id = report.report_id as string;
    await d.store.insertReport({ company_id: companyId, report_id: id, incident_id: incident.id, document: JSON.stringify(document), created_at: report.generated_at as string, created_by: JSON.stringify(actor) });
    const appended = await d.recorder.record(companyId, 'incident.report_generated', actor, { incident_id: incident.id, report_id: id, digest });
    await this.note(companyId, incident.id, 'report', { report_id: id, digest }, actor, appended.log_id, appended.created_at);
    return { id, document };
  }

  async getReport(companyId: string, incidentId: string, reportId: string): Promise<SignedReport> {
    const row = await this.deps.store.getReport(companyId, reportId);
    if (!row || row.incident_id !== incidentId) throw new NotFoundError(`incident ${incidentId} has no report ${reportId}`);
    return JSON.parse(row.document) as SignedReport;
  }
}
