// Offline verification of evidence bundles and JSON Lines exports: no server, no database,
// only the documents and the public keys the auditor trusts. Pure; the caller reads the files
// and turns the checks into words (the verify CLI prints one line per check). Every check an
// auditor needs is here and described in docs/ledger-format.md.
import { bytesEqual, fromBase64, fromHex, sha256Hex, toHex, utf8, verifyEd25519 } from '#crypto';
import { type Checkpoint, noteKeyId, parseCheckpointText, parseNote } from './checkpoint.js';
import { type AgentKey, agentSignatureChecks } from './agent-signature.js';
import { ErasureLedger } from './bundle-erasures.js';
import type { Check, CheckCode, VerificationReport } from './checks.js';
import { checkEntryAlone, type EntryCheckCode } from './entry-check.js';
import { GENESIS_PREV_HASH, type LedgerEntry } from './entry.js';
import { type KeyTransition, verifyKeyTransition } from './key-transition.js';
import { applyTransitions, type KeyPeriod, keyNotActive, OPEN_PERIOD } from './key-periods.js';
import { parseTrustedKeys, rawKeyFromBase64, trustedKey, type TrustedKey } from './keys.js';
import { entryLeafHash, type Hash, verifyConsistency, verifyInclusion } from './merkle.js';
import { parseTimeStampToken, timestampProblems, type TimeStampToken } from './rfc3161.js';

export const EVIDENCE_BUNDLE_FORMAT = 'audit-ledger/evidence-bundle/v1';

export type { Check, CheckCode, VerificationReport } from './checks.js';

export const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** Checks a checkpoint note against the trusted keys; returns the parsed checkpoint or the reason it fails. */
export function checkCheckpointNote(note: string, keys: TrustedKey[], companyId: string | null): { checkpoint?: Checkpoint; signer?: string; failure?: string; inactive?: boolean } {
  let parsed;
  let checkpoint: Checkpoint;
  try {
    parsed = parseNote(note);
    checkpoint = parseCheckpointText(parsed.text);
  } catch (err) {
    return { failure: `checkpoint is malformed: ${(err as Error).message}` };
  }
  const text = utf8(parsed.text);
  const signers = parsed.signatures.flatMap((s) => keys.filter((k) => bytesEqual(noteKeyId(s.name, k.raw), s.keyId) && verifyEd25519(k.raw, text, s.signature)).map((k) => ({ name: s.name, key: k })));
  // Only a key active at the checkpoint's own timestamp counts (§8, §12).
  const active = signers.find((s) => keyNotActive(s.key.keyId, s.key.period, checkpoint.timestamp, 'a checkpoint timestamped') === null);
  const signer = active ? `${active.name} key ${active.key.keyId}` : undefined;
  if (!signer && signers.length > 0) {
    const first = signers[0] as { key: TrustedKey };
    return { failure: `key_not_active: ${keyNotActive(first.key.keyId, first.key.period, checkpoint.timestamp, 'a checkpoint timestamped') as string}`, inactive: true };
  }
  if (!signer) {
    const names = parsed.signatures.map((s) => `${s.name} (key hash ${toHex(s.keyId)})`).join(', ');
    return { failure: `checkpoint signature does not verify with any trusted key (signed as ${names || 'nobody'})` };
  }
  if (companyId !== null && !checkpoint.origin.endsWith(`/${companyId}`)) return { failure: `checkpoint origin "${checkpoint.origin}" is not company ${companyId}'s` };
  return { checkpoint, signer };
}

/**
 * The trusted keys plus every key a trusted key endorsed (transitively), each with its signing
 * period from the signed transitions (key-periods.ts), taken in the order of their times. A
 * transition from an untrusted key is passed over; one from a trusted key that does not verify,
 * or that the period rules refuse (a retired key's second statement), is a failed check.
 */
