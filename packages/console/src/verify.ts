// What the console verifies itself, in this page, trusting nothing the service says about it:
// an entry's hash recomputed from its fields, its signature and the checkpoint's signature checked
// with keys the user pinned (kept in this browser's storage), and its inclusion proof checked up
// to the signed root. The code is the SDK's (and so the core's), the same an auditor runs.
import { commitsContent, contentState, followTransitions, isSignatureCode, type JsonObject, parseTrustedKeys, type TrustedKey, verifyBundle } from '@audit-ledger/core';
import { type Answer, type ReceiptFailureCode, type SignedCheckpoint, verifyInclusion, verifyReceipt } from '@audit-ledger/sdk';
import { api, ApiProblem } from './api';

export interface PinnedKey {
  key_id: string;
  public_key: string;
  pinned_at: string;
}

/** A signing key as GET /integrity/keys lists it (the SDK's generated type). */
export type ServiceKey = Answer<'listSigningKeys'>['items'][number];

const STORE = 'audit-ledger.pinned-keys';

export function pinnedKeys(): PinnedKey[] {
  try {
    const v = JSON.parse(localStorage.getItem(STORE) ?? '[]') as PinnedKey[];
    return Array.isArray(v) ? v : [];
  } catch {
    return [];
  }
}

export function pinKey(k: ServiceKey): void {
  const keys = pinnedKeys().filter((p) => p.key_id !== k.key_id);
  keys.push({ key_id: k.key_id, public_key: k.public_key, pinned_at: new Date().toISOString() });
  localStorage.setItem(STORE, JSON.stringify(keys));
}

export function unpinAll(): void {
  localStorage.removeItem(STORE);
}

/** The service's keys and its signed key transitions (GET /integrity/keys; public). */
export async function serviceKeys(): Promise<Answer<'listSigningKeys'>> {
  return api('/integrity/keys');
}

/**
 * The keys this browser trusts: the pinned ones, plus every key a trusted key endorsed in a signed
 * transition (followed in order, checked with the core). A key that arrived any other way is not trusted.
 */
export async function trustedKeys(): Promise<{ keys: TrustedKey[]; endorsed: Map<string, string> }> {
  const pinned = pinnedKeys();
  const base = pinned.length ? parseTrustedKeys(JSON.stringify({ items: pinned })) : [];
  const { transitions } = await serviceKeys();
  const { keys } = followTransitions(base, transitions);
  // A key trusted now that was not pinned came by a signed transition the core followed: say which.
  const pinnedIds = new Set(base.map((k) => k.keyId));
  const endorsed = new Map<string, string>();
  for (const t of transitions) {
    if (!pinnedIds.has(t.new_key_id) && keys.some((k) => k.keyId === t.new_key_id) && !endorsed.has(t.new_key_id)) {
      endorsed.set(t.new_key_id, `endorsed by ${t.old_key_id} in a signed transition at ${t.created_at}`);
    }
  }
  return { keys, endorsed };
}

export interface Verdict {
  ok: boolean;
  /** What was checked, each with its outcome, in words an auditor can repeat. */
  checks: Array<{ ok: boolean; what: string }>;
  checkpoint: SignedCheckpoint | null;
  ms: number;
  /** The stored fields do not rebuild the hash that was signed: a hashed field was changed. */
  hashChanged?: boolean;
  /** The stored data and extra do not rebuild the content commitment the hash covers: the content was changed. */
  contentChanged?: boolean;
}

type Entry = Parameters<typeof verifyReceipt>[0] & { seq: number; log_id: string };

