// Group commit. Requests for one company queue up; one flush appends everything queued
// in a single locked transaction (so N concurrent requests cost one commit, not N), then
// answers each request. A request is all-or-nothing: an idempotency conflict in one
// request fails that request alone, never its neighbours in the group.
import { canonicalEntryText, type EntryBody, LEDGER_FORMAT_VERSION } from '../core/entry.js';
import { sha256Hex } from '../core/hash.js';
import type { ChainTx, LogEntryRow } from '../store/chain.js';
import type { Store } from '../store/store.js';
import { iso } from '../time.js';
import type { PreparedEvent } from './input.js';
import type { Keyring } from './keyring.js';
import type { Signer } from './signer.js';
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

export class Appender {
  private readonly queues = new Map<string, Pending[]>();
  private readonly draining = new Set<Promise<void>>();
  private closed = false;

  constructor(
    private readonly store: Store,
    private readonly keyring: Keyring,
    private readonly signer: Signer,
    private readonly clock: () => number,
    /** Most events one transaction takes; a larger backlog is split into several. */
    private readonly maxGroupEvents = 10_000,
  ) {}

  /** Resolves once the events are committed, with one result per event in order. */
  append(companyId: string, events: PreparedEvent[]): Promise<AppendedEvent[]> {
    if (this.closed) return Promise.reject(new AppenderClosedError());
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
      queue.push({ events, resolve, reject });
    });
  }

  /** Refuses new appends and waits until every queued one has committed or failed. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.draining.size > 0) await Promise.all([...this.draining]);
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
        const outcomes = await this.store.withChain(companyId, (tx) => this.appendGroup(companyId, tx, group));
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

  private async appendGroup(companyId: string, tx: ChainTx, group: Pending[]): Promise<Array<AppendedEvent[] | Error>> {
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

    if (rows.length > 0) {
      const signatures = await this.signer.signMany(rows.map((r) => r.hash));
      rows.forEach((r, i) => (r.signature = signatures[i] as string));
      await tx.insert(rows);
      await tx.setHead({ lastSeq: seq, lastHash: prevHash, lastCreatedAt: createdAt });
    }
    return outcomes;
  }
}