export function followTransitions(pinned: TrustedKey[], transitions: KeyTransition[]): { keys: TrustedKey[]; checks: Check[] } {
  const keys = [...pinned];
  const checks: Check[] = [];
  const periods = new Map<string, KeyPeriod>();
  const endorsed = new Map<KeyTransition, Uint8Array>();
  const steps = applyTransitions(
    periods,
    transitions,
    (t) => {
      const old = keys.find((k) => k.keyId === t.old_key_id);
      if (!old) return undefined;
      const result = verifyKeyTransition(t, old.raw);
      if ('failure' in result) return result.failure;
      endorsed.set(t, result.newKey);
      return null;
    },
    (t) => {
      if (!keys.some((k) => k.keyId === t.new_key_id)) keys.push(trustedKey(endorsed.get(t) as Uint8Array));
    },
  );
  for (const s of steps) {
    const { transition: t } = s;
    if (s.taken) checks.push({ status: 'ok', code: 'key_transition', message: `key transition ${t.old_key_id} → ${t.new_key_id} at ${t.created_at}, endorsed by the trusted key ${t.old_key_id}` });
    else checks.push({ status: 'fail', code: /key_not_active/.test(s.reason) ? 'key_not_active' : 'key_transition', message: `key transition ${t.old_key_id} → ${t.new_key_id}: ${s.reason}` });
  }
  return { keys: keys.map((k) => ({ ...k, period: periods.get(k.keyId) ?? OPEN_PERIOD })), checks };
}

/**
 * The keys of a key file with their periods: parseTrustedKeys, then, when the file is the JSON of
 * GET /api/v1/integrity/keys, its signed `transitions` followed from those keys (§12). A PEM or
 * verifier-key file has no transitions: its keys sign at any time, as far as it can tell.
 */
export function keysWithPeriods(text: string): TrustedKey[] {
  const keys = parseTrustedKeys(text);
  let transitions: unknown;
  try {
    transitions = text.trimStart().startsWith('{') ? (JSON.parse(text) as { transitions?: unknown }).transitions : undefined;
  } catch {
    transitions = undefined;
  }
  return Array.isArray(transitions) ? followTransitions(keys, transitions as KeyTransition[]).keys : keys;
}

/** Why a checkpoint's unsigned JSON fields disagree with its signed note, or null when they agree (or are absent). */
export function checkpointJsonDiffers(json: { tree_size?: unknown; root_hash?: unknown }, signed: Checkpoint): string | null {
  const diffs: string[] = [];
  const root = toHex(signed.rootHash);
  if (json.tree_size !== undefined && json.tree_size !== signed.treeSize) diffs.push(`tree_size ${String(json.tree_size)} (signed: ${signed.treeSize})`);
  if (json.root_hash !== undefined && json.root_hash !== root) diffs.push(`root_hash ${String(json.root_hash)} (signed: ${root})`);
  return diffs.length ? `checkpoint JSON fields differ from the signed note: ${diffs.join(', ')}` : null;
}

/** A proof hash from a document: 32 bytes, or an empty array when it is not hex (the proof then fails). */
const proofHash = (s: unknown): Hash => {
  try {
    return fromHex(typeof s === 'string' ? s : '');
  } catch {
    return new Uint8Array(0);
  }
};

interface EntryCheck {
  hash: string | null;
  failures: Check[];
  /** A version 2 entry whose content is erased. */
  erased: boolean;
}

/** How an entry's own problems read in a verification report (entry-check.ts gives the codes and details). */
const REPORTED: Record<EntryCheckCode, { code: CheckCode; lead: string }> = {
  entry_malformed: { code: 'entry_malformed', lead: '' },
  hash_mismatch: { code: 'hash_mismatch', lead: 'hash mismatch: ' },
  content_mismatch: { code: 'content_mismatch', lead: '' },
  // Offline, a key is known only by being trusted (pinned, or endorsed by a pinned key).
  unknown_key: { code: 'untrusted_key', lead: 'not signed by a trusted key: ' },
  bad_signature: { code: 'bad_signature', lead: '' },
  key_not_active: { code: 'key_not_active', lead: '' },
};

