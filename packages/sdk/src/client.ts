// The audit-ledger client. log() enqueues; a single sender sends batches (POST /logs/batch) by
// size and by time, retries network errors, 429 and 503 with exponential backoff and jitter
// (honouring Retry-After), and never retries other 4xx: the items a problem names go to onError
// and the rest of the batch is sent again. Every event gets a client-side id and an idempotency
// key derived from that id and its content, so a retried batch never appends twice and two
// different events never share a key. fetch-based: Node, browsers, Deno and Bun. The typed reads
// it inherits are in reads.ts.
import type { JsonObject } from '@audit-ledger/core';
import { type AgentSigner, signAgentEvent } from './agent-signing.js';
import { idempotencyKeyOf, RETRYABLE, retryDelay } from './delivery.js';
import type { Problem } from './problem.js';
import { LedgerReads } from './reads.js';

/** An event as POST /api/v1/logs takes it (docs/event-types.md for the vocabulary). */
export interface AuditEvent {
  event_type: string;
  data: JsonObject;
  event_id?: string;
  source?: string;
  trace_id?: string;
  session_id?: string;
  timestamp?: string;
  span_id?: string;
  parent_span_id?: string;
  parent_event_id?: string;
  root_event_id?: string;
  agent_id?: string;
  workflow_id?: string;
  causality_type?: string;
  idempotency_key?: string;
  schema_version?: string;
  [field: string]: unknown;
}

export interface ClientOptions {
  /** The service's API root, ending in /api/v1 (as other agent SDKs expect). */
  baseUrl: string;
  /** The company's integration API key (alk_…). */
  apiKey: string;
  /** Events per request (at most the service's MAX_BATCH_SIZE, default 1000). Default 100. */
  batchSize?: number;
  /** A partial batch is sent after this long. Default 1000 ms. */
  flushIntervalMs?: number;
  /** Events held in memory at most. Default 10,000. */
  maxQueue?: number;
  /** When the queue is full: 'block' makes log() wait for room (default); 'drop' refuses the event, counts it and calls onDrop. */
  whenFull?: 'block' | 'drop';
  onDrop?: (event: AuditEvent) => void;
  /** An event the service refused for good (a 4xx other than 429), with its problem. */
  onError?: (event: AuditEvent, problem: Problem) => void;
  /** Backoff: first delay and cap, in ms (default 200 and 30,000), doubled per attempt with full jitter. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /**
   * Durable storage for events between log() and their commit (Node: `fileSpool(dir)` from
   * '@audit-ledger/sdk/node'). With one, log() resolves only once the event is stored, an event
   * leaves it only after the service committed it, and a new client on the same spool sends what
   * an earlier process left (retries are deduplicated by the events' idempotency keys).
   */
  spool?: Spool;
  /**
   * The agent's own key (agentSigner() from a PKCS#8 PEM, or any AgentSigner): every event is
   * signed as the service will store it before it is queued, carrying agent_key_id and
   * agent_signature (docs/ledger-format.md §20). Register its publicKey first (POST /agent-keys).
   */
  agentSigner?: AgentSigner;
  /** Injected for tests and unusual runtimes. */
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

export interface ClientStats {
  queued: number;
  sent: number;
  failed: number;
  dropped: number;
  retries: number;
  requests: number;
}

/** Where events wait durably until committed (see ClientOptions.spool). */
export interface Spool {
  /** Every event stored and not yet removed, in the order stored. */
  load(): Promise<AuditEvent[]>;
  /** Stores the event durably before resolving. */
  append(event: AuditEvent): Promise<void>;
  /** Forgets committed (or refused) events, by event_id. */
  remove(eventIds: string[]): Promise<void>;
}

interface Queued {
  event: AuditEvent;
  done: Promise<void>;
  settle: () => void;
}


export class AuditLedgerClient extends LedgerReads {
  private readonly queue: Queued[] = [];
  private readonly waitingForRoom: Array<() => void> = [];
  private readonly opts: Required<Omit<ClientOptions, 'onDrop' | 'onError' | 'spool' | 'agentSigner'>> & Pick<ClientOptions, 'onDrop' | 'onError' | 'spool' | 'agentSigner'>;
  /** Resolves once what the spool held is queued again. */
  private readonly ready: Promise<void>;
  private sending: Promise<void> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;
  /** log() calls under way (not yet queued): close() waits for them. */
  private readonly accepting = new Set<Promise<void>>();
  /** Aborted when close() gives up at its deadline: delivery stops and what is queued stays unsent. */
  private readonly abandoned = new AbortController();
  private readonly counts: ClientStats = { queued: 0, sent: 0, failed: 0, dropped: 0, retries: 0, requests: 0 };

