// The auditor's offline check (`audit-ledger-verify`, and the server CLI's `verify-bundle` alias). Reads files only; needs no
// configuration, server or database. The checks are the core's (verifyBundle, ExportVerifier);
// this file reads the files and turns the structured report into lines for people.
import fs from 'node:fs';
import path from 'node:path';
import { pemCertificates, tsaSignatureProblem } from './tsa.js';
import { type AgentKey, type Check, fromBase64, parseTimeStampToken, StreamCopyVerifier, COMPLIANCE_REPORT_FORMAT, ExportVerifier, INCIDENT_REPORT_FORMAT, type KeyTransition, parseTrustedKeys, parseWitnessKey, type TrustedKey, type VerificationReport, verifyBundle, verifyReport, witnessQuorumCheck } from '@audit-ledger/core';

/** verify-bundle's exit status. `unpinned`: every check holds against keys the bundle itself carries. */
export const VERIFY_EXIT_CODES = { verified: 0, failed: 1, unreadable: 2, unpinned: 3 } as const;

const LABELS: Record<Check['status'], string> = { ok: 'OK  ', fail: 'FAIL', note: 'NOTE' };

/** One line per check: "OK   …", "FAIL …" or "NOTE …". */
export function reportLines(report: VerificationReport): string[] {
  return report.checks.map((c) => `${LABELS[c.status]} ${c.message}`);
}

type CheckpointJson = { note?: unknown; tree_size?: unknown; root_hash?: unknown; cosignatures?: Array<{ line?: unknown }> };

export async function verifyCommand(file: string, opts: { publicKey?: string; checkpoint?: string; stream?: boolean; witness?: string[]; witnessQuorum?: string; tsaCa?: string; agentKeys?: string }): Promise<{ code: number; output: string }> {
  let keys: TrustedKey[] | null = null;
  const agentKeys = opts.agentKeys ? agentKeyRegister(fs.readFileSync(opts.agentKeys, 'utf8')) : null;
  if (opts.publicKey) keys = parseTrustedKeys(fs.readFileSync(opts.publicKey, 'utf8'));
  if (opts.stream) return finish(await verifyStreamCopy(file, keys));
  const witnesses = (opts.witness ?? []).map((w) => parseWitnessKey(fs.existsSync(w) ? fs.readFileSync(w, 'utf8').trim() : w));
  const quorum = opts.witnessQuorum === undefined ? witnesses.length : Number(opts.witnessQuorum);
  if (!Number.isSafeInteger(quorum) || quorum < 0 || quorum > witnesses.length) throw new Error(`--witness-quorum must be a whole number from 0 to the number of --witness keys (${witnesses.length})`);
  let report: VerificationReport;
  let checkpoint: { note: string; cosignatures: string[] };
  const linesOf = (json: CheckpointJson | undefined) => (json?.cosignatures ?? []).map((c) => String(c.line));
  if (opts.checkpoint) {
    if (!keys) throw new Error('verifying an export needs --public-key');
    const raw = fs.readFileSync(opts.checkpoint, 'utf8');
    const json = raw.trimStart().startsWith('{') ? (JSON.parse(raw) as CheckpointJson) : null;
    checkpoint = { note: json ? String(json.note) : raw, cosignatures: linesOf(json ?? undefined) };
    const v = new ExportVerifier(keys, checkpoint.note, null, json ?? {}, keyFileTransitions(fs.readFileSync(opts.publicKey as string, 'utf8')), agentKeys);
    for await (const line of jsonLines(fs.createReadStream(file))) v.addLine(line);
    report = v.finish();
  } else {
    const doc = JSON.parse(fs.readFileSync(file, 'utf8')) as { format?: unknown; checkpoint?: CheckpointJson; timestamp?: { token?: unknown } | null };
    if (doc.format === COMPLIANCE_REPORT_FORMAT || doc.format === INCIDENT_REPORT_FORMAT) {
      let r = verifyReport(doc, keys, opts.publicKey ? keyFileTransitions(fs.readFileSync(opts.publicKey, 'utf8')) : []);
      const stamp = (doc as { report?: { checkpoints?: { timestamp?: { token?: unknown } | null } } }).report?.checkpoints?.timestamp;
      const tsa = stamp || opts.tsaCa ? tsaCheck(stamp, opts.tsaCa) : null;
      if (tsa) r = { ...r, ok: r.ok && tsa.status !== 'fail', checks: [...r.checks, tsa] };
      return finish(r);
    }
    checkpoint = { note: String(doc.checkpoint?.note), cosignatures: linesOf(doc.checkpoint) };
    report = verifyBundle(doc, keys, agentKeys ? { agentKeys } : {});
    const tsa = tsaCheck(doc.timestamp, opts.tsaCa);
    if (tsa) report = { ...report, ok: report.ok && tsa.status !== 'fail', checks: [...report.checks, tsa] };
  }
  // Independent witnesses: at least the quorum of the named ones must have cosigned the checkpoint.
  if (witnesses.length > 0) {
    const check = witnessQuorumCheck(checkpoint.note, checkpoint.cosignatures, witnesses, quorum);
    report = { ...report, ok: report.ok && check.status !== 'fail', checks: [...report.checks, check] };
  }
  return finish(report);
}

