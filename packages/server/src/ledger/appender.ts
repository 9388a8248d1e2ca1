// Group commit. Requests for one company queue up; each group takes everything queued, so
// N concurrent requests cost one commit, not N. A request is all-or-nothing: an idempotency
// conflict in one request fails that request alone, never its neighbours in the group.
//
// Two ways to commit a group, one way to build it (plan):
// - locked (PostgreSQL): read the chain, build, sign and write in one transaction holding the
//   company's chain lock, which is what several processes on one database need;
// - pipelined (a store with a ChainWriter: SQLite's writer thread): build from the chain as
//   this process last built it, and hand the write over; the next group is built and signed
//   while this one commits (a small group is signed by the writer thread itself). Each write
//   commits only on the head it was built on, so a group built on a head that moved is built
//   again: never a fork, never a gap.
import type { KeyObject } from 'node:crypto';
import { ENTRY_SIGNATURE_CONTEXT } from '@audit-ledger/core';
import { type ChainHead, type ChainWriter, HeadMovedError, KeyRetiredError } from '../store/chain.js';
import type { Store } from '../store/store.js';
import type { CheckpointSigner } from './checkpoints.js';
import type { PreparedEvent } from './input.js';
import type { Keyring } from './keyring.js';
import type { Signer } from './signer.js';
import { type AppendedEvent, AppenderClosedError } from './appender/errors.js';
import { Planner } from './appender/planner.js';
import type { ChainState, Pending, Pipeline, Plan } from './appender/types.js';

export interface AppenderOptions {
  checkpoints: CheckpointSigner;
  /** A group signs a checkpoint when the last one is at least this old; later groups wait for a timer. 0: every group. */
  checkpointIntervalMs: number;
  /** Most events one transaction takes; a larger backlog is split into several. */
  maxGroupEvents?: number;
  /** Told about failures nobody awaits (a timed checkpoint) and refused checkpoints. */
  onError?: (err: unknown, message: string) => void;
  /** Told after each committed transaction that appended entries: how many, and how long it took. */
  onCommit?: (entries: number, seconds: number) => void;
}

/** Groups being built, signed or committed at once per company (the writer commits them in order). */
const MAX_IN_FLIGHT = 4;
/** Companies whose chain state is kept between bursts of appends; beyond it, an idle one is read again next time. */
const MAX_KEPT_CHAINS = 1000;
/** How often a group is built again after finding the head moved before it gives up. */
const MAX_HEAD_MOVES = 3;

export class Appender {
  private readonly queues = new Map<string, Pending[]>();
  private readonly draining = new Set<Promise<void>>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly pipelines = new Map<string, Pipeline>();
  /** Locked appends: the chain each company's last commit here left (saves reading its edge and checkpoint). */
  private readonly lockedChains = new Map<string, Pick<ChainState, 'head' | 'edge' | 'latest'>>();
  private closed = false;
  private readonly maxGroupEvents: number;
  private readonly planner: Planner;

  constructor(
    private readonly store: Store,
    private readonly keyring: Keyring,
    private readonly signer: Signer,
    private readonly clock: () => number,
    private readonly options: AppenderOptions,
  ) {
    this.maxGroupEvents = options.maxGroupEvents ?? 10_000;
    this.planner = new Planner({ clock, keyring, signer, checkpoints: options.checkpoints, checkpointIntervalMs: options.checkpointIntervalMs, onError: options.onError });
    const useKey = ({ keyId, privateKey }: { keyId: string; privateKey: KeyObject }) => {
      signer.addKey({ keyId, privateKey });
      store.chainWriter?.signUnsignedWith({ keyId, privateKey, context: ENTRY_SIGNATURE_CONTEXT });
    };
    useKey(keyring.active);
    // After a rotation, the signers hold the new key before any group names it.
    keyring.onSwitch(useKey);
  }

  /** Resolves once the events are committed, with one result per event in order. */
  append(companyId: string, events: PreparedEvent[]): Promise<AppendedEvent[]> {
    if (this.closed) return Promise.reject(new AppenderClosedError());
    return this.enqueue(companyId, { events });
  }

  /** Signs a checkpoint covering every committed entry now (if any is uncovered). */
  async checkpoint(companyId: string): Promise<void> {
    if (this.closed) throw new AppenderClosedError();
    await this.enqueue(companyId, { events: [], checkpoint: true });
  }

  private enqueue(companyId: string, item: Omit<Pending, 'resolve' | 'reject'>): Promise<AppendedEvent[]> {
    return new Promise((resolve, reject) => {
      let queue = this.queues.get(companyId);
      if (!queue) {
        queue = [];
        this.queues.set(companyId, queue);
        // Start on the next turn, so requests arriving together join one group.
        const drained = new Promise<void>((done) => setImmediate(() => void this.drain(companyId).finally(done)));
        this.draining.add(drained);
        void drained.then(() => this.draining.delete(drained));
      }
      queue.push({ ...item, resolve, reject });
      this.pipelines.get(companyId)?.wake?.();
    });
  }

