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
import { canonicalEntryText, LEDGER_FORMAT_VERSION } from '../core/entry.js';
import { ENTRY_SIGNATURE_CONTEXT } from '../core/signature.js';
import { sha256Hex } from '../core/hash.js';
import { entryLeafHash, storedHashIndex, type TreeEdge, verifyConsistency } from '../core/merkle.js';
import { type ChainHead, type ChainTx, type ChainWrite, type ChainWriter, type CheckpointRow, HeadMovedError, KeyRetiredError, type LogEntryRow } from '../store/chain.js';
import type { Store } from '../store/store.js';
import { iso } from '../time.js';
import type { CheckpointSigner } from './checkpoints.js';
import type { PreparedEvent } from './input.js';
import type { Keyring } from './keyring.js';
import type { Signer } from './signer.js';
import { consistencyProof, readEdge } from './tree.js';
import { uuidv7 } from './uuidv7.js';

export interface AppendedEvent {
  log_id: string;
  seq: number;
  hash: string;
  event_type: string;
  created_at: string;
  /** True when an idempotency key matched an earlier event and nothing was appended. */
  duplicate: boolean;
}

/** An idempotency key reused with a different event_type or data. */
export class IdempotencyConflictError extends Error {
  constructor(
    readonly index: number,
    readonly key: string,
  ) {
    super(`idempotency_key "${key}" was already used for a different event`);
    this.name = 'IdempotencyConflictError';
  }
}

interface Pending {
  events: PreparedEvent[];
  /** Sign a checkpoint for whatever is not yet covered, whatever the interval says. */
  checkpoint?: boolean;
  /** Times its group was built on a head that then moved. */
  headMoves?: number;
  resolve(r: AppendedEvent[]): void;
  reject(e: unknown): void;
}

/** Thrown by append() once close() has been called. */
export class AppenderClosedError extends Error {
  constructor() {
    super('the service is shutting down');
    this.name = 'AppenderClosedError';
  }
}

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

/** The tree in the store does not extend the last checkpoint: signing would fork the log. */
export class InconsistentTreeError extends Error {
  constructor(companyId: string, from: number, to: number) {
    super(`company ${companyId}: the stored tree of size ${to} is not consistent with the checkpoint at size ${from}; no checkpoint signed`);
    this.name = 'InconsistentTreeError';
  }
}

/** What one group's appends are built on: the chain as committed, plus any groups still committing. */
interface ChainState {
  head: ChainHead;
  edge: TreeEdge;
  latest: CheckpointRow | undefined;
  /** Whether the stored tree extends the latest checkpoint (checked once, when a checkpoint is about to be signed). */
  consistent: () => Promise<boolean>;
}

/** An idempotency key's first use: compared with repeats, and answered to them. */
interface KeyUse {
  event_type: string;
  data: string;
  result: AppendedEvent;
}

/** One group, sequenced, hashed and signed: the answers and the writes that make them true. */
interface Plan {
  outcomes: Array<AppendedEvent[] | Error>;
  /** The write; its rows are signed once `signed` resolves (or, left unsigned, by the writer). */
  write: ChainWrite;
  signed: Promise<void>;
  /** Idempotency keys this group uses first. */
  keys: string[];
  /** When entries remain without a checkpoint: the clock time at which one is due. */
  checkpointDueAt?: number;
}

/** A company's appends on a store with a ChainWriter: the chain as this process built it, and the writes in flight. */
interface Pipeline {
  state?: ChainState;
  /** Keys used by groups that are still committing. */
  keys: Map<string, KeyUse>;
  inFlight: Set<Promise<void>>;
  /** A write failed: the writes built on it fail too; wait for them, then reload the state. */
  failed: boolean;
  /** Groups whose write found the head moved, in order: appended again from the stored head. */
  retry: Pending[][];
  /** Resolves once the last group's write has been handed to the writer (or failed before). */
  handedOver: Promise<void>;
  /** Set while the drain waits with room for another group: a new request wakes it. */
  wake?: () => void;
  /** A write found its signing key retired: the rotated key, loaded before anything is built again. */
  keyReload?: Promise<void>;
}