/** Checks one entry's fields, hash and signature (entry-check.ts); returns the recomputed hash and what failed (bundles and exports, export-verifier.ts). */
export function checkEntry(e: Record<string, unknown>, keys: TrustedKey[]): EntryCheck {
  const label = `entry seq ${String(e.seq)} (log_id ${String(e.log_id)})`;
  const at = typeof e.seq === 'number' ? { seq: e.seq } : {};
  const key = keys.find((k) => k.keyId === e.key_id);
  const alone = checkEntryAlone(e as unknown as LedgerEntry, key);
  const failures = alone.problems.map((p): Check => ({ status: 'fail', code: REPORTED[p.code].code, message: `${label}: ${REPORTED[p.code].lead}${p.detail}`, ...at }));
  return { hash: alone.hash, failures, erased: alone.content === 'erased' };
}

type BundleShape = {
  format?: unknown;
  /** What the bundle says it holds: a trace, or every entry of a seq range (inclusive). */
  selection?: { trace_id?: unknown; from_seq?: unknown; to_seq?: unknown };
  company_id?: unknown;
  checkpoint?: { note?: unknown; tree_size?: unknown; root_hash?: unknown };
  public_keys?: Array<{ public_key?: unknown }>;
  key_transitions?: KeyTransition[];
  entries?: Array<{ entry?: Record<string, unknown>; inclusion_proof?: { leaf_index?: unknown; tree_size?: unknown; proof?: unknown } }>;
  /** The erasure records the erased entries name, proven like the entries. */
  erasure_records?: Array<{ entry?: Record<string, unknown>; inclusion_proof?: { leaf_index?: unknown; tree_size?: unknown; proof?: unknown } }>;
  /** An RFC 3161 timestamp of the newest timestamped checkpoint at or below the bundle's, with a consistency proof to it (§19). */
  timestamp?: BundleTimestamp | null;
  /** The agent key register's entries for the keys the entries name (§20). */
  agent_keys?: AgentKey[];
};

/** Options of verifyBundle: the agent key register to trust, in place of the bundle's own. */
export interface BundleOptions {
  agentKeys?: AgentKey[];
}

export interface BundleTimestamp {
  tsa?: unknown;
  /** The timestamped checkpoint's signed note, exactly as signed (no cosignatures). */
  checkpoint_note?: unknown;
  /** The TimeStampToken's DER, base64. */
  token?: unknown;
  /** RFC 9162 consistency proof (hex) from the timestamped checkpoint's tree to the bundle's. */
  consistency_proof?: unknown;
}

/**
 * The timestamp's checks, short of the TSA's signature (the caller's, with the TSA pinned): the
 * timestamped note signed by a trusted key for this company, the token's imprint and TSTInfo
 * digest, and the bundle's tree extending the timestamped one.
 */
export function bundleTimestampChecks(
  ts: BundleTimestamp,
  keys: TrustedKey[],
  companyId: string,
  at: { treeSize: number; rootHash: Hash; timestampToken?: Checkpoint['timestampToken'] | undefined },
): { checks: Check[]; token: TimeStampToken | null } {
  const fail = (message: string): { checks: Check[]; token: null } => ({ checks: [{ status: 'fail', code: 'timestamp', message: `timestamp: ${message}` }], token: null });
  if (typeof ts.checkpoint_note !== 'string' || typeof ts.token !== 'string') return fail('it lacks the timestamped checkpoint or the token');
  const cp = checkCheckpointNote(ts.checkpoint_note, keys, companyId);
  if (!cp.checkpoint) return fail(`the timestamped checkpoint does not verify: ${cp.failure as string}`);
  const { treeSize, rootHash } = cp.checkpoint;
  const proof = Array.isArray(ts.consistency_proof) ? (ts.consistency_proof as unknown[]).map(proofHash) : [];
  if (treeSize > at.treeSize) return fail(`the timestamped checkpoint (tree size ${treeSize}) is beyond the bundle's (${at.treeSize})`);
  if (!verifyConsistency(treeSize, at.treeSize, proof, rootHash, at.rootHash)) return fail(`the bundle's tree (size ${at.treeSize}) does not extend the timestamped one (size ${treeSize}): the consistency proof fails`);
  let token: TimeStampToken;
  try {
    token = parseTimeStampToken(fromBase64(ts.token));
  } catch (err) {
    return fail(`the token is not an RFC 3161 TimeStampToken: ${(err as Error).message}`);
  }
  const problems = timestampProblems(token, ts.checkpoint_note);
  if (problems.length > 0) return fail(problems.join('; '));
  // The bundle's checkpoint may name the token (an extension line, §19): then it must be this one.
  const named = at.timestampToken;
  const same = named?.treeSize === treeSize;
  if (same && sha256Hex(fromBase64(ts.token)) !== named.sha256) return fail(`the bundle's checkpoint names another token for tree size ${treeSize} (SHA-256 ${named.sha256})`);
  const naming = same ? ', and its signed checkpoint names this token' : '';
  return { checks: [{ status: 'ok', code: 'timestamp', message: `checkpoint tree size ${treeSize} was timestamped at ${token.genTime} (RFC 3161, ${String(ts.tsa ?? 'a TSA')}), and the bundle's tree extends it${naming}` }], token };
}