export async function verifyEntry(entry: Entry): Promise<Verdict> {
  const t0 = performance.now();
  const checks: Verdict['checks'] = [];
  const { keys, endorsed } = await trustedKeys();
  const receipt = verifyReceipt(entry, { publicKeys: keys });
  const failed = (...codes: ReceiptFailureCode[]) => receipt.failures.some((f) => codes.includes(f.code));
  checks.push({ ok: !failed('hash_mismatch', 'entry_malformed'), what: `hash ${entry.hash.slice(0, 16)}… recomputed from the entry's fields` });
  if (commitsContent(entry.format_version)) {
    const erased = entry.data === null;
    checks.push({ ok: !failed('content_mismatch'), what: erased ? 'content erased: the hash covers its commitment, which still holds' : "data and extra match the content commitment the hash covers" });
  }
  const via = endorsed.get(entry.key_id);
  const signature = receipt.failures.filter((f) => isSignatureCode(f.code));
  checks.push({ ok: signature.length === 0, what: `signature checked with ${via ? `key ${entry.key_id} (${via})` : `pinned key ${entry.key_id}`}${signature.length === 0 ? '' : `: ${signature.map((f) => f.message).join('; ')}`}` });
  let checkpoint: SignedCheckpoint | null = null;
  try {
    const proof = await api<Parameters<typeof verifyInclusion>[1] & { checkpoint: SignedCheckpoint | null }>(`/logs/${entry.log_id}/proof`);
    checkpoint = proof.checkpoint;
    if (!checkpoint) checks.push({ ok: false, what: 'no signed checkpoint at the proof size' });
    else {
      const inc = verifyInclusion(entry, proof, checkpoint, { publicKeys: keys });
      checks.push({ ok: inc.ok, what: `included in the tree of checkpoint ${checkpoint.tree_size} (root ${checkpoint.root_hash.slice(0, 16)}…, signed ${checkpoint.timestamp}) by a pinned key${inc.ok ? '' : `: ${inc.problems.join('; ')}`}` });
    }
  } catch (err) {
    if (err instanceof ApiProblem && err.problem.code === 'not_yet_checkpointed') checks.push({ ok: false, what: 'not yet covered by a signed checkpoint (one is signed within CHECKPOINT_INTERVAL_MS): inclusion not checked' });
    else throw err;
  }
  return { ok: checks.every((c) => c.ok), checks, checkpoint, ms: performance.now() - t0, hashChanged: failed('hash_mismatch', 'entry_malformed'), contentChanged: failed('content_mismatch') };
}

/**
 * Whether a copy of the content (the data as the agent sent it, from its own records) rebuilds the
 * entry's content commitment with the stored salt: if it does, it is what was recorded, and its
 * difference from what is stored now is the change. Pure; nothing leaves the page.
 */
export function copyRebuildsCommitment(entry: { format_version: number; content_commitment?: string | null; content_salt?: string | null; links?: unknown }, data: JsonObject, extra: JsonObject | null): boolean {
  const { format_version, content_commitment, content_salt, links } = entry;
  return contentState({ format_version, content_commitment, content_salt, links: (links ?? null) as JsonObject | null, data, extra }).state === 'intact';
}

/**
 * A whole trace, in the page: its evidence bundle (every entry, its inclusion proof, the signed
 * checkpoint, the key transitions) checked by the core's bundle verification with the keys this
 * browser trusts: every hash, signature, proof and link, and the checkpoint's signature.
 */
export async function verifyTrace(traceId: string): Promise<Verdict & { entries: number; left_out: number }> {
  const t0 = performance.now();
  const bundle = await api<{ entries: unknown[]; entries_after_checkpoint: number; checkpoint: SignedCheckpoint }>(`/exports/evidence?trace_id=${encodeURIComponent(traceId)}`);
  const pinned = pinnedKeys();
  const report = verifyBundle(bundle, pinned.length ? parseTrustedKeys(JSON.stringify({ items: pinned })) : []);
  const failed = report.checks.filter((c) => c.status === 'fail');
  const passed = report.checks.filter((c) => c.status === 'ok').length;
  const checks: Verdict['checks'] = [
    {
      ok: report.ok && report.pinned,
      what: report.ok && report.pinned
        ? `all ${bundle.entries.length} entries verified: each hash, signature, inclusion proof and link, under checkpoint ${bundle.checkpoint.tree_size} signed by a trusted key (${passed} groups of checks)`
        : `${bundle.entries.length} entries checked: ${failed.length} check${failed.length === 1 ? '' : 's'} failed, listed below`,
    },
    ...failed.map((c) => ({ ok: false, what: `${c.seq !== undefined ? `entry ${c.seq}: ` : ''}${c.message}` })),
  ];
  if (bundle.entries_after_checkpoint > 0) checks.push({ ok: true, what: `${bundle.entries_after_checkpoint} newer entries are not covered by a checkpoint yet and were left out` });
  return { ok: report.ok && report.pinned, checks, checkpoint: bundle.checkpoint, ms: performance.now() - t0, entries: bundle.entries.length, left_out: bundle.entries_after_checkpoint };
}
