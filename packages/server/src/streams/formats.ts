// How a stream batch's messages are written for a destination: the ledger's own JSON, OCSF
// (API Activity, class 6003) or CEF. Every format carries the whole message (the entry as hashed
// and its inclusion proof, or the batch header), so any copy verifies offline: OCSF in
// `unmapped.audit_ledger`, CEF in the `auditLedger` extension as base64url of the JSON (no
// character CEF must escape). The mapping is documented in docs/integrations.md.
import { STREAM_CARRIERS, type StreamBatchHeader, type StreamEntryMessage, type StreamMessage, toBase64Url } from '@audit-ledger/core';
import { VERSION } from '../kernel/version.js';

export const STREAM_FORMATS = ['ledger', 'ocsf', 'cef'] as const;
export type StreamFormat = (typeof STREAM_FORMATS)[number];

/** The OCSF schema version the events follow. */
export const OCSF_VERSION = '1.3.0';

/** Event types that record something going wrong: OCSF status Failure, CEF severity 7, syslog warning. */
export function isFailure(eventType: string): boolean {
  return /(^|\.)(failed|rejected|violated|error|denied|blocked)$/.test(eventType) || eventType === 'integrity.violation_detected';
}

const ms = (t: unknown) => (typeof t === 'string' ? Date.parse(t) : NaN);

/** Every event's class: API Activity (6003) of Application Activity (6), activity Other (99). */
const OCSF_CLASS = { category_uid: 6, category_name: 'Application Activity', class_uid: 6003, class_name: 'API Activity', activity_id: 99, type_uid: 600399, type_name: 'API Activity: Other' } as const;

/** One OCSF API Activity event for a message (the batch header is an event of activity Other too, its event_code says what it is). */
export function ocsfEvent(m: StreamMessage): Record<string, unknown> {
  const product = { name: 'audit-ledger', vendor_name: 'audit-ledger', version: VERSION };
  if (m.kind === 'batch') {
    const h = m as StreamBatchHeader;
    return {
      ...OCSF_CLASS,
      activity_name: 'audit_ledger.stream_batch',
      severity_id: 1,
      severity: 'Informational',
      status_id: 1,
      status: 'Success',
      time: Number(h.checkpoint.timestamp ?? 0) * 1000 || Date.now(),
      message: `audit-ledger stream batch ${h.batch_id}: seq ${h.from_seq}–${h.to_seq}, ${h.entry_count} entries, checkpoint tree size ${h.checkpoint.tree_size}`,
      metadata: { version: OCSF_VERSION, product, uid: h.batch_id, event_code: 'audit_ledger.stream_batch', log_name: `audit-ledger/${h.company_id}` },
      api: { operation: 'stream_batch', service: { name: 'audit-ledger' } },
      actor: { app_name: 'audit-ledger' },
      src_endpoint: { name: 'audit-ledger' },
      unmapped: { [STREAM_CARRIERS.ocsfUnmapped]: m },
    };
  }
  const e = (m as StreamEntryMessage).entry;
  const type = String(e.event_type);
  const failed = isFailure(type);
  const agent = typeof e.agent_id === 'string' ? e.agent_id : null;
  const session = typeof e.session_id === 'string' ? e.session_id : null;
  return {
    ...OCSF_CLASS,
    activity_name: type,
    severity_id: failed ? 3 : 1,
    severity: failed ? 'Medium' : 'Informational',
    status_id: failed ? 2 : 1,
    status: failed ? 'Failure' : 'Success',
    time: ms(e.timestamp) || ms(e.created_at),
    message: type,
    metadata: {
      version: OCSF_VERSION,
      product,
      uid: e.log_id,
      event_code: type,
      correlation_uid: e.trace_id ?? undefined,
      sequence: e.seq,
      logged_time: ms(e.created_at),
      log_name: `audit-ledger/${String(e.company_id)}`,
    },
    api: { operation: type, service: { name: String(e.source) } },
    actor: { app_name: String(e.source), ...(agent ? { user: { uid: agent, name: agent, type: 'AI agent', type_id: 99 } } : {}), ...(session ? { session: { uid: session } } : {}) },
    src_endpoint: { name: String(e.source) },
    unmapped: { [STREAM_CARRIERS.ocsfUnmapped]: m },
  };
}

const cefHeader = (v: string) => v.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/[\r\n]+/g, ' ');
const cefValue = (v: string) => v.replace(/\\/g, '\\\\').replace(/=/g, '\\=').replace(/\r\n|\r|\n/g, '\\n');

/** One CEF line (ArcSight CEF 0): the entry's main fields as standard keys, the whole message in auditLedger. */
export function cefLine(m: StreamMessage): string {
  const ext: Array<[string, string | number | null | undefined]> = [];
  let signature: string;
  let name: string;
  let severity: number;
  if (m.kind === 'batch') {
    const h = m as StreamBatchHeader;
    signature = 'audit_ledger.stream_batch';
    name = `stream batch seq ${h.from_seq}-${h.to_seq}`;
    severity = 1;
    ext.push(['externalId', h.batch_id], ['cnt', h.entry_count]);
  } else {
    const e = (m as StreamEntryMessage).entry;
    signature = String(e.event_type);
    name = String(e.event_type);
    severity = isFailure(signature) ? 7 : 3;
    ext.push(
      ['rt', ms(e.timestamp) || ms(e.created_at)],
      ['externalId', String(e.log_id)],
      ['act', signature],
      ['suser', typeof e.agent_id === 'string' ? e.agent_id : null],
      ['sourceServiceName', String(e.source)],
      ['cs1Label', 'trace_id'],
      ['cs1', typeof e.trace_id === 'string' ? e.trace_id : null],
      ['cs2Label', 'session_id'],
      ['cs2', typeof e.session_id === 'string' ? e.session_id : null],
      ['cn1Label', 'seq'],
      ['cn1', Number(e.seq)],
    );
  }
  ext.push([STREAM_CARRIERS.cefExtension, toBase64Url(JSON.stringify(m))]);
  const extension = ext
    .filter(([, v]) => v !== null && v !== undefined && !(typeof v === 'number' && Number.isNaN(v)))
    .map(([k, v]) => `${k}=${cefValue(String(v))}`)
    .join(' ');
  return `CEF:0|audit-ledger|audit-ledger|${cefHeader(VERSION)}|${cefHeader(signature)}|${cefHeader(name)}|${severity}|${extension}`;
}

/** A message as the format writes it (one line of text, no line break). */
export function render(format: StreamFormat, m: StreamMessage): string {
  if (format === 'ocsf') return JSON.stringify(ocsfEvent(m));
  if (format === 'cef') return cefLine(m);
  return JSON.stringify(m);
}