/** Verifies an evidence bundle (parsed JSON). With no trusted keys given, the bundle's own keys are used (and the report says so). */
export function verifyBundle(bundle: unknown, givenKeys: TrustedKey[] | null, options: BundleOptions = {}): VerificationReport {
  const checks: Check[] = [];
  const pinned = givenKeys !== null;
  const report = (): VerificationReport => ({ ok: !checks.some((c) => c.status === 'fail'), pinned, checks });
  const b = bundle as BundleShape;
  if (b?.format !== EVIDENCE_BUNDLE_FORMAT || !Array.isArray(b.entries) || typeof b.checkpoint?.note !== 'string') {
    checks.push({ status: 'fail', code: 'not_a_bundle', message: `not an audit-ledger evidence bundle (format ${EVIDENCE_BUNDLE_FORMAT})` });
    return report();
  }
  let keys: TrustedKey[];
  if (!givenKeys) {
    keys = [];
    for (const k of b.public_keys ?? []) {
      try {
        keys.push(trustedKey(rawKeyFromBase64(String(k.public_key))));
      } catch {
        // a key that is not a key trusts nothing
      }
    }
    checks.push({
      status: 'note',
      code: 'unpinned',
      message: 'no --public-key given: checking against the keys inside the bundle, which anyone can replace. This shows the bundle is internally consistent, not who signed it.',
    });
  } else {
    // From the pinned keys to the keys in use now, one endorsed rotation at a time.
    const followed = followTransitions(givenKeys, Array.isArray(b.key_transitions) ? b.key_transitions : []);
    keys = followed.keys;
    checks.push(...followed.checks);
  }
  const companyId = String(b.company_id);
  const cp = checkCheckpointNote(b.checkpoint.note, keys, companyId);
  if (!cp.checkpoint || !cp.signer) {
    checks.push({ status: 'fail', code: cp.inactive ? 'key_not_active' : 'checkpoint', message: cp.failure as string });
    return report();
  }
  const { treeSize, rootHash } = cp.checkpoint;
  checks.push({ status: 'ok', code: 'checkpoint', message: `checkpoint ${cp.checkpoint.origin} tree size ${treeSize} root ${toHex(rootHash)}, signed by ${cp.signer}` });
  // Every value comes from the signed note; the JSON fields beside it are unsigned conveniences.
  const jsonDiffers = checkpointJsonDiffers(b.checkpoint, cp.checkpoint);
  if (jsonDiffers) checks.push({ status: 'fail', code: 'checkpoint_fields', message: jsonDiffers });

  let good = 0;
  let prev: { seq: number; hash: string } | null = null;
  const erasures = new ErasureLedger();
  const records = Array.isArray(b.erasure_records) ? b.erasure_records : [];
  for (const [index, item] of [...b.entries, ...records].entries()) {
    const isRecord = index >= b.entries.length;
    if (isRecord) prev = null;
    const e = item.entry ?? {};
    const label = `entry seq ${String(e.seq)} (log_id ${String(e.log_id)})`;
    const at = typeof e.seq === 'number' ? { seq: e.seq } : {};
    const fail = (code: CheckCode, what: string): Check => ({ status: 'fail', code, message: `${label}: ${what}`, ...at });
    const { hash, failures, erased } = checkEntry(e, keys);
    if (erased) erasures.erased(e);
    if (e.company_id !== companyId) failures.push(fail('wrong_company', `belongs to company ${String(e.company_id)}, not ${companyId}`));
    const p = item.inclusion_proof;
    const proof = Array.isArray(p?.proof) ? (p.proof as unknown[]).map(proofHash) : [];
    if (hash !== null) {
      if (p?.leaf_index !== e.seq || p?.tree_size !== treeSize) failures.push(fail('not_included', `inclusion proof is for leaf ${String(p?.leaf_index)} of tree size ${String(p?.tree_size)}`));
      else if (!verifyInclusion(e.seq as number, treeSize, entryLeafHash(hash), proof, rootHash)) failures.push(fail('not_included', 'inclusion proof does not lead to the checkpoint root'));
    }
    if (prev && e.seq === prev.seq + 1 && e.prev_hash !== prev.hash) failures.push(fail('broken_link', `prev_hash does not match entry ${prev.seq}`));
    if (typeof e.seq === 'number' && e.seq === 0 && e.prev_hash !== GENESIS_PREV_HASH) failures.push(fail('broken_link', 'entry 0 must have prev_hash of 64 zeros'));
    checks.push(...failures);
    if (isRecord) {
      if (failures.length === 0) checks.push(...erasures.record(e));
      else checks.push(fail('erased', 'this erasure record does not verify, so it accounts for nothing'));
      continue;
    }
    if (failures.length === 0) good++;
    prev = typeof e.seq === 'number' && typeof e.hash === 'string' ? { seq: e.seq, hash: e.hash } : null;
  }
  // An erasure record that is itself among the selected entries counts too.
  for (const item of b.entries) if (item.entry) checks.push(...erasures.record(item.entry));
  // A range bundle says what must be in it: every seq of the range that the checkpoint covers.
  const sel = b.selection;
  if (sel && Number.isSafeInteger(sel.from_seq) && Number.isSafeInteger(sel.to_seq)) {
    const from = sel.from_seq as number;
    const to = Math.min(sel.to_seq as number, treeSize - 1);
    const have = new Set(b.entries.map((i) => i.entry?.seq));
    const missing: number[] = [];
    for (let s = from; s <= to && missing.length <= 10; s++) if (!have.has(s)) missing.push(s);
    if (missing.length > 0) {
      checks.push({ status: 'fail', code: 'entries_missing', message: `the bundle is the range seq ${from}–${sel.to_seq as number}, but lacks seq ${missing.slice(0, 10).join(', ')}${missing.length > 10 ? ', …' : ''}: a range bundle holds every entry of its range the checkpoint covers`, seq: missing[0] as number });
    }
  }
  checks.push(...erasures.unaccounted());
  const erasedNote = erasures.note();
  if (erasedNote) checks.push(erasedNote);
  const n = b.entries.length;
  if (good === n) checks.push({ status: 'ok', code: 'entries', message: `${plural(good, 'entry', 'entries')}: every hash, signature and inclusion proof verifies` });
  else checks.push({ status: 'fail', code: 'entries', message: `${n - good} of ${plural(n, 'entry', 'entries')} failed` });
  if (b.timestamp) checks.push(...bundleTimestampChecks(b.timestamp, keys, companyId, { treeSize, rootHash, timestampToken: cp.checkpoint.timestampToken }).checks);
  checks.push(...agentSignatureChecks(b.entries.map((i) => i.entry ?? {}), options.agentKeys ?? (Array.isArray(b.agent_keys) ? b.agent_keys : [])));
  return report();
}