  constructor(options: ClientOptions) {
    if (!/\/api\/v1\/?$/.test(options.baseUrl)) throw new Error(`baseUrl must end in /api/v1 (got ${options.baseUrl})`);
    const opts: AuditLedgerClient['opts'] = {
      batchSize: 100,
      flushIntervalMs: 1000,
      maxQueue: 10_000,
      whenFull: 'block',
      retryBaseMs: 200,
      retryMaxMs: 30_000,
      fetch: globalThis.fetch.bind(globalThis),
      sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
      random: Math.random,
      ...options,
      baseUrl: options.baseUrl.replace(/\/$/, ''),
    };
    super(opts);
    this.opts = opts;
    this.ready = this.opts.spool ? this.opts.spool.load().then((left) => left.forEach((event) => this.enqueue(event))) : Promise.resolve();
  }

  /**
   * Enqueues an event; resolves once it is queued (and, with a spool, stored durably; not sent:
   * flush() waits for that). The event
   * gets an event_id (unless it has one) and a content-derived idempotency key (unless it has one).
   */
  async log(input: AuditEvent): Promise<void> {
    if (this.closed) throw new Error('the client is closed');
    // Counted until it is queued, so close() waits for it (a log() not awaited before close()
    // may still be signing, spooling or waiting for the spool to load).
    const accepting = this.accept(input);
    this.accepting.add(accepting);
    try {
      await accepting;
    } finally {
      this.accepting.delete(accepting);
    }
  }

  private async accept(input: AuditEvent): Promise<void> {
    await this.ready;
    let event: AuditEvent = { ...input, event_id: input.event_id ?? crypto.randomUUID() };
    event.idempotency_key = input.idempotency_key ?? idempotencyKeyOf(event);
    // Signed once, before it is stored or sent: every retry sends the same signature.
    if (this.opts.agentSigner) event = await signAgentEvent(event, this.opts.agentSigner);
    while (this.queue.length >= this.opts.maxQueue) {
      if (this.opts.whenFull === 'drop') {
        this.counts.dropped++;
        this.opts.onDrop?.(event);
        return;
      }
      await new Promise<void>((r) => this.waitingForRoom.push(r));
    }
    await this.opts.spool?.append(event);
    this.enqueue(event);
  }

  private enqueue(event: AuditEvent): void {
    let settle!: () => void;
    const done = new Promise<void>((r) => (settle = r));
    this.queue.push({ event, done, settle });
    this.counts.queued++;
    if (this.queue.length >= this.opts.batchSize) this.kick();
    else this.timer ??= setTimeout(() => this.kick(), this.opts.flushIntervalMs);
  }

  /** Resolves when every event logged before the call is committed or reported to onError. */
  async flush(): Promise<void> {
    await this.ready;
    const pending = this.queue.map((q) => q.done);
    this.kick();
    await Promise.all(pending);
  }

