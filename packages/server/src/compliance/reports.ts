// Period reports for regulators and auditors (docs/compliance.md, "Period reports"): for a time
// range, what was recorded (by type, agent, day; ingestion gaps), whether it verifies (every entry
// of the range checked by the core's scan: hash, content, link, signature, erasure record; the checkpoints and
// witness cosignatures covering it), the keys and their transitions, retention, holds, erasures,
// human review rejections and anomalies. Signed with the service's key as a JSON document
// (core/report.ts) that the verify package checks offline, and rendered as a PDF (report-pdf.ts).
import { randomUUID } from 'node:crypto';
import { COMPLIANCE_REPORT_FORMAT, type JsonObject, reportDigest, reportSignatureMessage, type SignedReport, toBase64 } from '@audit-ledger/core';
import type { Keyring } from '../ledger/keyring.js';
import { cosignedCheckpointView, timestampView } from '../ledger/proofs.js';
import type { IntegrityVerifier } from '../integrity/verifier.js';
import type { AccountStore } from '../store/accounts.js';
import type { ForensicsStore } from '../store/forensics.js';
import type { KeyStore } from '../store/keys.js';
import type { LedgerStore } from '../store/ledger.js';
import type { Period, ReportStore } from '../store/reports.js';
import type { WitnessStore } from '../store/witnesses.js';
import type { GovernanceStore } from '../store/governance.js';
import { InputError, NotFoundError } from '../kernel/domain-error.js';
import { iso } from '../kernel/time.js';
import type { Compliance } from './service.js';
import type { AdminTrail, TrailActor } from '../ingestion/recorder.js';

const DAY_MS = 86_400_000;

export interface ReportDeps {
  /** New record ids (random UUIDs unless a test supplies its own). */
  newId?: () => string;
  reportStore: ReportStore;
  ledger: LedgerStore;
  signingKeys: KeyStore;
  witnessStore: WitnessStore;
  forensicsStore: ForensicsStore;
  accounts: AccountStore;
  keyring: Pick<Keyring, 'active'>;
  verifier: Pick<IntegrityVerifier, 'status' | 'checkRange'>;
  compliance: Compliance;
  trail: AdminTrail;
  clock: () => number;
  /** The governance read models: approvals and the checks made at ingestion. */
  governance: GovernanceStore;
}

/** A period longer than this is refused: split it (a report checks every entry of its period). */
export const MAX_REPORT_DAYS = 366;

export class Reports {
  constructor(private readonly deps: ReportDeps) {}

  /** Builds, signs, keeps and records a report of [from, to) (at most MAX_REPORT_DAYS; from before to, as instants). */
  async generate(companyId: string, actor: TrailActor, period: Period): Promise<{ id: string; document: SignedReport }> {
    const from = Date.parse(period.from);
    const to = Date.parse(period.to);
    if (!(from < to)) throw new InputError([{ field: '/body/from', message: 'must be before to' }]);
    if (to - from > MAX_REPORT_DAYS * 86_400_000) throw new InputError([{ field: '/body/to', message: `at most ${MAX_REPORT_DAYS} days after from (make several reports)` }]);
    const report = await this.build(companyId, actor, period);
    const digest = reportDigest(report);
    const key = this.deps.keyring.active;
    const document: SignedReport = {
      format: COMPLIANCE_REPORT_FORMAT,
      report,
      signature: { algorithm: 'Ed25519', key_id: key.keyId, public_key: toBase64(key.raw), digest, value: toBase64(key.custody.sign(reportSignatureMessage(digest))) },
      key_transitions: await this.deps.signingKeys.transitions(),
    };
    const id = report.report_id as string;
    await this.deps.reportStore.insert({ company_id: companyId, report_id: id, period_from: period.from, period_to: period.to, created_at: report.generated_at as string, created_by: JSON.stringify(actor), document: JSON.stringify(document) });
    await this.deps.trail.record(companyId, 'compliance.report_generated', actor, { report_id: id, period: { ...period }, digest });
    return { id, document };
  }