  /** Refuses new appends, signs the checkpoints still due, and waits until everything queued has committed or failed. */
  async close(): Promise<void> {
    this.closed = true;
    for (const [companyId, timer] of this.timers) {
      clearTimeout(timer);
      this.enqueue(companyId, { events: [], checkpoint: true }).catch((err: unknown) => this.options.onError?.(err, 'final checkpoint failed'));
    }
    this.timers.clear();
    while (this.draining.size > 0) await Promise.all([...this.draining]);
  }

  private scheduleCheckpoint(companyId: string, dueAt: number): void {
    if (this.closed || this.timers.has(companyId)) return;
    const timer = setTimeout(() => {
      this.timers.delete(companyId);
      if (this.closed) return;
      this.enqueue(companyId, { events: [], checkpoint: true }).catch((err: unknown) => this.options.onError?.(err, 'timed checkpoint failed'));
    }, Math.max(0, dueAt - this.clock()));
    timer.unref();
    this.timers.set(companyId, timer);
  }

  private takeGroup(queue: Pending[]): Pending[] {
    let n = 0;
    let take = 0;
    while (take < queue.length && (take === 0 || n + (queue[take] as Pending).events.length <= this.maxGroupEvents)) {
      n += (queue[take] as Pending).events.length;
      take++;
    }
    return queue.splice(0, take);
  }

  private async drain(companyId: string): Promise<void> {
    const queue = this.queues.get(companyId) as Pending[];
    const writer = this.store.chainWriter;
    if (writer) await this.drainPipelined(companyId, queue, writer);
    else while (queue.length > 0) await this.appendLocked(companyId, this.takeGroup(queue));
    this.queues.delete(companyId);
  }

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
        const plan = await this.store.withChain(companyId, async (tx) => {
          state = await this.planner.loadState(tx, false, known && sameHead(known.head, tx.head) ? known : undefined);
          const plan = await this.planner.plan(companyId, state, group, await tx.findByIdempotencyKeys(idempotencyKeys(group)), new Map(), undefined);
          await plan.signed;
          const w = plan.write;
          if (w.rows.length > 0) await tx.append(w.rows, w.head, w.treeFirst, w.treeHashes);
          if (w.checkpoint) await tx.insertCheckpoint(w.checkpoint);
          return plan;
        });
        // Only the data: the state's consistency check holds the transaction, which must not outlive it.
        if (this.lockedChains.size < MAX_KEPT_CHAINS) this.lockedChains.set(companyId, { head: state.head, edge: state.edge, latest: state.latest });
        this.committed(companyId, plan, group, t0);
        return;
      } catch (err) {
        // The key was rotated (here or in another process): nothing was written; sign with the new key.
        let failure = err;
        if (err instanceof KeyRetiredError && attempt < MAX_HEAD_MOVES) {
          try {
            await this.keyring.reload();
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
      const group = this.takeGroup(queue);
      let plan: Plan;
      const t0 = performance.now();
      try {
        c.state ??= await this.store.withChain(companyId, (tx) => this.planner.loadState(tx, true));
        // Keys of groups still committing are answered from memory; the rest from the store.
        const lookUp = idempotencyKeys(group).filter((k) => !c.keys.has(k));
        plan = await this.planner.plan(companyId, c.state, group, await writer.findByIdempotencyKeys(companyId, lookUp), c.keys, writer);
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
          for (const k of plan.keys) pipeline.keys.delete(k);
          this.committed(companyId, plan, group, t0);
        },
        (err: unknown) => {
          for (const k of plan.keys) pipeline.keys.delete(k);
          pipeline.failed = true;
          for (const p of group) p.headMoves = (p.headMoves ?? 0) + 1;
          const again = group.every((p) => (p.headMoves as number) <= MAX_HEAD_MOVES);
          if (err instanceof KeyRetiredError && again) {
            // Another process (or this one) rotated the key: sign with the new one and build again.
            pipeline.keyReload ??= this.keyring.reload().catch((e: unknown) => this.options.onError?.(e, 'loading the rotated signing key failed'));
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

  /** Answers a committed group's requests. */
  private committed(companyId: string, plan: Plan, group: Pending[], t0: number): void {
    if (plan.write.rows.length > 0) this.options.onCommit?.(plan.write.rows.length, (performance.now() - t0) / 1000);
    if (plan.checkpointDueAt !== undefined) this.scheduleCheckpoint(companyId, plan.checkpointDueAt);
    group.forEach((p, i) => {
      const o = plan.outcomes[i] as AppendedEvent[] | Error;
      if (o instanceof Error) p.reject(o);
      else p.resolve(o);
    });
  }
}

function sameHead(a: ChainHead, b: ChainHead): boolean {
  return a.lastSeq === b.lastSeq && a.lastHash === b.lastHash;
}

/** The idempotency keys a group's events carry. */
function idempotencyKeys(group: Pending[]): string[] {
  const keys = new Set<string>();
  for (const p of group) for (const e of p.events) if (e.envelope.idempotency_key !== null) keys.add(e.envelope.idempotency_key);
  return [...keys];
}
