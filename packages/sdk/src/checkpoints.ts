// The client side of a transparency log: checkpoints checked against the keys you pinned, each new
// one proven consistent with the last one you accepted, and inclusion proofs checked against a
// signed checkpoint. A service that shows two histories (a fork) or rewrites its past is caught.
import { checkCheckpointNote, checkEntryAlone, checkpointJsonDiffers, entryLeafHash, fromHex, type LedgerEntry, verifyConsistency, verifyInclusion as verifyInclusionProof } from '@audit-ledger/core';
import type { CheckpointAnswer, InclusionProofAnswer } from './api.js';
import { asEntryBody, type PublicKeys, type ReceiptEntry, trustedKeys } from './receipts.js';

/**
 * A checkpoint as GET /api/v1/integrity/checkpoint answers it (the generated type: the fields a
 * check reads are required; the witnesses' cosignatures come with it when there are any).
 */
export type SignedCheckpoint = CheckpointAnswer;

/** An inclusion proof as GET /api/v1/logs/{id}/proof answers it: the parts a check reads. */
export type InclusionProof = Pick<InclusionProofAnswer, 'leaf_index' | 'tree_size' | 'root_hash' | 'proof'>;

/**
 * What is wrong with a checkpoint, in words (empty when it holds): the core's offline check of its
 * note (checkCheckpointNote: signed by a pinned key, or one a pinned key endorsed, inside its
 * period), and its JSON fields against what the note signs (checkpointJsonDiffers, and the origin).
 * The same checks as audit-ledger-verify's on a bundle's checkpoint.
 */
export function checkpointProblems(cp: SignedCheckpoint, publicKeys: PublicKeys): string[] {
  const note = checkCheckpointNote(cp.note, trustedKeys(publicKeys), null);
  if (!note.checkpoint) return [`checkpoint at tree size ${cp.tree_size}: ${note.failure ?? 'not signed by a pinned key'}`];
  const problems: string[] = [];
  if (note.checkpoint.origin !== cp.origin) problems.push(`the note is for origin "${note.checkpoint.origin}", the checkpoint says "${cp.origin}"`);
  const differs = checkpointJsonDiffers(cp, note.checkpoint);
  if (differs) problems.push(differs);
  return problems;
}

/**
 * Checks an entry's inclusion proof against a checkpoint signed by a pinned key: the entry's hash
 * recomputes, its leaf and the proof rebuild the checkpoint's root.
 */
export function verifyInclusion(received: Omit<ReceiptEntry, 'signature' | 'key_id'>, proof: InclusionProof, checkpoint: SignedCheckpoint, opts: { publicKeys: PublicKeys }): { ok: boolean; problems: string[] } {
  const entry = asEntryBody(received);
  const problems = checkpointProblems(checkpoint, opts.publicKeys);
  // The entry's own hash and content (the core's check; its signature is the receipt's, verifyReceipt).
  for (const p of checkEntryAlone({ ...entry, signature: '', key_id: '' } as LedgerEntry, undefined, { signature: false }).problems) problems.push(`entry seq ${entry.seq}: ${p.detail}`);
  if (proof.tree_size !== checkpoint.tree_size) problems.push(`the proof is for tree size ${proof.tree_size}, the checkpoint is at ${checkpoint.tree_size}`);
  else if (proof.leaf_index !== entry.seq || !verifyInclusionProof(entry.seq, proof.tree_size, entryLeafHash(entry.hash), proof.proof.map(fromHex), fromHex(checkpoint.root_hash))) {
    problems.push(`the proof does not rebuild the checkpoint's root from entry ${entry.seq}`);
  }
  return { ok: problems.length === 0, problems };
}

export interface CheckpointVerdict {
  ok: boolean;
  checkpoint: SignedCheckpoint;
  /** The last checkpoint accepted before this one (undefined for the first). */
  previous: SignedCheckpoint | undefined;
  problems: string[];
}

export interface WatcherSource {
  checkpoint(): Promise<SignedCheckpoint>;
  consistency(first: number, second: number): Promise<{ proof: string[] }>;
}

export interface WatchOptions {
  publicKeys: PublicKeys;
  /** A checkpoint accepted earlier (kept by the caller across restarts), to start from. */
  trusted?: SignedCheckpoint;
  onCheckpoint?: (verdict: CheckpointVerdict) => void;
  /** A checkpoint that is not signed by a pinned key, or not consistent with the last accepted one. */
  onFork?: (verdict: CheckpointVerdict) => void;
}

/**
 * Keeps the last verified checkpoint and checks every new one: signed by a pinned key, for the same
 * origin, never a smaller tree, never another root for the same size, and proven consistent with
 * the last (RFC 9162 consistency proof, checked against the two signed roots). A failing checkpoint
 * is reported and never accepted.
 */
export class CheckpointWatcher {
  private last: SignedCheckpoint | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly source: WatcherSource,
    private readonly opts: WatchOptions,
  ) {
    this.last = opts.trusted;
  }

  /** The last checkpoint accepted. */
  get latest(): SignedCheckpoint | undefined {
    return this.last;
  }

  /** Fetches the latest checkpoint and checks it now. */
  async check(): Promise<CheckpointVerdict> {
    const cp = await this.source.checkpoint();
    const previous = this.last;
    const problems = checkpointProblems(cp, this.opts.publicKeys);
    if (previous && problems.length === 0) {
      if (cp.origin !== previous.origin) problems.push(`origin changed from "${previous.origin}" to "${cp.origin}"`);
      else if (cp.tree_size < previous.tree_size) problems.push(`the tree shrank from ${previous.tree_size} to ${cp.tree_size} entries`);
      else if (cp.tree_size === previous.tree_size && cp.root_hash !== previous.root_hash) problems.push(`two different roots signed for tree size ${cp.tree_size}: a forked history`);
      else if (cp.tree_size > previous.tree_size) {
        let proven = false;
        try {
          const { proof } = await this.source.consistency(previous.tree_size, cp.tree_size);
          proven = verifyConsistency(previous.tree_size, cp.tree_size, proof.map(fromHex), fromHex(previous.root_hash), fromHex(cp.root_hash));
        } catch (err) {
          problems.push(`no consistency proof from ${previous.tree_size} to ${cp.tree_size}: ${err instanceof Error ? err.message : String(err)}`);
        }
        if (!proven && problems.length === 0) problems.push(`tree size ${cp.tree_size} is not consistent with the accepted tree size ${previous.tree_size}: history was rewritten`);
      }
    }
    const verdict: CheckpointVerdict = { ok: problems.length === 0, checkpoint: cp, previous, problems };
    if (verdict.ok) this.last = cp;
    (verdict.ok ? this.opts.onCheckpoint : this.opts.onFork)?.(verdict);
    return verdict;
  }

  /** Checks every `intervalMs` until stop(); errors reaching the service are left to the next check. */
  start(intervalMs: number): this {
    this.timer ??= setInterval(() => void this.check().catch(() => undefined), intervalMs);
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
