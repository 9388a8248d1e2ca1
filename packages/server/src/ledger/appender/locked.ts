// The locked committer (PostgreSQL): each group is read, built, signed and written in one
// transaction holding the company's chain lock, which is what several processes on one
// database need.
import { type ChainHead, KeyRetiredError } from '../../store/chain.js';
import { type Committer, type CommitterDeps, idempotencyKeys, MAX_HEAD_MOVES, MAX_KEPT_CHAINS } from './committer.js';
import type { ChainState, Pending } from './types.js';

export class LockedCommitter implements Committer {
  /** The chain each company's last commit here left (saves reading its edge and checkpoint). */
  private readonly lockedChains = new Map<string, Pick<ChainState, 'head' | 'edge' | 'latest'>>();

  constructor(private readonly deps: CommitterDeps) {}

  async drain(companyId: string, queue: Pending[]): Promise<void> {
    while (queue.length > 0) await this.appendLocked(companyId, this.deps.takeGroup(queue));
  }

  wake(): void {}

  /** One group in one transaction holding the chain lock: what several processes on one database need. */
  private async appendLocked(companyId: string, group: Pending[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        const t0 = performance.now();
        // The tree edge and last checkpoint this process left are still right if the locked head
        // is the one it left. (Another process may have signed a checkpoint of that same tree
        // meanwhile: signing it again stores nothing, as both would sign the same root.)
        const known = this.lockedChains.get(companyId);
        this.lockedChains.delete(companyId);
        let state!: ChainState;
        const plan = await this.deps.store.withChain(companyId, async (tx) => {
          state = await this.deps.planner.loadState(tx, false, known && sameHead(known.head, tx.head) ? known : undefined);
          const plan = await this.deps.planner.plan(companyId, state, group, await tx.findByIdempotencyKeys(idempotencyKeys(group)), new Map(), undefined);
          await plan.signed;
          const w = plan.write;
          if (w.rows.length > 0) await tx.append(w.rows, w.head, w.treeIndexes, w.treeHashes);
          if (w.checkpoint) await tx.insertCheckpoint(w.checkpoint);
          return plan;
        });
        // Only the data: the state's consistency check holds the transaction, which must not outlive it.
        if (this.lockedChains.size < MAX_KEPT_CHAINS) this.lockedChains.set(companyId, { head: state.head, edge: state.edge, latest: state.latest });
        this.deps.committed(companyId, plan, group, t0);
        return;
      } catch (err) {
        // The key was rotated (here or in another process): nothing was written; sign with the new key.
        let failure = err;
        if (err instanceof KeyRetiredError && attempt < MAX_HEAD_MOVES) {
          try {
            await this.deps.keyring.reload();
            continue;
          } catch (reloadErr) {
            failure = reloadErr;
          }
        }
        for (const p of group) p.reject(failure);
        return;
      }
    }
  }
}

function sameHead(a: ChainHead, b: ChainHead): boolean {
  return a.lastSeq === b.lastSeq && a.lastHash === b.lastHash;
}
