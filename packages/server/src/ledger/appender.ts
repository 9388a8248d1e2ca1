// Group commit. Requests for one company queue up; each group takes everything queued, so
// N concurrent requests cost one commit, not N. A request is all-or-nothing: an idempotency
// conflict in one request fails that request alone, never its neighbours in the group.
//
// Two ways to commit a group (appender/locked.ts, appender/pipelined.ts), one way to build it
// (appender/planner.ts):
// - locked (PostgreSQL): read the chain, build, sign and write in one transaction holding the
//   company's chain lock, which is what several processes on one database need;
// - pipelined (a store with a ChainWriter: SQLite's writer thread): build from the chain as
//   this process last built it, and hand the write over; the next group is built and signed
//   while this one commits (a small group is signed by the writer thread itself). Each write
//   commits only on the head it was built on, so a group built on a head that moved is built
//   again: never a fork, never a gap.
import type { ChainWriter, CheckpointRow, WithChain } from '../store/chain.js';
import type { CheckpointSigner } from './checkpoints.js';
import type { PreparedEvent } from './appender/types.js';
import type { Keyring, SigningKey } from './keyring.js';
import type { Signer } from './signer.js';
import { type AppendedEvent, AppenderClosedError } from './appender/errors.js';
import type { Committer, CommitterDeps } from './appender/committer.js';
import { LockedCommitter } from './appender/locked.js';
import { PipelinedCommitter } from './appender/pipelined.js';
import { Planner } from './appender/planner.js';
import type { Pending, Plan } from './appender/types.js';

export interface AppenderDeps {
  /** The chain's transactions, and the store's writer thread when it has one. */
  store: { withChain: WithChain; chainWriter?: ChainWriter };
  keyring: Keyring;
  signer: Signer;
  clock: () => number;
  checkpoints: CheckpointSigner;
  /** A group signs a checkpoint when the last one is at least this old; later groups wait for a timer. 0: every group. */
  checkpointIntervalMs: number;
  /** Most events one transaction takes; a larger backlog is split into several. */
  maxGroupEvents?: number;
  /** Told about failures nobody awaits (a timed checkpoint) and refused checkpoints. */
  onError?: (err: unknown, message: string) => void;
  /** After each commit: entries written, seconds taken, and how many of them were idempotency conflicts (appended and marked). */
  onCommit?: (entries: number, seconds: number, idempotencyConflicts: number) => void;
  /** Told of each checkpoint once it has committed (continuity/marks.ts keeps the newest outside the database). */
  onCheckpoint?: (row: CheckpointRow) => void;
  /** Why appends and checkpoints to a company are refused now (a continuity hold: continuity/guard.ts), or undefined. */
  refusal?: (companyId: string) => Error | undefined;
}

export class Appender {
  private readonly queues = new Map<string, Pending[]>();
  private readonly draining = new Set<Promise<void>>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private closed = false;
  private readonly maxGroupEvents: number;
  private readonly committer: Committer;

  constructor(private readonly deps: AppenderDeps) {
    const { store, keyring, signer, clock } = deps;
    this.maxGroupEvents = deps.maxGroupEvents ?? 10_000;
    const planner = new Planner({ clock, keyring, signer, checkpoints: deps.checkpoints, checkpointIntervalMs: deps.checkpointIntervalMs, onError: deps.onError });
    const committerDeps: CommitterDeps = {
      store,
      planner,
      keyring,
      takeGroup: (queue) => this.takeGroup(queue),
      committed: (companyId, plan, group, t0) => this.committed(companyId, plan, group, t0),
      ...(deps.onError ? { onError: deps.onError } : {}),
    };
    this.committer = store.chainWriter ? new PipelinedCommitter(committerDeps, store.chainWriter) : new LockedCommitter(committerDeps);
    const useKey = ({ keyId, custody }: SigningKey) => {
      signer.addKey({ keyId, custody });
      // SQLite's writer thread signs small groups itself, with a key in memory only (planner.ts).
      if (custody.keyObject) store.chainWriter?.signUnsignedWith({ keyId, privateKey: custody.keyObject });
    };
    useKey(keyring.active);
    // After a rotation, the signers hold the new key before any group names it.
    keyring.onSwitch(useKey);
  }

  /** Resolves once the events are committed, with one result per event in order. */
  append(companyId: string, events: PreparedEvent[]): Promise<AppendedEvent[]> {
    if (this.closed) return Promise.reject(new AppenderClosedError());
    const refused = this.deps.refusal?.(companyId);
    if (refused) return Promise.reject(refused);
    return this.enqueue(companyId, { events });
  }

  /** Signs a checkpoint covering every committed entry now (if any is uncovered). */
  async checkpoint(companyId: string): Promise<void> {
    if (this.closed) throw new AppenderClosedError();
    const refused = this.deps.refusal?.(companyId);
    if (refused) throw refused;
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
      this.committer.wake(companyId);
    });
  }

  /** Refuses new appends, signs the checkpoints still due, and waits until everything queued has committed or failed. */
  async close(): Promise<void> {
    this.closed = true;
    for (const [companyId, timer] of this.timers) {
      clearTimeout(timer);
      this.enqueue(companyId, { events: [], checkpoint: true }).catch((err: unknown) => this.deps.onError?.(err, 'final checkpoint failed'));
    }
    this.timers.clear();
    while (this.draining.size > 0) await Promise.all([...this.draining]);
  }

  private scheduleCheckpoint(companyId: string, dueAt: number): void {
    if (this.closed || this.timers.has(companyId)) return;
    const timer = setTimeout(() => {
      this.timers.delete(companyId);
      if (this.closed) return;
      this.enqueue(companyId, { events: [], checkpoint: true }).catch((err: unknown) => this.deps.onError?.(err, 'timed checkpoint failed'));
    }, Math.max(0, dueAt - this.deps.clock()));
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
    // A request may join the queue while the committer returns: the queue is removed only in the
    // same turn as it is seen empty, or that request would wait forever.
    do await this.committer.drain(companyId, queue);
    while (queue.length > 0);
    this.queues.delete(companyId);
  }

  /** Answers a committed group's requests. */
  private committed(companyId: string, plan: Plan, group: Pending[], t0: number): void {
    const rows = plan.write.rows;
    if (rows.length > 0) this.deps.onCommit?.(rows.length, (performance.now() - t0) / 1000, rows.filter((r) => r.idempotency_conflict_of !== null).length);
    if (plan.checkpointDueAt !== undefined) this.scheduleCheckpoint(companyId, plan.checkpointDueAt);
    if (plan.write.checkpoint) this.deps.onCheckpoint?.(plan.write.checkpoint);
    group.forEach((p, i) => {
      const o = plan.outcomes[i] as AppendedEvent[] | Error;
      if (o instanceof Error) p.reject(o);
      else p.resolve(o);
    });
  }
}