  /**
   * Refuses further events (log() then throws), waits for every log() already called to be
   * queued, and flushes. Without a deadline it waits as long as delivery takes
   * (retrying while the service is unreachable). With `deadlineMs`, it stops waiting after that
   * long: delivery stops (the request in flight is aborted), and the events not committed are
   * returned in `unsent`. With a spool they also stay in it, and the next client on the same
   * spool sends them (their idempotency keys make a re-send of one the service did commit
   * harmless); without one, they are only in `unsent`.
   */
  async close(opts: { deadlineMs?: number } = {}): Promise<{ unsent: AuditEvent[] }> {
    this.closed = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline =
      opts.deadlineMs === undefined
        ? null
        : new Promise<'deadline'>((resolve) => {
            timer = setTimeout(() => resolve('deadline'), opts.deadlineMs);
          });
    try {
      // Every log() already called is queued first, then everything is flushed.
      const delivered = Promise.allSettled([...this.accepting]).then(() => this.flush());
      const outcome = await (deadline ? Promise.race([delivered.then(() => 'flushed' as const), deadline]) : delivered);
      if (outcome === 'deadline') {
        this.abandoned.abort();
        await this.sending?.catch(() => undefined);
      }
    } finally {
      clearTimeout(timer);
      if (this.timer) clearTimeout(this.timer);
    }
    return { unsent: this.queue.map((q) => q.event) };
  }

  stats(): ClientStats {
    return { ...this.counts, queued: this.queue.length };
  }

  private kick(): void {
    if (this.abandoned.signal.aborted) return;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.sending ??= this.drain().finally(() => {
      this.sending = undefined;
      if (this.queue.length > 0) this.kick();
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0 && !this.abandoned.signal.aborted) {
      const batch = this.queue.slice(0, this.opts.batchSize);
      if (!(await this.send(batch))) return; // abandoned: the batch stays queued (and spooled)
      await this.opts.spool?.remove(batch.map((q) => q.event.event_id as string));
      this.queue.splice(0, batch.length);
      for (const q of batch) q.settle();
      for (const wake of this.waitingForRoom.splice(0, batch.length)) wake();
    }
  }

  /**
   * Sends one batch until it is committed; items the service refuses for good go to onError.
   * False when close() gave up at its deadline first.
   */
  private async send(batch: Queued[]): Promise<boolean> {
    let items = batch;
    for (let attempt = 0; items.length > 0; ) {
      if (this.abandoned.signal.aborted) return false;
      let res: Response;
      try {
        this.counts.requests++;
        res = await this.opts.fetch(`${this.opts.baseUrl}/logs/batch`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': this.opts.apiKey },
          body: JSON.stringify({ logs: items.map((q) => q.event) }),
          signal: this.abandoned.signal,
        });
      } catch {
        await this.backoff(attempt++, null);
        continue;
      }
      if (res.ok) {
        await res.body?.cancel();
        this.counts.sent += items.length;
        return true;
      }
      if (res.status === 413 && items.length > 1) {
        // More events than the service takes in one batch (its MAX_BATCH_SIZE): send halves.
        await res.body?.cancel();
        const half = Math.ceil(items.length / 2);
        return (await this.send(items.slice(0, half))) && (await this.send(items.slice(half)));
      }
      if (RETRYABLE.has(res.status)) {
        await res.body?.cancel();
        await this.backoff(attempt++, res.headers.get('retry-after'));
        continue;
      }
      const problem = (await res.json().catch(() => ({ status: res.status, code: 'unknown', title: res.statusText, detail: '', type: '' }))) as Problem;
      // The problem names the refused items (/body/logs/<i>/…): report those, send the rest again.
      const named = new Set((problem.errors ?? []).map((e) => /^\/body\/logs\/(\d+)/.exec(e.field)?.[1]).filter((i): i is string => i !== undefined).map(Number));
      const refused = named.size > 0 ? items.filter((_, i) => named.has(i)) : items;
      for (const q of refused) {
        this.counts.failed++;
        this.opts.onError?.(q.event, problem);
      }
      items = named.size > 0 ? items.filter((_, i) => !named.has(i)) : [];
    }
    return true;
  }

  /** Waits before a retry, or until close() gives up, whichever is first. */
  private async backoff(attempt: number, retryAfter: string | null): Promise<void> {
    if (this.abandoned.signal.aborted) return;
    this.counts.retries++;
    const signal = this.abandoned.signal;
    await Promise.race([
      this.opts.sleep(retryDelay(attempt, retryAfter, { baseMs: this.opts.retryBaseMs, maxMs: this.opts.retryMaxMs, random: this.opts.random, now: Date.now() })),
      new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })),
    ]);
  }
}

export function createClient(options: ClientOptions): AuditLedgerClient {
  return new AuditLedgerClient(options);
}
