// A compliance report as a readable PDF (pdfkit): the summary, a chart of events per day, the
// verification coverage, and every section of the signed JSON in words and tables. The JSON is the
// evidence (signed, verifiable offline); the PDF says where to find it and how to check it.
import type { JsonObject, SignedReport } from '@audit-ledger/core';
import { ACCENT, BAD, GOOD, INK, MUTED, pdfLayout } from '../pdf/layout.js';

type R = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- the report's JSON, read for display only


export function reportPdf(doc: SignedReport): Promise<Buffer> {
  const r = doc.report as R;
  const { pdf, width, h1, h2, p, row, finish } = pdfLayout({ title: `Audit ledger compliance report ${r.period.from} to ${r.period.to}`, subject: String(r.company_name ?? r.company_id) });

  h1('Compliance report');
  p(`${r.company_name ?? ''} (company ${r.company_id})`);
  p(`Period: ${r.period.from} to ${r.period.to} (from inclusive, to exclusive)`, MUTED);
  p(`Generated ${r.generated_at} by ${actor(r.generated_by)}; report ${r.report_id}`, MUTED);

  h2('Summary');
  const ok = r.integrity.status === 'valid';
  p(`${r.summary.entries} entries (seq ${r.summary.first_seq ?? '–'} to ${r.summary.last_seq ?? '–'}), ${r.summary.event_types} event types, ${r.summary.agents} agents.`);
  p(`Integrity of the period: ${ok ? 'VALID' : 'BROKEN'}: ${r.integrity.entries_checked} entries checked (hash, content, link, signature), ${r.integrity.entries_erased} with erased content, ${r.integrity.problems.length} problems.`, ok ? GOOD : BAD);
  p(`Checkpoints signed in the period: ${r.checkpoints.signed_in_period}; the last ${r.checkpoints.covers_period ? 'covers every entry of the period' : 'does not yet cover the whole period'}${r.checkpoints.last ? `, cosigned by ${r.checkpoints.last.cosignatures.length} witness(es)` : ''}.`);
  p(`Days without events: ${r.ingestion_gaps.days_without_events.length}. Human review rejections: ${r.hitl_rejections.count}. Erasures: ${r.erasures.length}. Legal holds in force: ${r.legal_holds.length}.`);

  h2('Events per day');
  barChart(pdf, r.events_per_day as Array<{ day: string; count: number }>, width);

  h2('Verification coverage');
  coverage(pdf, r, width);

  h2('Entries by event type');
  row(['Event type', 'Entries'], [380, 100], true);
  for (const e of (r.entries_by_type as R[]).slice(0, 40)) row([String(e.event_type), String(e.count)], [380, 100]);
  h2('Entries by agent');
  row(['Agent', 'Entries'], [380, 100], true);
  for (const e of (r.entries_by_agent as R[]).slice(0, 40)) row([String(e.agent_id ?? '(none)'), String(e.count)], [380, 100]);

  h2('Ingestion gaps');
  p(r.ingestion_gaps.days_without_events.length ? `No events on: ${(r.ingestion_gaps.days_without_events as string[]).join(', ')}.` : 'Events were recorded on every day of the period.');

  h2('Integrity problems');
  if (r.integrity.problems.length === 0) p('None: every entry of the period verifies.', GOOD);
  for (const x of (r.integrity.problems as R[]).slice(0, 50)) p(`seq ${x.seq}: ${x.kind}${x.detail ? ` (${x.detail})` : ''}`, BAD);
  p(`Chain status now: ${r.integrity.chain_status_now}; background verification coverage ${r.integrity.coverage_percent_now}%.`, MUTED);

  h2('Checkpoints and witnesses');
  if (r.checkpoints.last) {
    const c = r.checkpoints.last;
    p(`Last checkpoint of the period: tree size ${c.tree_size}, root ${c.root_hash}, signed ${c.timestamp} by key ${c.key_id}.`);
    for (const w of c.cosignatures as R[]) p(`Cosigned by witness ${w.witness} at ${new Date(Number(w.timestamp) * 1000).toISOString()}.`);
    if ((c.cosignatures as R[]).length === 0) p('No witness cosignatures (WITNESSES not configured, or not yet answered).', MUTED);
  } else p('No checkpoint was signed in the period.', MUTED);

  h2('Signing keys and transitions');
  for (const k of r.keys as R[]) p(`${k.key_id} (${k.algorithm}): active ${k.active_from} to ${k.active_to ?? 'now'}`);
  for (const t of r.key_transitions as R[]) p(`Transition ${t.old_key_id} → ${t.new_key_id} at ${t.created_at}, signed by both keys.`, MUTED);

  h2('Retention, legal holds and erasures');
  p(`Retention: content kept ${r.retention.content_days === null ? 'without limit' : `${r.retention.content_days} days`}${Object.keys(r.retention.by_event_type).length ? `; by event type ${JSON.stringify(r.retention.by_event_type)}` : ''}; ${r.retention.erased_total} entries erased by retention in all.`);
  for (const h of r.legal_holds as R[]) p(`Hold ${h.id} (${h.status}): ${JSON.stringify(h.scope)}, "${h.reason}"${h.case_reference ? `, case ${h.case_reference}` : ''}, placed ${h.created_at}${h.released_at ? `, released ${h.released_at}` : ''}.`);
  for (const e of r.erasures as R[]) p(`Erasure ${e.id} (${e.kind}) at ${e.created_at} by ${actor(e.requested_by)}: ${e.erased_count} entries, basis "${e.legal_basis}".`);

  h2('Human review rejections');
  if (r.hitl_rejections.count === 0) p('None in the period.', MUTED);
  for (const x of (r.hitl_rejections.items as R[]).slice(0, 30)) p(`${x.created_at}: ${x.data?.reviewer ?? ''}: ${x.data?.rejection_reason ?? '(content erased)'}`);

  if (r.approvals) {
    h2('Approvals');
    const a = r.approvals as R;
    p(`${a.requested} approval requests (${Object.entries(a.by_outcome).map(([k, v]) => `${v} ${k}`).join(', ') || 'none'}); ${a.critical} critical (two approvers each); ${a.escalated} escalated.`);
    p(`${a.executions_checked} executions named an approval; ${a.violations.count} of them did not match it (${Object.entries(a.violations.by_result).map(([k, v]) => `${v} ${k}`).join(', ') || 'none'}); ${a.standing_approvals_used.executions} ran under a standing approval.`, a.violations.count > 0 ? BAD : INK);
    for (const t of a.time_to_decision_by_team as R[]) p(`Team ${t.team}: ${t.decided} decided, median ${Math.round(t.median_seconds)} s, longest ${Math.round(t.max_seconds)} s.`, MUTED);
    h2('Policy evaluations');
    const pol = r.policies as R;
    p(`${pol.evaluations} evaluations, ${pol.versions_created} policy versions registered, ${pol.unknown_versions} evaluations naming a version the register lacks.`, pol.unknown_versions > 0 ? BAD : INK);
    for (const g of (pol.by_policy_version_verdict as R[]).slice(0, 40)) p(`${g.policy_id} v${g.version ?? '?'}: ${g.count} × ${g.verdict}`, MUTED);
  }

  h2('Anomalies');
  const anomalies = (r.anomalies.integrity_violations as R[]).length + (r.anomalies.traces_with_anomalies as R[]).length;
  if (anomalies === 0) p('No integrity violation and no trace flagged by the forensics in the period.', MUTED);
  for (const v of (r.anomalies.integrity_violations as R[]).slice(0, 30)) p(`Integrity violation at seq ${v.seq}: ${v.kind}: ${v.detail}`, BAD);
  for (const t of (r.anomalies.traces_with_anomalies as R[]).slice(0, 30)) p(`Trace ${t.trace_id}: ${t.event_count} events, ${t.first_at} to ${t.last_at}; root cause ${t.root_cause_type === null ? 'not recorded (replayed before types were kept)' : String(t.root_cause_type)}.`);

  h2('How to verify this report');
  p('This PDF is a rendering. The evidence is the signed JSON (GET /api/v1/compliance/reports/{id}), checked offline with the public key you pinned:');
  pdf.font('Courier').fontSize(9).text('audit-ledger-verify report.json --public-key keys.json', { width }).font('Helvetica').fontSize(10);
  p(`Digest (SHA-256 of the canonical report): ${doc.signature.digest}; signed by key ${doc.signature.key_id}.`, MUTED);
  return finish();
}

