// Offline verification of evidence bundles and exports: no server, no database, only
// the files and the public keys the auditor trusts. Pure; the CLI reads the files.
// Every check an auditor needs is here and described in docs/ledger-format.md.
import { createPublicKey, type KeyObject, verify } from 'node:crypto';
import { type Checkpoint, noteKeyId, parseCheckpointText, parseNote } from '../core/checkpoint.js';
import { entryHash, HASHED_FIELDS, GENESIS_PREV_HASH, type LedgerEntry } from '../core/entry.js';
import { entryLeafHash, TreeEdge, verifyInclusion } from '../core/merkle.js';
import { keyIdOf, publicKeyFromRaw, rawPublicKey, verifyEntrySignature } from '../core/signature.js';
import { type KeyTransition, verifyKeyTransition } from '../core/key-transition.js';
import { count } from '../plural.js';

export interface TrustedKey {
  keyId: string;
  publicKey: KeyObject;
  raw: Buffer;
}

export interface OfflineReport {
  ok: boolean;
  /** False when no trusted key was given and the bundle's own keys were used: consistent, not proven. */
  pinned: boolean;
  /** Human-readable lines, "OK …" or "FAIL …", in the order checked. */
  lines: string[];
}

function trusted(publicKey: KeyObject): TrustedKey {
  return { keyId: keyIdOf(publicKey), publicKey, raw: rawPublicKey(publicKey) };
}

/**
 * Public keys from a file: SPKI PEM blocks, C2SP verifier keys (name+hash+base64), the JSON
 * of GET /api/v1/integrity/keys, or a bundle's public_keys array.
 */
export function parseTrustedKeys(text: string): TrustedKey[] {
  const trimmed = text.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    const json = JSON.parse(trimmed) as unknown;
    const items = Array.isArray(json) ? json : ((json as { items?: unknown; public_keys?: unknown }).items ?? (json as { public_keys?: unknown }).public_keys);
    if (!Array.isArray(items)) throw new Error('the key file is JSON but has no items or public_keys array');
    return items.map((k) => trusted(publicKeyFromRaw(Buffer.from(String((k as { public_key?: unknown }).public_key), 'base64'))));
  }
  const keys: TrustedKey[] = [];
  for (const pem of trimmed.match(/-----BEGIN PUBLIC KEY-----[\s\S]+?-----END PUBLIC KEY-----/g) ?? []) keys.push(trusted(createPublicKey(pem)));
  if (keys.length > 0) return keys;
  for (const line of trimmed.split(/\s+/)) {
    const m = /^[^+\s]+\+[0-9a-f]{8}\+(.+)$/.exec(line);
    const raw = m ? Buffer.from(m[1] as string, 'base64') : Buffer.alloc(0);
    if (raw.length !== 33 || raw[0] !== 1) throw new Error(`not a PEM public key, key JSON or Ed25519 verifier key: ${line.slice(0, 60)}`);
    keys.push(trusted(publicKeyFromRaw(raw.subarray(1))));
  }
  if (keys.length === 0) throw new Error('no public key found');
  return keys;
}

/** Checks a checkpoint note against the trusted keys; returns the parsed checkpoint or the reason it fails. */
export function checkCheckpointNote(note: string, keys: TrustedKey[], companyId: string | null): { checkpoint?: Checkpoint; signer?: string; failure?: string } {
  let parsed;
  let checkpoint: Checkpoint;
  try {
    parsed = parseNote(note);
    checkpoint = parseCheckpointText(parsed.text);
  } catch (err) {
    return { failure: `checkpoint is malformed: ${(err as Error).message}` };
  }
  const signer = parsed.signatures
    .flatMap((s) => keys.filter((k) => noteKeyId(s.name, k.raw).equals(s.keyId) && verify(null, Buffer.from(parsed.text, 'utf8'), k.publicKey, s.signature)).map((k) => `${s.name} key ${k.keyId}`))
    .at(0);
  if (!signer) {
    const names = parsed.signatures.map((s) => `${s.name} (key hash ${s.keyId.toString('hex')})`).join(', ');
    return { failure: `checkpoint signature does not verify with any trusted key (signed as ${names || 'nobody'})` };
  }
  if (companyId !== null && !checkpoint.origin.endsWith(`/${companyId}`)) return { failure: `checkpoint origin "${checkpoint.origin}" is not company ${companyId}'s` };
  return { checkpoint, signer };
}

