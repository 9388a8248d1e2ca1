// Group commit. Requests for one company queue up; one flush appends everything queued
// in a single locked transaction (so N concurrent requests cost one commit, not N), then
// answers each request. A request is all-or-nothing: an idempotency conflict in one
// request fails that request alone, never its neighbours in the group.
import { canonicalEntryText, type EntryBody, LEDGER_FORMAT_VERSION } from '../core/entry.js';
import { sha256Hex } from '../core/hash.js';
import { entryLeafHash, storedHashIndex, verifyConsistency } from '../core/merkle.js';
import type { ChainTx, CheckpointRow, LogEntryRow } from '../store/chain.js';
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

interface GroupResult {
  outcomes: Array<AppendedEvent[] | Error>;
  appended: number;
  /** When entries remain without a checkpoint: the clock time at which one is due. */
  checkpointDueAt?: number;
}

export class Appender {
  private readonly queues = new Map<string, Pending[]>();
  private readonly draining = new Set<Promise<void>>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
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

  private async drain(companyId: string): Promise<void> {
    const queue = this.queues.get(companyId) as Pending[];
    while (queue.length > 0) {
      let n = 0;
      let take = 0;
      while (take < queue.length && (take === 0 || n + (queue[take] as Pending).events.length <= this.maxGroupEvents)) {
        n += (queue[take] as Pending).events.length;
        take++;
      }
      const group = queue.splice(0, take);
      try {
        const t0 = performance.now();
        const { outcomes, appended, checkpointDueAt } = await this.store.withChain(companyId, (tx) => this.appendGroup(companyId, tx, group));
        if (appended > 0) this.options.onCommit?.(appended, (performance.now() - t0) / 1000);
        if (checkpointDueAt !== undefined) this.scheduleCheckpoint(companyId, checkpointDueAt);
        group.forEach((p, i) => {
          const o = outcomes[i] as AppendedEvent[] | Error;
          if (o instanceof Error) p.reject(o);
          else p.resolve(o);
        });
      } catch (err) {
        for (const p of group) p.reject(err);
      }
    }
    this.queues.delete(companyId);
  }

  private async appendGroup(companyId: string, tx: ChainTx, group: Pending[]): Promise<GroupResult> {
    const keys = new Set<string>();
    for (const p of group) for (const e of p.events) if (e.envelope.idempotency_key !== null) keys.add(e.envelope.idempotency_key);
    // Everything an idempotency key already stands for: earlier entries, then this group's.
    const byKey = new Map<string, { event_type: string; data: string; result: AppendedEvent }>();
    for (const row of await tx.findByIdempotencyKeys([...keys])) {
      byKey.set(row.idempotency_key as string, {
        event_type: row.event_type,
        data: row.data,
        result: { log_id: row.log_id, seq: row.seq, hash: row.hash, event_type: row.event_type, created_at: row.created_at, duplicate: true },
      });
    }

    // Entries' created_at never goes backwards along the chain, even if the clock does.
    const nowMs = this.clock();
    const now = iso(nowMs);
    const createdAt = now > tx.head.lastCreatedAt ? now : tx.head.lastCreatedAt;
    let seq = tx.head.lastSeq;
    let prevHash = tx.head.lastHash;
    const rows: LogEntryRow[] = [];
    const outcomes: Array<AppendedEvent[] | Error> = [];

    for (const p of group) {
      const mark = { seq, prevHash, rows: rows.length };
      const added: string[] = [];
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
        const body: EntryBody = {
          format_version: LEDGER_FORMAT_VERSION,
          company_id: companyId,
          seq,
          log_id: uuidv7(nowMs),
          event_type: ev.event_type,
          data: ev.data,
          ...ev.envelope,
          extra: ev.extra,
          created_at: createdAt,
          prev_hash: prevHash,
        };
        const hash = sha256Hex(canonicalEntryText(body, ev.dataJson, ev.extraJson));
        rows.push({ ...body, data: ev.dataJson, extra: ev.extraJson, hash, signature: '', key_id: this.keyring.active.keyId });
        prevHash = hash;
        const result: AppendedEvent = { log_id: body.log_id, seq, hash, event_type: ev.event_type, created_at: createdAt, duplicate: false };
        results.push(result);
        if (key !== null) {
          byKey.set(key, { event_type: ev.event_type, data: ev.dataJson, result });
          added.push(key);
        }
      }
      if (failure) {
        // Undo this request's part; the rest of the group goes ahead.
        ({ seq, prevHash } = mark);
        rows.length = mark.rows;
        for (const k of added) byKey.delete(k);
        outcomes.push(failure);
      } else {
        outcomes.push(results);
      }
    }

    const forced = group.some((p) => p.checkpoint);
    const appended = rows.length;
    if (rows.length === 0 && !forced) return { outcomes, appended };
    const oldSize = tx.head.lastSeq + 1;
    const edge = await readEdge((i) => tx.readTreeHashes(i), oldSize);
    if (rows.length > 0) {
      const signatures = await this.signer.signMany(rows.map((r) => r.hash));
      rows.forEach((r, i) => (r.signature = signatures[i] as string));
      await tx.insert(rows);
      await tx.setHead({ lastSeq: seq, lastHash: prevHash, lastCreatedAt: createdAt });
      // The tree grows in the same transaction: entries and their leaves commit together.
      const hashes: string[] = [];
      for (const r of rows) for (const h of edge.append(entryLeafHash(r.hash))) hashes.push(h.toString('hex'));
      await tx.insertTreeHashes(storedHashIndex(0, oldSize), hashes);
    }

    const latest = await tx.latestCheckpoint();
    const covered = latest?.tree_size ?? 0;
    if (edge.size === covered) return { outcomes, appended };
    const latestAt = latest ? Date.parse(latest.timestamp) : -Infinity;
    if (!forced && nowMs - latestAt < this.options.checkpointIntervalMs) {
      return { outcomes, appended, checkpointDueAt: latestAt + this.options.checkpointIntervalMs };
    }
    await this.signCheckpoint(companyId, tx, latest, edge.size, edge.root(), nowMs);
    return { outcomes, appended };
  }

  /** Signs the new tree only if it provably extends the last checkpoint, so no two checkpoints ever conflict. */
  private async signCheckpoint(companyId: string, tx: ChainTx, latest: CheckpointRow | undefined, size: number, root: Buffer, nowMs: number): Promise<void> {
    if (latest) {
      const proof = await consistencyProof((i) => tx.readTreeHashes(i), latest.tree_size, size);
      if (!verifyConsistency(latest.tree_size, size, proof, Buffer.from(latest.root_hash, 'hex'), root)) {
        // Refuse to sign, but keep accepting entries: the verifier reports the damage.
        this.options.onError?.(new InconsistentTreeError(companyId, latest.tree_size, size), 'checkpoint refused');
        return;
      }
    }
    await tx.insertCheckpoint(this.options.checkpoints.sign(companyId, size, root, nowMs));
  }
}