/** Groups being built, signed or committed at once per company (the writer commits them in order). */
const MAX_IN_FLIGHT = 4;
/** Companies whose chain state is kept between bursts of appends; beyond it, an idle one is read again next time. */
const MAX_KEPT_CHAINS = 1000;
/** How often a group is built again after finding the head moved before it gives up. */
const MAX_HEAD_MOVES = 3;
/**
 * Pipelined groups up to this many entries are signed by the writer thread as it inserts them:
 * a round trip to a signing worker costs more (in latency, and in CPU for waking threads) than
 * the writer signing them. Larger groups are signed by the workers while earlier ones commit.
 */
const WRITER_SIGNS_UP_TO = 64;

export class Appender {
  private readonly queues = new Map<string, Pending[]>();
  private readonly draining = new Set<Promise<void>>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly pipelines = new Map<string, Pipeline>();
  /** Locked appends: the chain each company's last commit here left (saves reading its edge and checkpoint). */
  private readonly lockedChains = new Map<string, Pick<ChainState, 'head' | 'edge' | 'latest'>>();
  private closed = false;
  private readonly maxGroupEvents: number;

  constructor(
    private readonly store: Store,
    private readonly keyring: Keyring,
    private readonly signer: Signer,
    private readonly clock: () => number,
    private readonly options: AppenderOptions,
  ) {
    this.maxGroupEvents = options.maxGroupEvents ?? 10_000;
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
          state = await this.loadState(tx, false, known && sameHead(known.head, tx.head) ? known : undefined);
          const plan = await this.plan(companyId, state, group, await tx.findByIdempotencyKeys(idempotencyKeys(group)), new Map(), undefined);
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
        c.state ??= await this.store.withChain(companyId, (tx) => this.loadState(tx, true));
        // Keys of groups still committing are answered from memory; the rest from the store.
        const lookUp = idempotencyKeys(group).filter((k) => !c.keys.has(k));
        plan = await this.plan(companyId, c.state, group, await writer.findByIdempotencyKeys(companyId, lookUp), c.keys, writer);
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

  /** The chain as stored, read inside the locked transaction. */
  private async loadState(tx: ChainTx, checkNow = false, known?: Pick<ChainState, 'edge' | 'latest'>): Promise<ChainState> {
    const size = tx.head.lastSeq + 1;
    const edge = known?.edge ?? (await readEdge((i) => tx.readTreeHashes(i), size));
    const latest = known ? known.latest : await tx.latestCheckpoint();
    const rootAt = edge.root();
    let verdict: Promise<boolean> | undefined;
    const consistent = () =>
      (verdict ??= (async () => {
        if (!latest) return true;
        if (latest.tree_size > size) return false;
        const proof = await consistencyProof((i) => tx.readTreeHashes(i), latest.tree_size, size);
        return verifyConsistency(latest.tree_size, size, proof, Buffer.from(latest.root_hash, 'hex'), rootAt);
      })());
    const head = { ...tx.head };
    if (!checkNow) return { head, edge, latest, consistent };
    // A state kept beyond its transaction answers from a check made inside it, and holds no
    // reference to the transaction (a kept one kept memory alive).
    const ok = await consistent();
    return { head, edge, latest, consistent: () => Promise.resolve(ok) };
  }

  /**
   * Sequences, hashes and signs a group on `state`, and advances `state` past it. A request
   * is all-or-nothing: an idempotency conflict fails that request alone, never its neighbours.
   */
  private async plan(
    companyId: string,
    state: ChainState,
    group: Pending[],
    committedKeys: LogEntryRow[],
    inFlightKeys: Map<string, KeyUse>,
    /** The writer a pipelined group goes to (undefined: the caller writes it, holding the chain lock). */
    writer: ChainWriter | undefined,
  ): Promise<Plan> {
    // Everything an idempotency key already stands for: committed entries, groups still committing, then this group's.
    const byKey = new Map<string, KeyUse>(inFlightKeys);
    for (const row of committedKeys) {
      byKey.set(row.idempotency_key as string, {
        event_type: row.event_type,
        data: row.data,
        result: { log_id: row.log_id, seq: row.seq, hash: row.hash, event_type: row.event_type, created_at: row.created_at, duplicate: true },
      });
    }

    // Entries' created_at never goes backwards along the chain, even if the clock does.
    const nowMs = this.clock();
    const now = iso(nowMs);
    const expect = state.head;
    const createdAt = now > expect.lastCreatedAt ? now : expect.lastCreatedAt;
    let seq = expect.lastSeq;
    let prevHash = expect.lastHash;
    const rows: LogEntryRow[] = [];
    const outcomes: Array<AppendedEvent[] | Error> = [];
    const keys: string[] = [];
    // One key for the whole group, read once: a rotation meanwhile makes the store refuse the
    // write (KeyRetiredError), and the group is built again with the new key.
    const signingKey = this.keyring.active;
    const keyId = signingKey.keyId;

    for (const p of group) {
      const mark = { seq, prevHash, rows: rows.length, keys: keys.length };
      const results: AppendedEvent[] = [];
      let failure: Error | undefined;
      for (const [index, ev] of p.events.entries()) {
        const key = ev.envelope.idempotency_key;
        const seen = key === null ? undefined : byKey.get(key);
        if (seen) {
          if (seen.event_type !== ev.event_type || seen.data !== ev.dataJson) {
            failure = new IdempotencyConflictError(index, key as string);
            break;
          }
          results.push({ ...seen.result, duplicate: true });
          continue;
        }
        seq += 1;
        // The stored row is the hashed body with data and extra as their canonical JSON.
        const row: LogEntryRow = {
          format_version: LEDGER_FORMAT_VERSION,
          company_id: companyId,
          seq,
          log_id: uuidv7(nowMs),
          event_type: ev.event_type,
          data: ev.dataJson,
          ...ev.envelope,
          extra: ev.extraJson,
          created_at: createdAt,
          prev_hash: prevHash,
          hash: '',
          signature: '',
          key_id: keyId,
        };
        row.hash = sha256Hex(canonicalEntryText(row, ev.dataJson, ev.extraJson));
        rows.push(row);
        prevHash = row.hash;
        const result: AppendedEvent = { log_id: row.log_id, seq, hash: row.hash, event_type: ev.event_type, created_at: createdAt, duplicate: false };
        results.push(result);
        if (key !== null) {
          byKey.set(key, { event_type: ev.event_type, data: ev.dataJson, result });
          keys.push(key);
        }
      }
      if (failure) {
        // Undo this request's part; the rest of the group goes ahead.
        ({ seq, prevHash } = mark);
        rows.length = mark.rows;
        for (const k of keys.splice(mark.keys)) byKey.delete(k);
        outcomes.push(failure);
      } else {
        outcomes.push(results);
      }
    }

    // The tree grows with the entries: they and their leaves commit together.
    const treeFirst = storedHashIndex(0, state.edge.size);
    const treeHashes: string[] = [];
    for (const r of rows) for (const h of state.edge.append(entryLeafHash(r.hash))) treeHashes.push(h.toString('hex'));
    // Signing runs while the caller goes on (the next group can be built meanwhile); a small
    // pipelined group goes unsigned (signature '') to the writer, which signs it.
    let signed = Promise.resolve();
    if (!writer || rows.length > WRITER_SIGNS_UP_TO) {
      signed = this.signer.signMany(
        rows.map((r) => r.hash),
        { offThread: writer !== undefined, keyId },
      ).then((signatures) => rows.forEach((r, i) => (r.signature = signatures[i] as string)));
      signed.catch(() => undefined); // awaited by the caller; never an unhandled rejection
    }
    const head: ChainHead = { lastSeq: seq, lastHash: prevHash, lastCreatedAt: rows.length > 0 ? createdAt : expect.lastCreatedAt };
    state.head = head;
    for (const k of keys) inFlightKeys.set(k, byKey.get(k) as KeyUse);

    const plan: Plan = { outcomes, keys, signed, write: { companyId, expect, rows, head, treeFirst, treeHashes } };
    const size = state.edge.size;
    const covered = state.latest?.tree_size ?? 0;
    if (size === covered) return plan;
    const latestAt = state.latest ? Date.parse(state.latest.timestamp) : -Infinity;
    if (!group.some((p) => p.checkpoint) && nowMs - latestAt < this.options.checkpointIntervalMs) {
      plan.checkpointDueAt = latestAt + this.options.checkpointIntervalMs;
      return plan;
    }
    // Sign the new tree only if the stored one provably extends the last checkpoint, so no two checkpoints ever conflict.
    if (!(await state.consistent())) {
      // Refuse to sign, but keep accepting entries: the verifier reports the damage.
      this.options.onError?.(new InconsistentTreeError(companyId, covered, size), 'checkpoint refused');
      return plan;
    }
    plan.write.checkpoint = this.options.checkpoints.sign(signingKey, companyId, size, state.edge.root(), nowMs);
    state.latest = plan.write.checkpoint;
    return plan;
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