/**
 * The trusted keys plus every key a trusted key endorsed (transitively), in the order the
 * transitions were made. A transition from an untrusted key is ignored; one from a trusted key
 * that does not verify is a failure.
 */
export function followTransitions(pinned: TrustedKey[], transitions: KeyTransition[]): { keys: TrustedKey[]; lines: string[] } {
  const keys = [...pinned];
  const lines: string[] = [];
  for (const t of transitions) {
    const old = keys.find((k) => k.keyId === t.old_key_id);
    if (!old || keys.some((k) => k.keyId === t.new_key_id)) continue;
    const result = verifyKeyTransition(t, old.publicKey);
    if ('failure' in result) lines.push(`FAIL key transition ${t.old_key_id} → ${t.new_key_id}: ${result.failure}`);
    else {
      keys.push(trusted(result.newKey));
      lines.push(`OK   key transition ${t.old_key_id} → ${t.new_key_id} at ${t.created_at}, endorsed by the trusted key ${t.old_key_id}`);
    }
  }
  return { keys, lines };
}

/** Why a checkpoint's unsigned JSON fields disagree with its signed note, or null when they agree (or are absent). */
export function checkpointJsonDiffers(json: { tree_size?: unknown; root_hash?: unknown }, signed: Checkpoint): string | null {
  const diffs: string[] = [];
  if (json.tree_size !== undefined && json.tree_size !== signed.treeSize) diffs.push(`tree_size ${String(json.tree_size)} (signed: ${signed.treeSize})`);
  if (json.root_hash !== undefined && json.root_hash !== signed.rootHash.toString('hex')) diffs.push(`root_hash ${String(json.root_hash)} (signed: ${signed.rootHash.toString('hex')})`);
  return diffs.length ? `checkpoint JSON fields differ from the signed note: ${diffs.join(', ')}` : null;
}

const hex = (s: unknown) => Buffer.from(typeof s === 'string' ? s : '', 'hex');

/** Checks one entry's fields, hash and signature; returns the recomputed hash and what failed. */
function checkEntry(e: Record<string, unknown>, keys: TrustedKey[]): { hash: string | null; failures: string[] } {
  const label = `entry seq ${String(e.seq)} (log_id ${String(e.log_id)})`;
  const missing = HASHED_FIELDS.filter((f) => !(f in e));
  if (missing.length > 0) return { hash: null, failures: [`${label}: missing fields ${missing.join(', ')}`] };
  const failures: string[] = [];
  let hash: string;
  try {
    hash = entryHash(e as unknown as LedgerEntry);
  } catch (err) {
    return { hash: null, failures: [`${label}: cannot be hashed: ${(err as Error).message}`] };
  }
  if (hash !== e.hash) failures.push(`${label}: hash mismatch: the fields hash to ${hash}, the entry says ${String(e.hash)}`);
  const key = keys.find((k) => k.keyId === e.key_id);
  if (!key) failures.push(`${label}: signed by key ${String(e.key_id)}, which is not a trusted key`);
  // Over the stored hash, as the service checks it (docs/ledger-format.md §5): whether the key signed
  // this hash; whether the hash is that of these fields is the check above.
  else if (!verifyEntrySignature(key.publicKey, String(e.hash), String(e.signature))) failures.push(`${label}: signature does not verify with key ${key.keyId}`);
  return { hash, failures };
}