/** The agent key register from the JSON of GET /api/v1/agent-keys ({"items": [...]}), or a bare list. */
function agentKeyRegister(text: string): AgentKey[] {
  const json = JSON.parse(text) as { items?: unknown } | unknown[];
  const items = Array.isArray(json) ? json : (json as { items?: unknown }).items;
  if (!Array.isArray(items)) throw new Error('--agent-keys: expected the JSON of GET /api/v1/agent-keys ({"items": [...]})');
  return items as AgentKey[];
}

/**
 * The lines of a JSON Lines file, split on LF (U+000A) only, in constant memory: JSON strings may
 * hold U+2028 and U+2029 raw (valid JSON, and the export writes them so), which node:readline
 * would take for line ends. A CR before the LF is JSON whitespace and left to JSON.parse.
 */
export async function* jsonLines(input: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: false });
  let rest = '';
  for await (const chunk of input) {
    rest += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = rest.indexOf('\n')) >= 0) {
      yield rest.slice(0, nl);
      rest = rest.slice(nl + 1);
    }
  }
  rest += decoder.decode();
  if (rest !== '') yield rest;
}

/**
 * A log stream's copy: every line of the file, or of every file in the directory (sorted by name,
 * the segment names sort by seq), in constant memory per line. Lines that hold no stream message
 * (other syslog traffic) are counted and passed over.
 */
async function verifyStreamCopy(target: string, keys: TrustedKey[] | null): Promise<VerificationReport> {
  const files = fs.statSync(target).isDirectory()
    ? fs
        .readdirSync(target)
        .filter((f) => !f.startsWith('.'))
        .sort()
        .map((f) => path.join(target, f))
    : [target];
  const v = new StreamCopyVerifier();
  for (const f of files) for await (const line of jsonLines(fs.createReadStream(f))) v.addLine(line);
  const report = v.finish(keys);
  const read: Check = { status: 'note', code: 'entries', message: `read ${v.messages} stream messages from ${files.length === 1 ? target : `${files.length} files in ${target}`}${v.ignored ? `; ${v.ignored} other lines passed over` : ''}` };
  return { ...report, checks: [read, ...report.checks] };
}

/**
 * The RFC 3161 token's signature (docs/ledger-format.md §19): by a timestamping certificate that
 * chains to the TSA certificate the auditor pinned with --tsa-ca. Without --tsa-ca, a note saying
 * who signed it was not checked. (The imprint and the consistency with the bundle are the core's.)
 */
function tsaCheck(ts: { token?: unknown } | null | undefined, caFile: string | undefined): Check | null {
  if (!ts) return caFile ? { status: 'fail', code: 'timestamp', message: 'timestamp: --tsa-ca was given, but the document carries no RFC 3161 timestamp' } : null;
  if (!caFile) return { status: 'note', code: 'timestamp', message: 'timestamp: the document carries an RFC 3161 timestamp; pass --tsa-ca with the Time Stamping Authority\'s CA certificate to check who signed it' };
  let token;
  try {
    token = parseTimeStampToken(fromBase64(String(ts.token)));
  } catch (err) {
    return { status: 'fail', code: 'timestamp', message: `timestamp: the token is unreadable: ${(err as Error).message}` };
  }
  const problem = tsaSignatureProblem(token, pemCertificates(fs.readFileSync(caFile, 'utf8')));
  if (problem) return { status: 'fail', code: 'timestamp', message: `timestamp: ${problem}` };
  return { status: 'ok', code: 'timestamp', message: `timestamp: signed at ${token.genTime} by the pinned Time Stamping Authority` };
}

/** The transitions of a --public-key file that is the JSON of GET /integrity/keys (none for PEM or verifier keys). */
function keyFileTransitions(text: string): KeyTransition[] {
  if (!text.trimStart().startsWith('{')) return [];
  try {
    const t = (JSON.parse(text) as { transitions?: unknown }).transitions;
    return Array.isArray(t) ? (t as KeyTransition[]) : [];
  } catch {
    return [];
  }
}

function finish(report: VerificationReport): { code: number; output: string } {
  const text = reportLines(report).join('\n');
  if (!report.ok) return { code: VERIFY_EXIT_CODES.failed, output: `${text}\nNOT VERIFIED: see the FAIL lines above\n` };
  if (!report.pinned) {
    return {
      code: VERIFY_EXIT_CODES.unpinned,
      output: `${text}\nUNVERIFIED (signer not pinned): the bundle is consistent, but only against keys it carries itself; pass --public-key with the service's key (GET /api/v1/integrity/keys) to verify who signed it\n`,
    };
  }
  return { code: VERIFY_EXIT_CODES.verified, output: `${text}\nVERIFIED: every check holds\n` };
}
