// Delivers log streams: for each active stream that is due, takes its lease (one process per
// stream, across processes on one PostgreSQL), plans the next batch from its cursor, proves it
// against the newest checkpoint (each entry's inclusion proof, the consistency proof from the
// previous batch's checkpoint), sends it, and moves the cursor only once the destination has it.
// The batch being sent is kept in the stream's row before it is sent, so after a crash the same
// seqs go again under the same batch id (at least once, and a receiver can deduplicate). A failure
// waits with exponential backoff and jitter; past the stream's retry window the stream is marked
// failed, a `log_stream.failed` event is emitted and the metric counts it. Streams are sent
// concurrently, each bounded by STREAM_TIMEOUT_MS, so one slow destination never holds another.
import { createHash, randomUUID } from 'node:crypto';
import path from 'node:path';
import { retryDelayMs, STREAM_BATCH_FORMAT, type StreamBatchHeader, type StreamEntryMessage, type StreamMessage } from '@audit-ledger/core';
import { buildEvidence } from '../exports/formats.js';
import { BackgroundTask } from '../kernel/background.js';
import type { EventSink } from '../kernel/events.js';
import { iso } from '../kernel/time.js';
import { consistencyView } from '../ledger/proofs.js';
import type { Metrics } from '../ops/metrics.js';
import type { LogEntryRow } from '../store/chain.js';
import type { KeyStore } from '../store/keys.js';
import type { EntryFilter, LedgerStore } from '../store/ledger.js';
import type { SecretBox } from '../store/secret-box.js';
import type { StreamProgress, StreamRow, StreamStore } from '../store/streams.js';
import type { WitnessStore } from '../store/witnesses.js';
import type { Resolver } from '../egress/address-policy.js';
import { type Destination, type DestinationConfig, openDestination } from './destinations.js';
import { isFailure, render, type StreamFormat } from './formats.js';
import type { AgentKeyStore } from '../store/agent-keys.js';

/** At most this many entries per batch, */
export const MAX_BATCH_ENTRIES = 500;
/** about this many bytes of entries (Datadog takes 5 MB a request), */
export const MAX_BATCH_BYTES = 2 * 1024 * 1024;
/** and a batch's range spans at most this many seqs (a filtered stream reads no more to find its entries). */
export const MAX_BATCH_SPAN = 5000;
/** First wait after a failure; doubled each time up to MAX_BACKOFF_MS, each stretched or shrunk by up to JITTER. */
export const FIRST_BACKOFF_MS = 1000;
export const MAX_BACKOFF_MS = 300_000;
export const JITTER = 0.2;
/** How long a stream's lease lasts: a pass plans, proves and sends one batch (the send bounded by STREAM_TIMEOUT_MS); after a crash another process takes the stream over once it ends. */
export const leaseMs = (timeoutMs: number) => 2 * timeoutMs + 5000;
const POLL_MS = 500;
/**
 * Ingestion comes first: while it saturates the service (services.ts: the writer committing more
 * than half the time since the last look, or the request thread busy over 90% of it while appends
 * come in), streams send one batch (of one stream, in turn) every SATURATED_EVERY passes and catch
 * up once the load eases (bench/streams.ts measures both).
 */
const SATURATED_EVERY = 4;

export interface StreamFilter {
  event_types?: string[] | undefined;
  sources?: string[] | undefined;
  agent_ids?: string[] | undefined;
}

export const isFiltered = (f: StreamFilter) => Boolean(f.event_types?.length || f.sources?.length || f.agent_ids?.length);