/** Verifies an evidence bundle. With no trusted keys given, the bundle's own keys are used (and the report says so). */
export function verifyBundle(bundle: unknown, givenKeys: TrustedKey[] | null): OfflineReport {
  const lines: string[] = [];
  let ok = true;
  const fail = (msg: string) => {
    ok = false;
    lines.push(`FAIL ${msg}`);
  };
  const b = bundle as {
    format?: unknown;
    company_id?: unknown;
    checkpoint?: { note?: unknown; tree_size?: unknown; root_hash?: unknown };
    public_keys?: Array<{ public_key?: unknown }>;
    key_transitions?: KeyTransition[];
    entries?: Array<{ entry?: Record<string, unknown>; inclusion_proof?: { leaf_index?: unknown; tree_size?: unknown; proof?: unknown } }>;
  };
  if (b?.format !== 'audit-ledger/evidence-bundle/v1' || !Array.isArray(b.entries) || typeof b.checkpoint?.note !== 'string') {
    return { ok: false, pinned: givenKeys !== null, lines: ['FAIL not an audit-ledger evidence bundle (format audit-ledger/evidence-bundle/v1)'] };
  }
  let keys = givenKeys;
  if (!keys) {
    keys = (b.public_keys ?? []).map((k) => trusted(publicKeyFromRaw(Buffer.from(String(k.public_key), 'base64'))));
    lines.push('NOTE no --public-key given: checking against the keys inside the bundle, which anyone can replace. This shows the bundle is internally consistent, not who signed it.');
  } else {
    // From the pinned keys to the keys in use now, one endorsed rotation at a time.
    const followed = followTransitions(keys, Array.isArray(b.key_transitions) ? b.key_transitions : []);
    keys = followed.keys;
    for (const l of followed.lines) {
      if (l.startsWith('FAIL')) ok = false;
      lines.push(l);
    }
  }
  const companyId = String(b.company_id);
  const cp = checkCheckpointNote(b.checkpoint.note, keys, companyId);
  if (!cp.checkpoint) {
    fail(cp.failure as string);
    return { ok, pinned: givenKeys !== null, lines };
  }
  const { treeSize, rootHash } = cp.checkpoint;
  lines.push(`OK   checkpoint ${cp.checkpoint.origin} tree size ${treeSize} root ${rootHash.toString('hex')}, signed by ${cp.signer}`);
  // Every value comes from the signed note; the JSON fields beside it are unsigned conveniences.
  const jsonDiffers = checkpointJsonDiffers(b.checkpoint, cp.checkpoint);
  if (jsonDiffers) fail(jsonDiffers);

  let good = 0;
  let prev: { seq: number; hash: string } | null = null;
  for (const item of b.entries) {
    const e = item.entry ?? {};
    const label = `entry seq ${String(e.seq)} (log_id ${String(e.log_id)})`;
    const { hash, failures } = checkEntry(e, keys);
    if (e.company_id !== companyId) failures.push(`${label}: belongs to company ${String(e.company_id)}, not ${companyId}`);
    const p = item.inclusion_proof;
    const proof = Array.isArray(p?.proof) ? (p.proof as unknown[]).map(hex) : [];
    if (hash !== null) {
      if (p?.leaf_index !== e.seq || p?.tree_size !== treeSize) failures.push(`${label}: inclusion proof is for leaf ${String(p?.leaf_index)} of tree size ${String(p?.tree_size)}`);
      else if (!verifyInclusion(e.seq as number, treeSize, entryLeafHash(hash), proof, rootHash)) failures.push(`${label}: inclusion proof does not lead to the checkpoint root`);
    }
    if (prev && e.seq === prev.seq + 1 && e.prev_hash !== prev.hash) failures.push(`${label}: prev_hash does not match entry ${prev.seq}`);
    if (typeof e.seq === 'number' && e.seq === 0 && e.prev_hash !== GENESIS_PREV_HASH) failures.push(`${label}: entry 0 must have prev_hash of 64 zeros`);
    for (const f of failures) fail(f);
    if (failures.length === 0) good++;
    prev = typeof e.seq === 'number' && typeof e.hash === 'string' ? { seq: e.seq, hash: e.hash } : null;
  }
  if (good === b.entries.length) lines.push(`OK   ${count(good, 'entry', 'entries')}: every hash, signature and inclusion proof verifies`);
  else lines.push(`FAIL ${b.entries.length - good} of ${count(b.entries.length, 'entry', 'entries')} failed`);
  return { ok, pinned: givenKeys !== null, lines };
}

