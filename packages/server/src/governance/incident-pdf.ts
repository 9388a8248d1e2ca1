// An incident report as a readable PDF (pdfkit): the incident, its Art. 73 deadlines, the root
// cause, the entries verified, the approvals and policy evaluations involved, and the timeline of
// notes. The signed JSON is the evidence; the PDF says how to check it.
import type { SignedReport } from '@audit-ledger/core';
import { BAD, GOOD, MUTED, pdfLayout } from '../pdf/layout.js';

type R = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- the report's JSON, read for display only


const who = (a: R | null | undefined) => (!a ? 'unknown' : a.kind === 'user' ? String(a.email) : a.kind === 'api_key' ? `API key ${a.key_prefix ?? a.key_id}` : a.kind === 'service' ? `the service (${a.task})` : 'the operator');

export function incidentPdf(doc: SignedReport): Promise<Buffer> {
  const r = doc.report as R;
  const i = r.incident as R;
  const { h1, h2, p, row, finish } = pdfLayout({ title: `Incident report: ${i.title}`, subject: String(r.company_id) }, 8.5);

  h1(`Incident report: ${i.title}`);
  p(`Incident ${i.id}, severity ${i.severity}, status ${i.status}${i.assignee ? `, assigned to ${i.assignee}` : ''}.`);
  p(`Opened ${i.created_at} by ${who(i.opened_by)}. Report ${r.report_id} generated ${r.generated_at} by ${who(r.generated_by)}.`, MUTED);
  if (i.description) p(String(i.description));

  h2('EU AI Act Article 73 reporting deadlines');
  const d = r.deadlines as R;
  p(d.art73 ? `Recorded as ${d.art73}: report due by ${d.report_due_at}.` : 'Not recorded as a serious incident under Article 73; the deadlines would be:', d.art73 ? BAD : MUTED);
  row(['Paragraph', 'Category', 'Days', 'Due at'], [80, 200, 50, 160], true);
  for (const x of d.article_73 as R[]) row([x.paragraph, x.category, String(x.days), x.due_at], [80, 200, 50, 160]);

  h2('Root cause');
  if ((r.root_causes as R[]).length === 0) p('No linked trace to analyse.', MUTED);
  for (const c of r.root_causes as R[]) p(`Trace ${c.trace_id}: ${c.detected ? `${c.root_cause_type} (confidence ${Number(c.confidence).toFixed(2)}): ${c.description}` : 'nothing went wrong'} (replay ${c.replay_session_id}).`, c.detected ? BAD : GOOD);

  h2('Entries, each verified');
  const e = r.entries as R;
  p(`${e.count} entries${e.truncated ? ' (truncated)' : ''}: ${e.all_valid ? 'every one verifies (hash, chain link, signature)' : 'SOME DO NOT VERIFY'}.`, e.all_valid ? GOOD : BAD);
  row(['Seq', 'Created at', 'Event type', 'Hash', 'Valid'], [45, 135, 140, 150, 40], true);
  for (const x of e.items as R[]) row([String(x.seq), x.created_at, x.event_type, String(x.hash).slice(0, 24) + '…', x.chain_valid && x.signature_valid ? 'yes' : 'NO'], [45, 135, 140, 150, 40]);

  h2('Approvals');
  if ((r.approvals as R[]).length === 0) p('None involved.', MUTED);
  for (const a of r.approvals as R[]) p(`${a.id}: ${a.action} (${a.risk}) ${a.status}; arguments ${String(a.arguments_hash ?? '').slice(0, 16)}…; approved by ${(a.approvals as R[]).map((x) => x.email).join(', ') || 'nobody'}; uses ${a.uses}/${a.max_uses ?? '∞'}.`);
  for (const c of r.approval_checks as R[]) p(`Execution ${c.execution_log_id}: approval check ${c.result}${c.detail ? ` (${c.detail})` : ''}.`, c.result === 'ok' ? GOOD : BAD);

  h2('Policy evaluations');
  if ((r.policy_evaluations as R[]).length === 0) p('None involved.', MUTED);
  for (const x of r.policy_evaluations as R[]) p(`${x.log_id}: policy ${x.policy_id} v${x.policy_version ?? '?'} → ${x.verdict}${x.check ? ` (register: ${x.check.result})` : ''}.`);

  h2('Timeline of the incident');
  for (const n of (i.notes ?? []) as R[]) row([n.created_at, n.kind, who(n.actor), JSON.stringify(n.body)], [135, 80, 130, 165]);

  h2('How to check this report');
  p(`The JSON of this report is signed (format ${doc.format}, digest ${doc.signature.digest}, key ${doc.signature.key_id}). Verify it offline with: audit-ledger-verify incident-report.json --public-key <the pinned keys>.`, MUTED);
  return finish();
}
