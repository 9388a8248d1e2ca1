// Offline verification of evidence bundles and JSON Lines exports: no server, no database,
// only the documents and the public keys the auditor trusts. Pure; the caller reads the files
// and turns the checks into words (the verify CLI prints one line per check). Every check an
// auditor needs is here and described in docs/ledger-format.md.
import { bytesEqual, fromHex, toHex, utf8, verifyEd25519 } from '#crypto';
import { type Checkpoint, noteKeyId, parseCheckpointText, parseNote } from './checkpoint.js';
import { contentState } from './content.js';
import { ErasureLedger } from './bundle-erasures.js';
import type { Check, CheckCode, VerificationReport } from './checks.js';
import { entryHash, GENESIS_PREV_HASH, hashedFields, type LedgerEntry } from './entry.js';
import { type KeyTransition, verifyKeyTransition } from './key-transition.js';
import { applyTransitions, instantOf, type KeyPeriod, keyNotActive, OPEN_PERIOD } from './key-periods.js';
import { parseTrustedKeys, rawKeyFromBase64, trustedKey, type TrustedKey } from './keys.js';
import { entryLeafHash, type Hash, TreeEdge, verifyInclusion } from './merkle.js';
import { verifyEntrySignature } from './signature.js';

export const EVIDENCE_BUNDLE_FORMAT = 'audit-ledger/evidence-bundle/v1';

export type { Check, CheckCode, VerificationReport } from './checks.js';

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

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

/** Checks one entry's fields, hash and signature; returns the recomputed hash and what failed. */
function checkEntry(e: Record<string, unknown>, keys: TrustedKey[]): EntryCheck {
  const label = `entry seq ${String(e.seq)} (log_id ${String(e.log_id)})`;
  const at = typeof e.seq === 'number' ? { seq: e.seq } : {};
  const fail = (code: CheckCode, what: string): Check => ({ status: 'fail', code, message: `${label}: ${what}`, ...at });
  const missing = hashedFields(Number(e.format_version)).filter((f) => !(f in e));
  if (missing.length > 0) return { hash: null, erased: false, failures: [fail('entry_malformed', `missing fields ${missing.join(', ')}`)] };
  const failures: Check[] = [];
  let hash: string;
  let content;
  try {
    hash = entryHash(e as unknown as LedgerEntry);
    content = contentState(e as unknown as LedgerEntry);
  } catch (err) {
    return { hash: null, erased: false, failures: [fail('entry_malformed', `cannot be hashed: ${(err as Error).message}`)] };
  }
  if (content.state === 'mismatch') failures.push(fail('content_mismatch', `content does not match its commitment: ${content.detail}`));
  if (hash !== e.hash) failures.push(fail('hash_mismatch', `hash mismatch: the fields hash to ${hash}, the entry says ${String(e.hash)}`));
  const key = keys.find((k) => k.keyId === e.key_id);
  if (!key) failures.push(fail('untrusted_key', `signed by key ${String(e.key_id)}, which is not a trusted key`));
  // Over the stored hash, as the service checks it (docs/ledger-format.md §5): whether the key signed
  // this hash; whether the hash is that of these fields is the check above.
  else if (!verifyEntrySignature(key.raw, String(e.hash), String(e.signature))) failures.push(fail('bad_signature', `signature does not verify with key ${key.keyId}`));
  else {
    // A signature counts only inside its key's period (§12): a retired key can sign anything.
    const inactive = keyNotActive(key.keyId, key.period, e.created_at, 'an entry created at');
    if (inactive) failures.push(fail('key_not_active', inactive));
  }
  return { hash, failures, erased: content.state === 'erased' };
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
};

/** Verifies an evidence bundle (parsed JSON). With no trusted keys given, the bundle's own keys are used (and the report says so). */
export function verifyBundle(bundle: unknown, givenKeys: TrustedKey[] | null): VerificationReport {
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
  return report();
}

/** An entry whose signing key is not trusted yet (ExportVerifier.pending). */
type PendingSignature = { seq: number; log_id: unknown; key_id: string; hash: string; signature: string; created_at: unknown };

