// Signed period reports (docs/compliance.md, "Period reports"): the report is a JSON object, its
// digest the SHA-256 of its RFC 8785 canonical form, and the service signs a domain-separated
// message over the digest with its entry signing key. Pure; verified offline by the verify
// package like bundles, against keys the auditor pinned.
import { fromBase64, sha256Hex, utf8, verifyEd25519 } from '#crypto';
import type { Check, VerificationReport } from './checks.js';
import { type BundleTimestamp, bundleTimestampChecks, checkCheckpointNote, followTransitions } from './bundle.js';
import type { KeyTransition } from './key-transition.js';
import { canonicalJson, type JsonObject } from './json.js';
import { rawKeyFromBase64, trustedKey, type TrustedKey } from './keys.js';

export const COMPLIANCE_REPORT_FORMAT = 'audit-ledger/compliance-report/v1';
/** An incident report (docs/governance.md): the same signature scheme; its report has `kind: "incident"`. */
export const INCIDENT_REPORT_FORMAT = 'audit-ledger/incident-report/v1';
/** The first line of the signed message: a report signature can be nothing else the service signs. */
export const REPORT_SIGNATURE_CONTEXT = 'audit-ledger/v1/report\n';

/** lowercase_hex(SHA-256(JCS(report))). */
export function reportDigest(report: JsonObject): string {
  return sha256Hex(canonicalJson(report));
}

/** The bytes the service signs: the context line, then the digest in hex. */
export function reportSignatureMessage(digestHex: string): Uint8Array {
  return utf8(REPORT_SIGNATURE_CONTEXT + digestHex);
}

export interface SignedReport {
  format: typeof COMPLIANCE_REPORT_FORMAT | typeof INCIDENT_REPORT_FORMAT;
  report: JsonObject;
  signature: { algorithm: 'Ed25519'; key_id: string; public_key: string; digest: string; value: string };
  /**
   * The service's signed key transitions (docs/ledger-format.md §12), outside the signed report:
   * each is signed by the old key and the new one, so a verifier that pinned an earlier key
   * follows them to the key that signed the report, as it does for evidence bundles.
   */
  key_transitions?: KeyTransition[];
}

/**
 * Verifies a signed report (parsed JSON) against trusted keys, or (unpinned) the key it names
 * itself. Pinned keys are followed through the signed key transitions the report carries and
 * those given (a key file's), so a report signed after a rotation verifies against the old pin.
 */
export function verifyReport(doc: unknown, givenKeys: TrustedKey[] | null, transitions: KeyTransition[] = []): VerificationReport {
  const checks: Check[] = [];
  const d = doc as Partial<SignedReport> | null;
  const done = (): VerificationReport => ({ ok: !checks.some((c) => c.status === 'fail'), pinned: givenKeys !== null, checks });
  const incident = d?.format === INCIDENT_REPORT_FORMAT;
  if ((d?.format !== COMPLIANCE_REPORT_FORMAT && !incident) || typeof d?.report !== 'object' || d.report === null || typeof d.signature !== 'object' || (incident && (d.report as { kind?: unknown }).kind !== 'incident')) {
    checks.push({ status: 'fail', code: 'not_a_bundle', message: `not an audit-ledger compliance or incident report (format ${COMPLIANCE_REPORT_FORMAT} or ${INCIDENT_REPORT_FORMAT})` });
    return done();
  }
  const sig = d.signature;
  let keys = givenKeys && followTransitions(givenKeys, [...transitions, ...(Array.isArray(d.key_transitions) ? d.key_transitions : [])]).keys;
  if (!keys) {
    checks.push({ status: 'note', code: 'unpinned', message: 'no --public-key given: checking against the key the report names itself, which anyone can replace' });
    try {
      keys = [trustedKey(rawKeyFromBase64(String(sig.public_key)))];
    } catch {
      keys = [];
    }
  }
  const digest = reportDigest(d.report);
  if (digest !== sig.digest) checks.push({ status: 'fail', code: 'hash_mismatch', message: `the report's content hashes to ${digest}, the signature is over ${String(sig.digest)}: the report was changed` });
  const key = keys.find((k) => k.keyId === sig.key_id);
  let signed = false;
  try {
    signed = key !== undefined && verifyEd25519(key.raw, reportSignatureMessage(digest), fromBase64(String(sig.value)));
  } catch {
    signed = false;
  }
  if (!key) checks.push({ status: 'fail', code: 'untrusted_key', message: `signed by key ${String(sig.key_id)}, which is not a trusted key` });
  else if (!signed) checks.push({ status: 'fail', code: 'bad_signature', message: `the report signature does not verify with key ${key.keyId}` });
  else {
    const r = d.report as { company_id?: unknown; period?: { from?: unknown; to?: unknown }; incident?: { id?: unknown; title?: unknown } };
    if (incident) checks.push({ status: 'ok', code: 'report', message: `incident report of company ${String(r.company_id)} for incident ${String(r.incident?.id)} ("${String(r.incident?.title)}"), signed by key ${key.keyId}` });
    else checks.push({ status: 'ok', code: 'report', message: `compliance report of company ${String(r.company_id)} for ${String(r.period?.from)} to ${String(r.period?.to)}, signed by key ${key.keyId}` });
    // The RFC 3161 timestamp of a checkpoint the period's last checkpoint extends (docs/ledger-format.md §19).
    const cps = (d.report as { checkpoints?: { last?: { note?: unknown } | null; timestamp?: BundleTimestamp | null } }).checkpoints;
    if (cps?.timestamp && typeof cps.last?.note === 'string') {
      const last = checkCheckpointNote(cps.last.note, keys, String(r.company_id));
      if (!last.checkpoint) checks.push({ status: 'fail', code: 'timestamp', message: `timestamp: the report's last checkpoint does not verify: ${last.failure as string}` });
      else checks.push(...bundleTimestampChecks(cps.timestamp, keys, String(r.company_id), last.checkpoint).checks);
    }
  }
  return done();
}