function actor(a: JsonObject | R | null | undefined): string {
  if (!a) return 'unknown';
  if (a.kind === 'user') return `${a.email} (user)`;
  if (a.kind === 'api_key') return `API key ${a.key_prefix}…`;
  return a.kind === 'service' ? `the service (${a.task})` : 'the operator';
}

function barChart(pdf: PDFKit.PDFDocument, days: Array<{ day: string; count: number }>, width: number): void {
  const height = 120;
  if (pdf.y > pdf.page.height - height - 80) pdf.addPage();
  const top = pdf.y + 5;
  const max = Math.max(1, ...days.map((d) => d.count));
  const bar = Math.max(1, width / Math.max(1, days.length));
  pdf.save();
  pdf.strokeColor(MUTED).lineWidth(0.5).moveTo(50, top + height).lineTo(50 + width, top + height).stroke();
  days.forEach((d, i) => {
    const h = d.count === 0 ? 2 : (d.count / max) * height; // a day without events shows as a red tick
    pdf.rect(50 + i * bar + bar * 0.1, top + height - h, bar * 0.8, h).fill(d.count === 0 ? BAD : ACCENT);
  });
  pdf.restore();
  pdf.fillColor(MUTED).fontSize(8);
  pdf.text(`max ${max} per day`, 50, top - 2, { width, align: 'right' });
  if (days.length > 0) {
    pdf.text(days[0]?.day ?? '', 50, top + height + 3);
    pdf.text(days.at(-1)?.day ?? '', 50, top + height + 3, { width, align: 'right' });
  }
  pdf.fillColor(INK).fontSize(10);
  pdf.x = 50;
  pdf.y = top + height + 18;
}

function coverage(pdf: PDFKit.PDFDocument, r: R, width: number): void {
  const total = Math.max(1, Number(r.summary.entries));
  const checked = Number(r.integrity.entries_checked);
  const erased = Number(r.integrity.entries_erased);
  const bad = (r.integrity.problems as R[]).length;
  const top = pdf.y + 4;
  const w = (n: number) => (n / total) * width;
  pdf.save();
  pdf.rect(50, top, width, 18).fill('#e4e7eb');
  pdf.rect(50, top, w(checked - erased), 18).fill(GOOD);
  pdf.rect(50 + w(checked - erased), top, w(erased), 18).fill('#8e9aaf');
  if (bad > 0) pdf.rect(50, top, Math.max(2, w(bad)), 18).fill(BAD);
  pdf.restore();
  pdf.x = 50;
  pdf.y = top + 24;
  pdf.fillColor(MUTED).fontSize(9).text(`${checked} of ${Number(r.summary.entries)} entries verified (green), ${erased} of them with erased content (grey), ${bad} problems (red).`, { width });
  pdf.fillColor(INK).fontSize(10);
}