  private async build(companyId: string, actor: TrailActor, period: Period): Promise<JsonObject> {
    const d = this.deps;
    const [company, byType, byAgent, perDay, seqs, checkpoints, keys, transitions, retention, holds, erasures, status] = await Promise.all([
      d.accounts.getCompany(companyId),
      d.reportStore.countBy(companyId, period, 'event_type'),
      d.reportStore.countBy(companyId, period, 'agent_id'),
      d.reportStore.perDay(companyId, period),
      d.reportStore.seqRange(companyId, period),
      d.reportStore.checkpoints(companyId, period),
      d.signingKeys.list(),
      d.signingKeys.transitions(),
      d.compliance.retention(companyId),
      d.compliance.holds(companyId),
      d.compliance.erasures(companyId),
      d.verifier.status(companyId),
    ]);
    // The period's UTC days, up to its end and never past today: a day that has not begun is no gap.
    const days: Array<{ day: string; count: number }> = [];
    const until = Math.min(Date.parse(period.to), d.clock());
    for (let t = Math.floor(Date.parse(period.from) / DAY_MS) * DAY_MS; t < until; t += DAY_MS) {
      const day = iso(t).slice(0, 10);
      days.push({ day, count: perDay.get(day) ?? 0 });
    }
    const last = checkpoints.last;
    const cosigned = last ? cosignedCheckpointView(last, await d.witnessStore.cosignatures(companyId, last.tree_size)) : null;
    const rejections = await d.reportStore.entriesOfType(companyId, period, 'hitl.rejected', 100);
    const traces = (await d.forensicsStore.traceSummaries(companyId, { limit: 1000 })).filter((t) => t.anomaly_detected === true && t.last_at >= period.from && t.first_at < period.to);
    // The period's entries checked as a full verification checks them (the tree is the background verifier's).
    const checked = seqs ? await d.verifier.checkRange(companyId, seqs.first, seqs.last) : null;
    const integrity = {
      entries_checked: checked?.counts.entries ?? 0,
      signatures_checked: checked?.counts.signatures ?? 0,
      entries_erased: checked?.counts.erased ?? 0,
      problems: (checked?.violations ?? []).map((v) => ({ seq: v.seq, log_id: v.log_id, kind: v.kind, detail: v.detail })),
    };
    const violations = seqs ? await d.reportStore.violations(companyId, seqs) : [];
    const governance = await this.governance(companyId, period);
    const total = byType.reduce((n, r) => n + r.count, 0);
    return {
      report_id: (this.deps.newId ?? randomUUID)(),
      company_id: companyId,
      company_name: company?.name ?? null,
      period: { from: period.from, to: period.to },
      generated_at: iso(d.clock()),
      generated_by: actor,
      summary: { entries: total, first_seq: seqs?.first ?? null, last_seq: seqs?.last ?? null, event_types: byType.length, agents: byAgent.filter((a) => a.key !== null).length },
      entries_by_type: byType.map((r) => ({ event_type: r.key, count: r.count })),
      entries_by_agent: byAgent.map((r) => ({ agent_id: r.key, count: r.count })),
      events_per_day: days,
      ingestion_gaps: { days_without_events: days.filter((x) => x.count === 0).map((x) => x.day) },
      integrity: {
        status: integrity.problems.length === 0 ? 'valid' : 'broken',
        range: seqs ? { from_seq: seqs.first, to_seq: seqs.last } : null,
        ...integrity,
        problems: integrity.problems.slice(0, 1000),
        chain_status_now: status.chain_status,
        coverage_percent_now: status.coverage_percent,
      },
      checkpoints: {
        signed_in_period: checkpoints.count,
        first: checkpoints.first ? { tree_size: checkpoints.first.tree_size, root_hash: checkpoints.first.root_hash, timestamp: checkpoints.first.timestamp } : null,
        last: cosigned ? (JSON.parse(JSON.stringify(cosigned)) as JsonObject) : null,
        covers_period: seqs !== null && last !== undefined && last.tree_size > seqs.last,
        // The RFC 3161 timestamp of the newest timestamped checkpoint the last one extends, as in an evidence bundle (docs/ledger-format.md §19).
        timestamp: last ? (JSON.parse(JSON.stringify(await timestampView({ ledger: d.ledger, witnessStore: d.witnessStore }, companyId, last.tree_size))) as JsonObject | null) : null,
      },
      keys: keys.map((k) => ({ key_id: k.key_id, algorithm: k.algorithm, public_key: k.public_key, active_from: k.active_from, active_to: k.active_to })),
      key_transitions: JSON.parse(JSON.stringify(transitions)) as JsonObject[],
      retention: JSON.parse(JSON.stringify(retention)) as JsonObject,
      legal_holds: holds.filter((h) => h.created_at < period.to && (h.released_at === null || h.released_at >= period.from)).map((h) => JSON.parse(JSON.stringify(h)) as JsonObject),
      erasures: erasures.filter((e) => e.created_at >= period.from && e.created_at < period.to).map((e) => ({ id: e.id, kind: e.kind, legal_basis: e.legal_basis, requested_by: e.requested_by, created_at: e.created_at, erased_count: e.erased_count, record_log_ids: e.record_log_ids })),
      hitl_rejections: { count: byType.find((r) => r.key === 'hitl.rejected')?.count ?? 0, items: rejections.map((r) => ({ log_id: r.log_id, created_at: r.created_at, trace_id: r.trace_id, data: r.data === null ? null : (JSON.parse(r.data) as JsonObject) })) },
      approvals: governance.approvals,
      policies: governance.policies,
      anomalies: {
        integrity_violations: violations.map((v) => ({ seq: v.seq, log_id: v.log_id, kind: v.kind, detail: v.detail, detected_at: v.detected_at })),
        traces_with_anomalies: traces.map((t) => ({ trace_id: t.trace_id, first_at: t.first_at, last_at: t.last_at, event_count: t.event_count, root_cause_type: t.anomaly_type })),
      },
    };
  }

