// The pipelined committer (a store with a ChainWriter: SQLite's writer thread): groups are built
// from the chain as this process last built it and handed to the writer in order; the next
// group is sequenced, hashed and signed while the last one commits. Each write commits only on
// the head it was built on, so a group built on a head that moved is built again: never a fork,
// never a gap.
import { type ChainWriter, HeadMovedError, KeyRetiredError } from '../../store/chain.js';
import { type Committer, type CommitterDeps, idempotencyKeys, MAX_HEAD_MOVES, MAX_KEPT_CHAINS } from './committer.js';
import type { Pending, Pipeline, Plan } from './types.js';

/** Groups being built, signed or committed at once per company (the writer commits them in order). */
const MAX_IN_FLIGHT = 4;

export class PipelinedCommitter implements Committer {
  private readonly pipelines = new Map<string, Pipeline>();

  constructor(
    private readonly deps: CommitterDeps,
    private readonly writer: ChainWriter,
  ) {}

  drain(companyId: string, queue: Pending[]): Promise<void> {
    return this.drainPipelined(companyId, queue, this.writer);
  }

  wake(companyId: string): void {
    this.pipelines.get(companyId)?.wake?.();
  }

  /**
   * Groups built here from the chain as this process knows it, and committed by the store's
   * writer in order: the next group is sequenced, hashed and signed while the last one commits.
   * The writer checks each write's head, so a group built on a head that moved (another
   * writer, or a failed write before it) commits nothing and is built again.
   */
  private async drainPipelined(companyId: string, queue: Pending[], writer: ChainWriter): Promise<void> {
    let c = this.pipelines.get(companyId);
    if (!c) this.pipelines.set(companyId, (c = { keys: new Map(), inFlight: new Set(), failed: false, retry: [], handedOver: Promise.resolve() }));
    for (;;) {
      if (c.failed) {
        await Promise.allSettled([...c.inFlight]);
        if (c.keyReload) {
          await c.keyReload;
          c.keyReload = undefined;
        }
        queue.unshift(...c.retry.flat());
        c.retry = [];
        c.state = undefined;
        c.failed = false;
      }
      if (queue.length === 0 || c.inFlight.size >= MAX_IN_FLIGHT) {
        if (c.inFlight.size === 0) break;
        // Until a write settles, or (with room for another group) a request arrives.
        const pipeline = c;
        const woken = queue.length === 0 ? new Promise<boolean>((r) => (pipeline.wake = () => r(true))) : undefined;
        const arrived = await Promise.race([...c.inFlight, ...(woken ? [woken] : [])]);
        c.wake = undefined;
        // Let the requests read in the same turn join the group.
        if (arrived === true) await new Promise((r) => setImmediate(r));
        continue;
      }
      const group = this.deps.takeGroup(queue);
      let plan: Plan;
      const t0 = performance.now();
      try {
        c.state ??= await this.deps.store.withChain(companyId, (tx) => this.deps.planner.loadState(tx, true));
        // Keys of groups still committing are answered from memory; the rest from the store.
        const lookUp = idempotencyKeys(group).filter((k) => !c.keys.has(k));
        plan = await this.deps.planner.plan(companyId, c.state, group, await writer.findByIdempotencyKeys(companyId, lookUp), c.keys, writer);
      } catch (err) {
        // The state may be half advanced: rebuild it once the writes in flight are done.
        c.failed = true;
        for (const p of group) p.reject(err);
        continue;
      }
      const pipeline: Pipeline = c;
      // Writes are handed to the writer in group order, each once its group is signed.
      const previous = c.handedOver;
      let handedOver!: () => void;
      c.handedOver = new Promise<void>((r) => (handedOver = r));
      const write = (async () => {
        try {
          try {
            await plan.signed;
          } finally {
            await previous;
          }
          return writer.write(plan.write);
        } finally {
          handedOver();
        }
      })();
      const settled = write.then(
        () => {
          forgetKeys(pipeline, plan);
          this.deps.committed(companyId, plan, group, t0);
        },
        (err: unknown) => {
          forgetKeys(pipeline, plan);
          pipeline.failed = true;
          for (const p of group) p.headMoves = (p.headMoves ?? 0) + 1;
          const again = group.every((p) => (p.headMoves as number) <= MAX_HEAD_MOVES);
          if (err instanceof KeyRetiredError && again) {
            // Another process (or this one) rotated the key: sign with the new one and build again.
            pipeline.keyReload ??= this.deps.keyring.reload().catch((e: unknown) => this.deps.onError?.(e, 'loading the rotated signing key failed'));
            pipeline.retry.push(group);
          } else if (err instanceof HeadMovedError && again) pipeline.retry.push(group);
          else for (const p of group) p.reject(err);
        },
      );
      const tracked: Promise<void> = settled.finally(() => pipeline.inFlight.delete(tracked));
      c.inFlight.add(tracked);
    }
    // The chain state stays for the company's next requests (a few KiB each), up to a bound.
    if (this.pipelines.size > MAX_KEPT_CHAINS && c.keys.size === 0) this.pipelines.delete(companyId);
  }
}

/** A committed (or failed) group's key uses leave the in-flight map, unless a later group still in flight has added to them. */
function forgetKeys(pipeline: Pipeline, plan: Plan): void {
  for (const [k, uses] of plan.keys) if (pipeline.keys.get(k) === uses) pipeline.keys.delete(k);
}