/** The event type of the entry that records a key rotation in every company's chain (data: the signed transition). */
export const KEY_ROTATION_EVENT_TYPE = 'signing_key.rotated';

/**
 * Verifies a JSON Lines export against a checkpoint, line by line in constant memory.
 * The export must hold seq 0 onwards without gaps, so the tree can be rebuilt and its
 * root at the checkpoint's size compared with the signed one.
 *
 * Key rotations: starting from the pinned keys (and any transitions given), the verifier follows
 * each signed transition it reads in the export itself (the `signing_key.rotated` entries, whose
 * data is the transition: self-authenticating, so nothing else about the entry is trusted for
 * it). An entry is checked against the periods known when it is read; because an entry can come
 * before the record of the rotation that retires its key, the earliest and latest `created_at`
 * each key signed are checked again against the final periods, and the checkpoint is checked at
 * the end with every key followed.
 */
export class ExportVerifier {
  private readonly edge = TreeEdge.empty();
  private readonly transitions: KeyTransition[];
  private keys: TrustedKey[];
  private transitionChecks: Check[] = [];
  /** Per key: the earliest and latest created_at it signed (valid signatures only), with their seqs. */
  private readonly signedSpan = new Map<string, { min: number; minSeq: number; minAt: string; max: number; maxSeq: number; maxAt: string }>();
  private readonly inactiveSeqs = new Set<number>();
  /**
   * Entries signed by a key not (yet) trusted, kept until a transition read later endorses it:
   * with several processes, entries signed by the new key are appended before the rotation's own
   * record. What is left at the end is untrusted. Bounded by the entries between a rotation and
   * its record in the chain.
   */
  private pending: PendingSignature[] = [];
  /** The tree size the note claims, read before its signature can be judged (at the end). */
  private readonly claimedSize: number | null;
  private prevHash = GENESIS_PREV_HASH;
  private prevCreatedAt = Number.NEGATIVE_INFINITY;
  /** Each idempotency key's earliest entry, to check the idempotency_conflict_of marks (§10). One entry per distinct key. */
  private readonly firstOfKey = new Map<string, string>();
  private count = 0;
  private rootAtCheckpoint: Hash | null = null;
  private readonly failures: Check[] = [];
  private broken = false;
  private readonly erasures = new ErasureLedger();

  constructor(
    private readonly pinned: TrustedKey[],
    private readonly checkpointNote: string,
    private readonly companyId: string | null,
    /** The checkpoint's JSON fields, when it came as JSON: each must agree with the signed note. */
    private readonly checkpointJson: { tree_size?: unknown; root_hash?: unknown } = {},
    /** Transitions known beforehand (GET /integrity/keys); those in the export are added as read. */
    transitions: KeyTransition[] = [],
  ) {
    this.transitions = [...transitions];
    const followed = followTransitions(pinned, this.transitions);
    this.keys = followed.keys;
    this.transitionChecks = followed.checks;
    let size: number | null = null;
    try {
      size = parseCheckpointText(parseNote(checkpointNote).text).treeSize;
    } catch {
      // judged in finish()
    }
    this.claimedSize = size;
  }

  /** A transition read from the export: followed from the pinned keys again, with every one so far. */
  private addTransition(data: unknown): void {
    const t = data as KeyTransition;
    if (typeof t?.statement !== 'string' || this.transitions.some((x) => x.statement === t.statement && x.old_signature === t.old_signature)) return;
    this.transitions.push(t);
    const followed = followTransitions(this.pinned, this.transitions);
    this.keys = followed.keys;
    this.transitionChecks = followed.checks;
    const still: PendingSignature[] = [];
    for (const p of this.pending) {
      const k = this.keys.find((x) => x.keyId === p.key_id);
      if (!k) {
        still.push(p);
        continue;
      }
      const label = `entry seq ${p.seq} (log_id ${String(p.log_id)})`;
      if (!verifyEntrySignature(k.raw, p.hash, p.signature)) this.failures.push({ status: 'fail', code: 'bad_signature', message: `${label}: signature does not verify with key ${k.keyId}`, seq: p.seq });
      else {
        const why = keyNotActive(k.keyId, k.period, p.created_at, 'an entry created at');
        if (why) {
          this.inactiveSeqs.add(p.seq);
          this.failures.push({ status: 'fail', code: 'key_not_active', message: `${label}: ${why}`, seq: p.seq });
        } else this.noteSigned(k.keyId, p.created_at, p.seq);
      }
    }
    this.pending = still;
  }