  /**
   * The governance sections (docs/governance.md): approval requests of the period by outcome, the
   * time to a decision per team, executions whose check failed, standing approvals used; policy
   * evaluations by policy, version and verdict, and those naming a version the register lacks.
   */
  private async governance(companyId: string, period: Period): Promise<{ approvals: JsonObject; policies: JsonObject }> {
    const d = this.deps;
    const now = d.clock();
    const [approvals, checks, evaluations, versions] = await Promise.all([
      d.governance.approvalsBetween(companyId, period.from, period.to),
      d.governance.checksBetween(companyId, period.from, period.to),
      d.reportStore.entriesOfType(companyId, period, 'policy.evaluated', 100_000),
      d.reportStore.entriesOfType(companyId, period, 'policy.version_created', 1000),
    ]);
    const requests = approvals.filter((a) => a.kind === 'request');
    const outcome = (a: (typeof requests)[number]) => (a.status === 'pending' && Date.parse(a.expires_at) <= now ? 'expired' : a.status);
    const count = <T>(xs: T[], key: (x: T) => string) => {
      const m: Record<string, number> = {};
      for (const x of xs) m[key(x)] = (m[key(x)] ?? 0) + 1;
      return m;
    };
    const byTeam = new Map<string, number[]>();
    for (const a of requests) {
      if (a.decided_at === null || (a.status !== 'approved' && a.status !== 'rejected')) continue;
      const list = byTeam.get(a.team ?? '(no team)') ?? [];
      list.push((Date.parse(a.decided_at) - Date.parse(a.created_at)) / 1000);
      byTeam.set(a.team ?? '(no team)', list);
    }
    const approvalChecks = checks.filter((c) => c.kind === 'approval');
    const violated = approvalChecks.filter((c) => c.result !== 'ok');
    const standingUsed = approvalChecks.filter((c) => c.result === 'ok' && c.basis === 'standing');
    const evals = evaluations.map((e) => {
      const data = (e.data === null ? {} : JSON.parse(e.data)) as Record<string, unknown>;
      return { policy: String(data.policy_id ?? '(unnamed)'), version: data.policy_version === undefined || data.policy_version === null ? null : String(data.policy_version), verdict: String(data.verdict ?? data.result ?? '(none)') };
    });
    const groups = count(evals, (e) => JSON.stringify([e.policy, e.version, e.verdict]));
    return {
      approvals: {
        requested: requests.length,
        by_outcome: count(requests, outcome),
        critical: requests.filter((a) => a.risk === 'critical').length,
        escalated: requests.filter((a) => a.escalated_at !== null).length,
        time_to_decision_by_team: [...byTeam.entries()].map(([team, secs]) => {
          const sorted = [...secs].sort((x, y) => x - y);
          return { team, decided: secs.length, median_seconds: sorted[Math.floor((sorted.length - 1) / 2)] ?? null, max_seconds: sorted.at(-1) ?? null };
        }),
        executions_checked: approvalChecks.length,
        violations: { count: violated.length, by_result: count(violated, (c) => c.result), items: violated.slice(0, 100).map((c) => ({ execution_log_id: c.log_id, approval_id: c.subject_id, result: c.result, detail: c.detail, check_log_id: c.check_log_id })) },
        standing_approvals_used: { executions: standingUsed.length, by_approval: count(standingUsed, (c) => c.subject_id) },
      },
      policies: {
        versions_created: versions.length,
        evaluations: evals.length,
        by_policy_version_verdict: Object.entries(groups).map(([k, n]) => {
          const [policy, version, verdict] = JSON.parse(k) as [string, string | null, string];
          return { policy_id: policy, version, verdict, count: n };
        }),
        unknown_versions: checks.filter((c) => c.kind === 'policy' && c.result !== 'ok').length,
      },
    };
  }

  /** A kept report, as it was signed. */
  async get(companyId: string, id: string): Promise<SignedReport> {
    const row = await this.deps.reportStore.get(companyId, id);
    if (!row) throw new NotFoundError(`No report ${id}`);
    return JSON.parse(row.document) as SignedReport;
  }

  async list(companyId: string) {
    return (await this.deps.reportStore.list(companyId)).map((r) => ({ id: r.report_id, from: r.period_from, to: r.period_to, created_at: r.created_at, created_by: JSON.parse(r.created_by) as TrailActor }));
  }
}