/**
 * Verifies a JSON Lines export against a checkpoint, line by line in constant memory.
 * The export must hold seq 0 onwards without gaps, so the tree can be rebuilt and its
 * root at the checkpoint's size compared with the signed one.
 */
export class ExportVerifier {
  private readonly edge = TreeEdge.empty();
  private readonly cp: ReturnType<typeof checkCheckpointNote>;
  private prevHash = GENESIS_PREV_HASH;
  private count = 0;
  private rootAtCheckpoint: Buffer | null = null;
  private readonly failures: string[] = [];
  private broken = false;

  constructor(
    private readonly keys: TrustedKey[],
    checkpointNote: string,
    companyId: string | null,
    /** The checkpoint's JSON fields, when it came as JSON: each must agree with the signed note. */
    checkpointJson: { tree_size?: unknown; root_hash?: unknown } = {},
  ) {
    this.cp = checkCheckpointNote(checkpointNote, keys, companyId);
    const differs = this.cp.checkpoint ? checkpointJsonDiffers(checkpointJson, this.cp.checkpoint) : null;
    if (differs) this.failures.push(differs);
  }

  addLine(line: string): void {
    if (line.trim() === '' || this.broken) return;
    let e: Record<string, unknown>;
    try {
      e = JSON.parse(line) as Record<string, unknown>;
    } catch {
      this.failures.push(`line ${this.count + 1}: not JSON`);
      this.broken = true;
      return;
    }
    if (e.seq !== this.count) {
      this.failures.push(`line ${this.count + 1}: expected seq ${this.count}, found ${String(e.seq)}: the export must be complete from seq 0 (use an evidence bundle for a selection)`);
      this.broken = true;
      return;
    }
    const { hash, failures } = checkEntry(e, this.keys);
    this.failures.push(...failures);
    if (e.prev_hash !== this.prevHash) this.failures.push(`entry seq ${this.count} (log_id ${String(e.log_id)}): prev_hash does not match the entry before it`);
    this.prevHash = typeof e.hash === 'string' ? e.hash : '';
    this.edge.append(entryLeafHash(hash ?? this.prevHash));
    this.count++;
    if (this.count === this.cp.checkpoint?.treeSize) this.rootAtCheckpoint = this.edge.root();
  }

  finish(): OfflineReport {
    if (!this.cp.checkpoint) return { ok: false, pinned: true, lines: [`FAIL ${this.cp.failure as string}`] };
    const { treeSize, rootHash, origin } = this.cp.checkpoint;
    const lines = [`OK   checkpoint ${origin} tree size ${treeSize} root ${rootHash.toString('hex')}, signed by ${this.cp.signer}`];
    const failures = [...this.failures];
    if (!this.broken) {
      if (this.count < treeSize) failures.push(`the export holds ${count(this.count, 'entry', 'entries')} but the checkpoint covers ${treeSize}: entries are missing`);
      else if (!this.rootAtCheckpoint?.equals(rootHash)) failures.push(`the Merkle root of the first ${treeSize} exported entries differs from the signed root`);
      if (this.count > treeSize) lines.push(`NOTE the export holds ${count(this.count, 'entry', 'entries')}; the checkpoint covers the first ${treeSize} (a later checkpoint covers the rest)`);
    }
    for (const f of failures) lines.push(`FAIL ${f}`);
    if (failures.length === 0) lines.push(`OK   ${count(this.count, 'entry', 'entries')}: every hash, link and signature verifies, and they rebuild the signed tree`);
    return { ok: failures.length === 0, pinned: true, lines };
  }
}