  addLine(line: string): void {
    if (line.trim() === '' || this.broken) return;
    let e: Record<string, unknown>;
    try {
      e = JSON.parse(line) as Record<string, unknown>;
    } catch {
      this.failures.push({ status: 'fail', code: 'line_unreadable', message: `line ${this.count + 1}: not JSON` });
      this.broken = true;
      return;
    }
    if (e.seq !== this.count) {
      this.failures.push({
        status: 'fail',
        code: 'line_unreadable',
        message: `line ${this.count + 1}: expected seq ${this.count}, found ${String(e.seq)}: the export must be complete from seq 0 (use an evidence bundle for a selection)`,
      });
      this.broken = true;
      return;
    }
    if (e.event_type === KEY_ROTATION_EVENT_TYPE && e.data !== null && typeof e.data === 'object') this.addTransition(e.data);
    const { hash, failures, erased } = checkEntry(e, this.keys);
    const untrusted = failures.find((f) => f.code === 'untrusted_key');
    if (untrusted && typeof e.hash === 'string') this.pending.push({ seq: this.count, log_id: e.log_id, key_id: String(e.key_id), hash: e.hash, signature: String(e.signature), created_at: e.created_at });
    this.failures.push(...failures.filter((f) => f !== untrusted || typeof e.hash !== 'string'));
    if (failures.some((f) => f.code === 'key_not_active')) this.inactiveSeqs.add(this.count);
    else if (!failures.some((f) => f.code === 'bad_signature' || f.code === 'untrusted_key')) this.noteSigned(String(e.key_id), e.created_at, this.count);
    this.checkIdempotencyMark(e);
    // created_at never decreases along a chain (§2).
    const createdAt = instantOf(e.created_at);
    if (!(createdAt >= this.prevCreatedAt)) this.failures.push({ status: 'fail', code: 'created_at_order', message: `entry seq ${this.count} (log_id ${String(e.log_id)}): created_at ${String(e.created_at)} is earlier than the entry before it, or not an RFC 3339 time`, seq: this.count });
    if (!Number.isNaN(createdAt)) this.prevCreatedAt = createdAt;
    if (erased) this.erasures.erased(e);
    this.failures.push(...this.erasures.record(e));
    if (e.prev_hash !== this.prevHash) this.failures.push({ status: 'fail', code: 'broken_link', message: `entry seq ${this.count} (log_id ${String(e.log_id)}): prev_hash does not match the entry before it`, seq: this.count });
    this.prevHash = typeof e.hash === 'string' ? e.hash : '';
    this.edge.append(entryLeafHash(hash ?? (/^([0-9a-f]{2})*$/.test(this.prevHash) ? this.prevHash : '')));
    this.count++;
    if (this.count === this.claimedSize) this.rootAtCheckpoint = this.edge.root();
  }

  /**
   * The mark is not hashed but derivable (§10): the service appends a second use of a key only
   * when it differs (an exact repeat appends nothing), so an entry whose key an earlier entry
   * used carries that earliest entry's log_id, and an entry with a new key carries null.
   */
  private checkIdempotencyMark(e: Record<string, unknown>): void {
    if (!('idempotency_conflict_of' in e)) return; // an export without the field says nothing
    const key = e.idempotency_key;
    const first = typeof key === 'string' ? this.firstOfKey.get(key) : undefined;
    const expected = first ?? null;
    if (e.idempotency_conflict_of !== expected) {
      this.failures.push({
        status: 'fail',
        code: 'idempotency_mark',
        message: `entry seq ${this.count} (log_id ${String(e.log_id)}): idempotency_conflict_of is ${JSON.stringify(e.idempotency_conflict_of)}, but ${first ? `key ${JSON.stringify(key)} was first used by ${first}, so it must name that entry` : 'no earlier entry used its idempotency key, so it must be null'}`,
        seq: this.count,
      });
    }
    if (typeof key === 'string' && first === undefined && typeof e.log_id === 'string') this.firstOfKey.set(key, e.log_id);
  }