/** The batch id: the same seqs of the same stream always get the same id, so a receiver deduplicates a batch sent again. */
export function batchId(streamId: string, from: number, to: number): string {
  const h = createHash('sha256').update(`${streamId}:${from}:${to}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** The wait before the next attempt after `attempts` failures in a row (the core's retry policy), at least the destination's Retry-After. */
export function backoffMs(attempts: number, random: () => number, retryAfter?: number): number {
  return retryDelayMs({ firstMs: FIRST_BACKOFF_MS, maxMs: MAX_BACKOFF_MS, jitter: JITTER }, Math.max(0, attempts - 1), random, retryAfter) ?? MAX_BACKOFF_MS;
}

export interface StreamDeliveryDeps {
  streamStore: StreamStore;
  ledger: LedgerStore;
  signingKeys: KeyStore;
  witnessStore: WitnessStore;
  agentKeys: Pick<AgentKeyStore, 'byIds'>;
  secretBox: Pick<SecretBox, 'open'>;
  clock: () => number;
  metrics: Metrics;
  events: EventSink;
  logError: (obj: object, msg: string) => void;
  config: { streamTimeoutMs: number; streamAllowPrivate: boolean; streamDirectory: string; ledgerOrigin: string; checkpointIntervalMs: number };
  /** Signs a checkpoint over every committed entry of the company (Appender.checkpoint). */
  coverHead: (companyId: string) => Promise<void>;
  /** True while ingestion saturates the service (since the last call). */
  saturated?: () => boolean;
  resolve: Resolver;
  random?: () => number;
}

export class StreamDelivery {
  private readonly task: BackgroundTask;
  private started = false;
  /** This process's name on the leases it takes. */
  readonly owner = randomUUID();
  private readonly destinations = new Map<string, { version: string; destination: Destination }>();
  private saturatedPasses = 0;
  private turn = 0;

  constructor(private readonly deps: StreamDeliveryDeps) {
    this.task = new BackgroundTask(
      () => this.drain(),
      (err) => deps.logError({ err }, 'log stream delivery pass failed'),
    );
  }

  start(): void {
    this.started = true;
    this.task.start(POLL_MS);
    this.task.kick();
  }

  kick(): void {
    if (this.started) this.task.kick();
  }

  async close(): Promise<void> {
    await this.task.close();
    for (const d of this.destinations.values()) await d.destination.close();
    this.destinations.clear();
  }

  private saturated(): boolean {
    return this.deps.saturated?.() ?? false;
  }

  private async drain(): Promise<void> {
    if (this.saturated()) {
      // One batch of one stream every few passes, the streams in turn; the rest waits for the load to ease.
      if (++this.saturatedPasses % SATURATED_EVERY !== 0) return;
      const due = await this.deps.streamStore.due(iso(this.deps.clock()), 100);
      const ready = due.length ? await this.ready(due) : [];
      const pick = ready[this.turn++ % Math.max(1, ready.length)];
      if (pick) await this.deliverNext(pick.company_id, pick.stream_id);
      return;
    }
    while (!this.task.closed) {
      const ready = await this.ready(await this.deps.streamStore.due(iso(this.deps.clock()), 100));
      if (ready.length === 0) return;
      const sent = await Promise.all(ready.map((s) => this.deliverNext(s.company_id, s.stream_id)));
      // A backlog is sent round after round, unless ingestion has come to need the thread.
      if (!sent.some(Boolean) || this.saturated()) return;
    }
  }

  /** The due streams with something signed past their cursor (only they take their lease: no write for an idle stream). */
  private async ready<S extends { company_id: string; cursor_seq: number; pending_to_seq: number | null }>(due: S[]): Promise<S[]> {
    const sizes = new Map<string, number>();
    for (const companyId of new Set(due.map((s) => s.company_id))) sizes.set(companyId, await this.coveredSize(companyId));
    return due.filter((s) => s.pending_to_seq !== null || (sizes.get(s.company_id) ?? 0) > s.cursor_seq);
  }

  /**
   * How many entries the company's latest checkpoint covers. Entries a process committed and then
   * died before its timed checkpoint (kill -9) stay uncovered until the next append; a stream
   * waiting on them asks for a checkpoint once the interval has clearly passed.
   */
  private async coveredSize(companyId: string): Promise<number> {
    const { ledger, clock, config } = this.deps;
    const latest = await ledger.latestCheckpoint(companyId);
    const size = latest?.tree_size ?? 0;
    if (latest && clock() - Date.parse(latest.timestamp) < 2 * config.checkpointIntervalMs + 1000) return size;
    const head = await ledger.getChainHead(companyId);
    if (!head || head.lastSeq + 1 <= size) return size;
    await this.deps.coverHead(companyId);
    return (await ledger.latestCheckpoint(companyId))?.tree_size ?? 0;
  }

  /** Sends the stream's next batch if it has one; true when one was delivered. */
  async deliverNext(companyId: string, streamId: string): Promise<boolean> {
    const { streamStore, clock, config } = this.deps;
    const start = clock();
    const row = await streamStore.takeLease(companyId, streamId, this.owner, iso(start), iso(start + leaseMs(config.streamTimeoutMs)));
    if (!row) return false;
    let planned: Awaited<ReturnType<StreamDelivery['plan']>> = null;
    try {
      planned = await this.plan(row);
      if (!planned) {
        // Nothing to send yet (a filtered stream whose entries are still to come): the lease goes back.
        await streamStore.progress(companyId, streamId, this.owner, {}, true);
        return false;
      }
      const { header, rows } = planned;
      if (row.pending_to_seq === null) {
        // Kept before sending: after a crash the same seqs go again, under the same batch id.
        await streamStore.progress(companyId, streamId, this.owner, { pending_to_seq: header.to_seq, pending_checkpoint_size: header.checkpoint.tree_size }, false);
      }
      const format = row.format as StreamFormat;
      const messages: StreamMessage[] = [header, ...planned.entries];
      await this.destination(row).send(
        {
          streamId,
          batchId: header.batch_id,
          header,
          format,
          lines: messages.map((m) => render(format, m)),
          eventTypes: [null, ...rows.map((r) => r.event_type)],
          failures: [false, ...rows.map((r) => isFailure(r.event_type))],
        },
        AbortSignal.timeout(config.streamTimeoutMs),
      );
      const now = iso(clock());
      const ok = await streamStore.delivered(
        { company_id: companyId, stream_id: streamId, batch_id: header.batch_id, from_seq: header.from_seq, to_seq: header.to_seq, entry_count: header.entry_count, checkpoint_size: header.checkpoint.tree_size, attempts: row.attempts + 1, delivered_at: now },
        this.owner,
        {
          cursor_seq: header.to_seq + 1,
          pending_to_seq: null,
          pending_checkpoint_size: null,
          last_checkpoint_size: header.checkpoint.tree_size,
          last_checkpoint_root: header.checkpoint.root_hash,
          attempts: 0,
          failing_since: null,
          last_error: null,
          next_attempt_at: now,
          delivered_batches: row.delivered_batches + 1,
          delivered_entries: row.delivered_entries + header.entry_count,
          last_delivered_at: now,
        },
      );
      this.deps.metrics.streamBatches.inc({ result: 'delivered' });
      this.deps.metrics.streamEntries.inc(header.entry_count);
      return ok;
    } catch (err) {
      await this.failed(row, err as Error);
      return false;
    }
  }

  /** Records a failed attempt: the next one after a backoff, or the stream failed once its retry window has passed. */
  private async failed(row: StreamRow, err: Error): Promise<void> {
    const { streamStore, clock } = this.deps;
    const now = clock();
    const attempts = row.attempts + 1;
    const since = row.failing_since ?? iso(now);
    const message = (err.message || String(err)).slice(0, 500);
    const gaveUp = now - Date.parse(since) >= row.retry_window_seconds * 1000;
    const set: StreamProgress = {
      attempts,
      failing_since: since,
      last_error: message,
      next_attempt_at: iso(now + backoffMs(attempts, this.deps.random ?? Math.random, (err as Error & { retryAfterMs?: number }).retryAfterMs)),
      ...(gaveUp ? { status: 'failed' as const, status_reason: `no batch delivered for ${row.retry_window_seconds} s (its retry window): ${message}` } : {}),
    };
    const still = await streamStore.progress(row.company_id, row.stream_id, this.owner, set, true);
    this.deps.metrics.streamBatches.inc({ result: gaveUp ? 'failed' : 'retry' });
    if (gaveUp && still) {
      await this.deps.events.emit(row.company_id, 'log_stream.failed', {
        stream_id: row.stream_id,
        name: row.name,
        destination_type: row.destination_type,
        cursor_seq: row.cursor_seq,
        failing_since: since,
        attempts,
        last_error: message,
      });
    }
  }

  private destination(row: StreamRow): Destination {
    // Kept while the destination and its secret stay the same (an HTTP agent keeps its connections).
    const version = `${row.destination}\u0000${row.secret_encrypted ?? ''}`;
    const cached = this.destinations.get(row.stream_id);
    if (cached && cached.version === version) return cached.destination;
    void cached?.destination.close();
    const { config, clock, resolve } = this.deps;
    const destination = openDestination(JSON.parse(row.destination) as DestinationConfig, row.secret_encrypted ? this.deps.secretBox.open(row.secret_encrypted) : null, {
      allowPrivate: config.streamAllowPrivate,
      resolve,
      directoryRoot: path.join(config.streamDirectory, row.company_id),
      clock,
    });
    this.destinations.set(row.stream_id, { version, destination });
    return destination;
  }

  /** The next batch from the stream's cursor, proven against a checkpoint, or null when nothing is ready to send. */
  private async plan(row: StreamRow) {
    const { ledger } = this.deps;
    const companyId = row.company_id;
    const f = JSON.parse(row.filter) as StreamFilter;
    const filtered = isFiltered(f);
    const filter: EntryFilter = {
      order: 'asc',
      ...(f.event_types?.length ? { event_types: f.event_types } : {}),
      ...(f.sources?.length ? { sources: f.sources } : {}),
      ...(f.agent_ids?.length ? { agent_ids: f.agent_ids } : {}),
      limit: MAX_BATCH_ENTRIES,
      afterSeq: row.cursor_seq - 1,
    } as EntryFilter;
    const from = row.cursor_seq;
    let to: number;
    let checkpoint;
    let rows: LogEntryRow[];
    if (row.pending_to_seq !== null && row.pending_checkpoint_size !== null) {
      // The batch a crash or a failure left unsent: the same seqs, the same checkpoint when it is still kept.
      to = row.pending_to_seq;
      checkpoint = (await ledger.getCheckpoint(companyId, row.pending_checkpoint_size)) ?? (await ledger.latestCheckpoint(companyId));
      if (!checkpoint || checkpoint.tree_size <= to) return null;
      rows = await ledger.listEntries(companyId, { ...filter, seqBelow: to + 1 });
    } else {
      checkpoint = await ledger.latestCheckpoint(companyId);
      if (!checkpoint || checkpoint.tree_size <= from) return null;
      const bound = Math.min(from + MAX_BATCH_SPAN, checkpoint.tree_size);
      const found = await ledger.listEntries(companyId, { ...filter, seqBelow: bound });
      rows = [];
      let bytes = 0;
      for (const r of found) {
        bytes += (r.data?.length ?? 0) + (r.extra?.length ?? 0) + 1024;
        if (rows.length > 0 && bytes > MAX_BATCH_BYTES) break;
        rows.push(r);
      }
      const full = rows.length < found.length || found.length === MAX_BATCH_ENTRIES;
      to = full ? (rows[rows.length - 1] as LogEntryRow).seq : bound - 1;
      // A filtered stream with nothing new up to the checkpoint waits, unless it read a whole span for nothing.
      if (rows.length === 0 && bound - from < MAX_BATCH_SPAN) return null;
    }
    const bundle = await buildEvidence(this.deps, companyId, rows, checkpoint, { selection: { from_seq: from, to_seq: to }, generatedAt: iso(this.deps.clock()), keyName: this.deps.config.ledgerOrigin });
    let previous: StreamBatchHeader['previous_checkpoint'] = null;
    let proof: string[] | null = null;
    if (row.last_checkpoint_size !== null && row.last_checkpoint_root !== null && row.last_checkpoint_size <= checkpoint.tree_size) {
      previous = { tree_size: row.last_checkpoint_size, root_hash: row.last_checkpoint_root };
      proof = (await consistencyView(ledger, companyId, row.last_checkpoint_size, checkpoint.tree_size)).proof;
    }
    const id = batchId(row.stream_id, from, to);
    const header: StreamBatchHeader = {
      format: STREAM_BATCH_FORMAT,
      kind: 'batch',
      stream_id: row.stream_id,
      batch_id: id,
      company_id: companyId,
      from_seq: from,
      to_seq: to,
      entry_count: bundle.entries.length,
      filtered,
      checkpoint: bundle.checkpoint as unknown as StreamBatchHeader['checkpoint'],
      public_keys: bundle.public_keys as unknown as StreamBatchHeader['public_keys'],
      key_transitions: bundle.key_transitions,
      erasure_records: bundle.erasure_records as unknown as StreamBatchHeader['erasure_records'],
      previous_checkpoint: previous,
      consistency_proof: proof,
    };
    const entries = bundle.entries.map((e): StreamEntryMessage => ({ format: STREAM_BATCH_FORMAT, kind: 'entry', stream_id: row.stream_id, batch_id: id, entry: e.entry as unknown as Record<string, unknown>, inclusion_proof: e.inclusion_proof }));
    return { header, entries, rows };
  }
}
