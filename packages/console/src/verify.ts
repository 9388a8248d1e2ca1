// What the console verifies itself, in this page, trusting nothing the service says about it:
// an entry's hash recomputed from its fields, its signature and the checkpoint's signature checked
// with keys the user pinned (kept in this browser's storage), and its inclusion proof checked up
// to the signed root. The code is the SDK's (and so the core's), the same an auditor runs.
import { type SignedCheckpoint, verifyInclusion, verifyReceipt } from '@audit-ledger/sdk';
import { api, ApiProblem } from './api';

export interface PinnedKey {
  key_id: string;
  public_key: string;
  pinned_at: string;
}

export interface ServiceKey {
  key_id: string;
  public_key: string;
  note_verifier_key: string;
  active_from: string;
  active_to: string | null;
}

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

const trusted = () => JSON.stringify({ items: pinnedKeys() });

export interface Verdict {
  ok: boolean;
  /** What was checked, each with its outcome, in words an auditor can repeat. */
  checks: Array<{ ok: boolean; what: string }>;
  checkpoint: SignedCheckpoint | null;
  ms: number;
}

type Entry = Parameters<typeof verifyReceipt>[0] & { seq: number; log_id: string };

export async function verifyEntry(entry: Entry): Promise<Verdict> {
  const t0 = performance.now();
  const checks: Verdict['checks'] = [];
  const receipt = verifyReceipt(entry, { publicKeys: trusted() });
  checks.push({ ok: !receipt.problems.some((p) => p.startsWith('hash') || p.startsWith('the entry')), what: `hash ${entry.hash.slice(0, 16)}… recomputed from the entry's fields` });
  checks.push({ ok: receipt.ok, what: `signature checked with pinned key ${entry.key_id}${receipt.ok ? '' : `: ${receipt.problems.join('; ')}`}` });
  let checkpoint: SignedCheckpoint | null = null;
  try {
    const proof = await api<Parameters<typeof verifyInclusion>[1] & { checkpoint: SignedCheckpoint | null }>(`/logs/${entry.log_id}/proof`);
    checkpoint = proof.checkpoint;
    if (!checkpoint) checks.push({ ok: false, what: 'no signed checkpoint at the proof size' });
    else {
      const inc = verifyInclusion(entry, proof, checkpoint, { publicKeys: trusted() });
      checks.push({ ok: inc.ok, what: `included in the tree of checkpoint ${checkpoint.tree_size} (root ${checkpoint.root_hash.slice(0, 16)}…, signed ${checkpoint.timestamp}) by a pinned key${inc.ok ? '' : `: ${inc.problems.join('; ')}`}` });
    }
  } catch (err) {
    if (err instanceof ApiProblem && err.problem.code === 'not_yet_checkpointed') checks.push({ ok: false, what: 'not yet covered by a signed checkpoint (one is signed within CHECKPOINT_INTERVAL_MS): inclusion not checked' });
    else throw err;
  }
  return { ok: checks.every((c) => c.ok), checks, checkpoint, ms: performance.now() - t0 };
}