  private noteSigned(keyId: string, createdAt: unknown, seq: number): void {
    const t = instantOf(createdAt);
    if (Number.isNaN(t)) return;
    const span = this.signedSpan.get(keyId);
    const at = String(createdAt);
    if (!span) this.signedSpan.set(keyId, { min: t, minSeq: seq, minAt: at, max: t, maxSeq: seq, maxAt: at });
    else {
      if (t < span.min) Object.assign(span, { min: t, minSeq: seq, minAt: at });
      if (t >= span.max) Object.assign(span, { max: t, maxSeq: seq, maxAt: at });
    }
  }

  /** Entries whose key's period was still open when they were read, judged by the final periods. */
  private lateInactive(): Check[] {
    const out: Check[] = [];
    for (const [keyId, span] of this.signedSpan) {
      const key = this.keys.find((k) => k.keyId === keyId);
      for (const [seq, at] of [[span.minSeq, span.minAt], [span.maxSeq, span.maxAt]] as const) {
        if (this.inactiveSeqs.has(seq)) continue;
        const why = keyNotActive(keyId, key?.period, at, 'an entry created at');
        if (why) {
          this.inactiveSeqs.add(seq);
          out.push({ status: 'fail', code: 'key_not_active', message: `entry seq ${seq}: ${why}`, seq });
        }
      }
    }
    return out;
  }

  finish(): VerificationReport {
    const cp = checkCheckpointNote(this.checkpointNote, this.keys, this.companyId);
    if (!cp.checkpoint || !cp.signer) return { ok: false, pinned: true, checks: [...this.transitionChecks, { status: 'fail', code: cp.inactive ? 'key_not_active' : 'checkpoint', message: cp.failure as string }] };
    const { treeSize, rootHash, origin } = cp.checkpoint;
    const checks: Check[] = [...this.transitionChecks.filter((c) => c.status !== 'fail'), { status: 'ok', code: 'checkpoint', message: `checkpoint ${origin} tree size ${treeSize} root ${toHex(rootHash)}, signed by ${cp.signer}` }];
    const untrusted: Check[] = this.pending.map((p) => ({ status: 'fail', code: 'untrusted_key', message: `entry seq ${p.seq} (log_id ${String(p.log_id)}): signed by key ${p.key_id}, which is not a trusted key (no transition from a pinned key endorses it)`, seq: p.seq }));
    const failures = [...this.transitionChecks.filter((c) => c.status === 'fail'), ...this.failures, ...untrusted, ...this.lateInactive()];
    const differs = checkpointJsonDiffers(this.checkpointJson, cp.checkpoint);
    if (differs) failures.push({ status: 'fail', code: 'checkpoint_fields', message: differs });
    if (!this.broken) {
      if (this.count < treeSize) {
        failures.push({ status: 'fail', code: 'entries_missing', message: `the export holds ${plural(this.count, 'entry', 'entries')} but the checkpoint covers ${treeSize}: entries are missing` });
      } else if (!this.rootAtCheckpoint || !bytesEqual(this.rootAtCheckpoint, rootHash)) {
        failures.push({ status: 'fail', code: 'root_mismatch', message: `the Merkle root of the first ${treeSize} exported entries differs from the signed root` });
      }
      failures.push(...this.erasures.unaccounted());
      const erasedNote = this.erasures.note();
      if (erasedNote) checks.push(erasedNote);
      if (this.count > treeSize) {
        checks.push({ status: 'note', code: 'beyond_checkpoint', message: `the export holds ${plural(this.count, 'entry', 'entries')}; the checkpoint covers the first ${treeSize} (a later checkpoint covers the rest)` });
      }
    }
    checks.push(...failures);
    if (failures.length === 0) checks.push({ status: 'ok', code: 'entries', message: `${plural(this.count, 'entry', 'entries')}: every hash, link and signature verifies, and they rebuild the signed tree` });
    return { ok: failures.length === 0, pinned: true, checks };
  }
}
