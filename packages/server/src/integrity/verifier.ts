// Runs the scanner against the store: a background pass over each company's newly
// checkpointed entries every INTEGRITY_VERIFY_INTERVAL_SECONDS, and full verification
// jobs on request. Both work page by page, yield to requests between pages, and hold
// the company's lease (so several processes on one PostgreSQL never verify one company
// twice at the same time). Only entries under a signed checkpoint are verified: every
// verified entry is then anchored to a signature.
import { randomUUID } from 'node:crypto';
import { BackgroundTask } from '../kernel/background.js';
import { GENESIS_PREV_HASH, type KeyPeriod, SCAN_START, type ScanCounts, Scanner, type ScanState, type ScanViolation, SEGMENT_SIZE, SegmentJoiner, type SegmentResult } from '@audit-ledger/core';
import type { Config } from '../kernel/config.js';
import { readScanPage } from './scan-pages.js';
import { ScanPool } from './scan-pool.js';
import type { EventSink } from '../kernel/events.js';
import type { Metrics } from '../ops/metrics.js';
import { iso } from '../kernel/time.js';
import type { CheckpointView, FullVerificationReport } from '../kernel/shapes.js';
import { checkpointView } from '../ledger/proofs.js';
import { uuidv7 } from '../ledger/uuidv7.js';
import type { IntegrityState, IntegrityStore, JobRow, ViolationRow } from '../store/integrity.js';
import type { KeyStore } from '../store/keys.js';
import { serviceKeys } from '../ledger/key-periods.js';
import type { LedgerStore } from '../store/ledger.js';

/** Entries per page: large enough to amortize queries, small enough to keep request latency low. */
const PAGE = SEGMENT_SIZE;
const LEASE_MS = 60_000;
const TICK_MS = 5000;
/** A report lists at most this many violations (and says so); the count is always exact. */
export const MAX_REPORTED_VIOLATIONS = 10_000;

export interface JobOptions {
  entry_signatures: boolean;
}

export interface IntegrityStatus {
  chain_status: 'valid' | 'broken' | 'unverified' | 'verifying';
  head: { seq: number; hash: string } | null;
  checkpoint: CheckpointView | null;
  last_verified_seq: number | null;
  last_verified_at: string | null;
  violation_count: number;
  coverage_percent: number;
}

class Closed extends Error {}

const yieldToRequests = () => new Promise<void>((r) => setImmediate(r));

export interface IntegrityVerifierDeps {
  /** New record ids (random UUIDs unless a test supplies its own). */
  newId?: () => string;
  ledger: LedgerStore;
  integrityStore: IntegrityStore;
  signingKeys: KeyStore;
  /** The checkpoint key name (LEDGER_ORIGIN). */
  ledgerOrigin: string;
  /** The background pass interval; 0 turns the background pass off (jobs still run). */
  intervalSeconds: number;
  clock: () => number;
  logError: (obj: object, msg: string) => void;
  events?: EventSink;
  metrics?: Metrics;
  /**
   * Full verifications read and scan segments in this many worker threads, each with its own
   * connection to the store (VERIFY_WORKERS); absent or 0, on the verifier's own thread.
   */
  scanWorkers?: { count: number; store: Pick<Config, 'databaseUrl' | 'dataDir'> };
  /** True while the service is ingesting: a full verification then keeps one segment in flight (about one core) instead of two per worker. */
  ingesting?: () => boolean;
}

export class IntegrityVerifier {
  /** This verifier's claim on background passes (one per process). */
  private readonly owner: string;
  private readonly newId: () => string;
  private readonly task: BackgroundTask;
  private lastBackgroundRun: number;
  private readonly ledger: LedgerStore;
  private readonly integrityStore: IntegrityStore;
  private readonly signingKeys: KeyStore;
  private readonly opts: IntegrityVerifierDeps;

  constructor(deps: IntegrityVerifierDeps) {
    this.ledger = deps.ledger;
    this.integrityStore = deps.integrityStore;
    this.signingKeys = deps.signingKeys;
    this.opts = deps;
    this.newId = deps.newId ?? randomUUID;
    this.owner = this.newId();
    const opts = deps;
    this.lastBackgroundRun = opts.clock();
    this.task = new BackgroundTask(
      () => this.tick(),
      (err) => {
        if (!(err instanceof Closed)) this.opts.logError({ err }, 'integrity verification pass failed');
      },
    );
  }

  start(): void {
    // Jobs are polled every TICK_MS (a job whose process died is picked up here); a shorter
    // background interval ticks faster.
    this.task.start(this.opts.intervalSeconds > 0 ? Math.min(TICK_MS, this.opts.intervalSeconds * 1000) : TICK_MS);
  }

  /** Stops the timer and waits for the current pass; a job cut short goes back to the queue. */
  close(): Promise<void> {
    return this.task.close();
  }

  /** Runs a pass now (or right after the current one). */
  kick(): void {
    this.task.kick();
  }

  private async tick(): Promise<void> {
    for (const job of await this.integrityStore.claimableJobs(this.now())) await this.runJob(job);
    if (this.opts.intervalSeconds > 0 && this.opts.clock() - this.lastBackgroundRun >= this.opts.intervalSeconds * 1000) {
      this.lastBackgroundRun = this.opts.clock();
      await this.verifyAllNew();
    }
  }

  private now(offsetMs = 0): string {
    return iso(this.opts.clock() + offsetMs);
  }

  /** Every key's raw public key and signing period (ledger/key-periods.ts). */
  private async keys(): Promise<{ publicKeys: Map<string, Uint8Array>; keyPeriods: Map<string, KeyPeriod> }> {
    const k = await serviceKeys(this.signingKeys);
    return { publicKeys: k.publicKeys, keyPeriods: k.periods };
  }

  /**
   * Entries first…last checked as a full verification checks them (hash, content, link, missing
   * entries, erasure records, entry signatures), without rebuilding the tree: a report's period.
   */
  async checkRange(companyId: string, first: number, last: number): Promise<{ counts: ScanCounts; violations: ScanViolation[] }> {
    const before = first > 0 ? (await this.integrityStore.entriesInRange(companyId, first - 1, first))[0] : undefined;
    const lastHash = first === 0 ? GENESIS_PREV_HASH : (before?.hash ?? null);
    const scanner = new Scanner({ size: first, lastHash, edge: null }, { keyName: this.opts.ledgerOrigin, ...(await this.keys()), entrySignatures: true });
    const violations: ScanViolation[] = [];
    await this.scan(companyId, scanner, last + 1, async (found) => {
      violations.push(...found);
    });
    return { counts: scanner.counts, violations };
  }

  /** The background pass: every company's entries checkpointed since its last pass. */
  async verifyAllNew(): Promise<void> {
    for (const companyId of await this.integrityStore.companiesBehind()) await this.verifyNew(companyId);
  }

  /** Verifies one company's entries from where the last pass stopped up to its latest checkpoint. */
  async verifyNew(companyId: string): Promise<void> {
    if (!(await this.integrityStore.acquireLease(companyId, this.owner, this.now(), this.now(LEASE_MS)))) return;
    try {
      const [state, latest] = await Promise.all([this.integrityStore.getState(companyId), this.ledger.latestCheckpoint(companyId)]);
      const target = latest?.tree_size ?? 0;
      const from = state as IntegrityState;
      if (target <= from.verified_size) return;
      const scanner = new Scanner(parseState(from), { keyName: this.opts.ledgerOrigin, ...(await this.keys()), entrySignatures: false });
      let total = 0;
      await this.scan(companyId, scanner, target, async (found, st) => {
        await this.integrityStore.saveProgress(companyId, this.progress(st), found.map((v) => violationRow(this.newId(), companyId, v, this.now(), null)));
        total += found.length;
        await this.reportViolations(companyId, found, { source: 'background' });
      });
      this.opts.metrics?.verificationRuns.inc({ kind: 'background', result: total > 0 ? 'violations' : 'clean' });
    } finally {
      await this.integrityStore.releaseLease(companyId, this.owner);
    }
  }

  private progress(st: ScanState) {
    return {
      verified_size: st.size,
      verified_hash: st.lastHash ?? '',
      // Inside a gap (core's ScanState.gapEnd) the edge is the gap block's start, and says so.
      verified_edge: JSON.stringify(st.gapEnd != null ? { edge: st.edge, gap_end: st.gapEnd } : st.edge),
      checkpoint_size: st.size,
      last_verified_at: this.now(),
      lease_until: this.now(LEASE_MS),
    };
  }

  private async scan(companyId: string, scanner: Scanner, to: number, onPage: (found: ScanViolation[], st: ScanState) => Promise<void>): Promise<void> {
    for (let a = scanner.state().size; a < to; a += PAGE) {
      if (this.task.closed) throw new Closed();
      const { page } = await readScanPage({ ledger: this.ledger, integrityStore: this.integrityStore }, companyId, a, Math.min(to, a + PAGE));
      await onPage(scanner.scanPage(page), scanner.state());
      await yieldToRequests();
    }
  }

  /**
   * A full scan of [0, to) in worker threads: segments are read and scanned ahead, two per
   * worker in flight, and joined here in order. The result is the joiner's (scan-segments.ts).
   */
  private async scanParallel(companyId: string, { count: workers, store }: NonNullable<IntegrityVerifierDeps['scanWorkers']>, entrySignatures: boolean, to: number, onPage: (found: ScanViolation[]) => Promise<void>): Promise<SegmentJoiner> {
    const joiner = new SegmentJoiner();
    const pool = new ScanPool(workers, {
      store,
      companyId,
      keyName: this.opts.ledgerOrigin,
      ...(await this.keys().then((k) => ({ publicKeys: [...k.publicKeys], keyPeriods: [...k.keyPeriods] }))),
      entrySignatures,
    });
    const inFlight: Array<Promise<SegmentResult>> = [];
    let next = 0;
    const readAhead = () => {
      const limit = this.opts.ingesting?.() ? 1 : workers * 2;
      for (; inFlight.length < limit && next < to; next = Math.min(to, next + SEGMENT_SIZE)) {
        const p = pool.segment(next, Math.min(to, next + SEGMENT_SIZE));
        p.catch(() => undefined); // awaited in order below; a failure there ends the job
        inFlight.push(p);
      }
    };
    try {
      readAhead();
      while (inFlight.length > 0) {
        if (this.task.closed) throw new Closed();
        const result = await (inFlight.shift() as Promise<SegmentResult>);
        readAhead();
        await onPage(joiner.join(result));
      }
      return joiner;
    } finally {
      await pool.close();
    }
  }

  // ---- full verification jobs ----

  /** Queues a full verification; throws JobOpenError when one is already queued or running. */
  /** Queues a full verification; `onQueued` runs before it can start (the request is recorded in the ledger there). */
  async requestFull(companyId: string, options: JobOptions, onQueued?: (job: JobRow) => Promise<void>): Promise<JobRow> {
    const job: JobRow = {
      company_id: companyId,
      job_id: uuidv7(this.opts.clock()),
      status: 'queued',
      options: JSON.stringify(options),
      requested_at: this.now(),
      started_at: null,
      finished_at: null,
      lease_owner: null,
      lease_until: null,
      report: null,
    };
    await this.integrityStore.insertJob(job);
    try {
      await onQueued?.(job);
    } finally {
      this.kick();
    }
    return job;
  }

  private async runJob(job: JobRow): Promise<void> {
    const companyId = job.company_id;
    // The company lease first, so a background pass elsewhere finishes before the job starts.
    if (!(await this.integrityStore.acquireLease(companyId, this.owner, this.now(), this.now(LEASE_MS)))) return;
    try {
      if (!(await this.integrityStore.claimJob(job, this.owner, this.now(), this.now(LEASE_MS)))) return;
      const startedMs = this.opts.clock();
      const options = JSON.parse(job.options) as JobOptions;
      const base = { job_id: job.job_id, company_id: companyId, options, requested_at: job.requested_at, started_at: iso(startedMs) };
      try {
        const target = (await this.ledger.latestCheckpoint(companyId))?.tree_size ?? 0;
        const found: ScanViolation[] = [];
        let count = 0;
        const onPage = async (v: ScanViolation[]) => {
          count += v.length;
          for (const x of v) if (found.length < MAX_REPORTED_VIOLATIONS) found.push(x);
          await this.integrityStore.renewJob(companyId, job.job_id, this.owner, this.now(LEASE_MS));
        };
        const workers = this.opts.scanWorkers;
        let scanner: Scanner | SegmentJoiner;
        if (workers && workers.count > 0 && target > SEGMENT_SIZE) scanner = await this.scanParallel(companyId, workers, options.entry_signatures, target, onPage);
        else {
          scanner = new Scanner(SCAN_START, { keyName: this.opts.ledgerOrigin, ...(await this.keys()), entrySignatures: options.entry_signatures });
          await this.scan(companyId, scanner, target, onPage);
        }
        const report = {
          ...base,
          status: 'completed',
          chain_status: count === 0 ? 'valid' : 'broken',
          finished_at: this.now(),
          duration_ms: this.opts.clock() - startedMs,
          tree_size: target,
          range: target > 0 ? { from_seq: 0, to_seq: target - 1 } : null,
          ...countsView(scanner.counts),
          violation_count: count,
          violations_truncated: count > found.length,
          violations: found,
        } satisfies FullVerificationReport;
        // The full result replaces what background passes had found, and they go on from its end.
        await this.integrityStore.saveProgress(companyId, this.progress(scanner.state()), found.map((v) => violationRow(this.newId(), companyId, v, report.finished_at, job.job_id)), true);
        await this.integrityStore.finishJob(companyId, job.job_id, 'completed', report.finished_at, JSON.stringify(report));
        this.opts.metrics?.verificationRuns.inc({ kind: 'full', result: count > 0 ? 'violations' : 'clean' });
        await this.reportViolations(companyId, found, { source: 'full', job_id: job.job_id, violation_count: count });
        await this.opts.events?.emit(companyId, 'integrity.verification_completed', {
          job_id: job.job_id,
          chain_status: report.chain_status,
          tree_size: report.tree_size,
          entries_checked: report.entries_checked,
          violation_count: count,
          duration_ms: report.duration_ms,
        });
      } catch (err) {
        if (err instanceof Closed) {
          await this.integrityStore.finishJobRequeue(companyId, job.job_id);
          throw err;
        }
        this.opts.logError({ err, job_id: job.job_id }, 'full verification failed');
        this.opts.metrics?.verificationRuns.inc({ kind: 'full', result: 'failed' });
        const failed = { ...base, status: 'failed', finished_at: this.now(), error: err instanceof Error ? err.message : String(err) };
        await this.integrityStore.finishJob(companyId, job.job_id, 'failed', failed.finished_at, JSON.stringify(failed));
      }
    } finally {
      await this.integrityStore.releaseLease(companyId, this.owner);
    }
  }

  /**
   * Logs them at error level (operators alert on logs), counts them in metrics, and records one
   * integrity.violation_detected event listing them (the first 20).
   */
  private async reportViolations(companyId: string, found: ScanViolation[], context: Record<string, string | number>): Promise<void> {
    if (found.length === 0) return;
    const kinds = [...new Set(found.map((v) => v.kind))];
    this.opts.logError({ company_id: companyId, ...context, count: found.length, kinds, first: found.slice(0, 5).map((v) => ({ seq: v.seq, kind: v.kind, detail: v.detail })) }, 'integrity violations found: the chain does not verify');
    for (const v of found) this.opts.metrics?.integrityViolations.inc({ kind: v.kind });
    await this.opts.events?.emit(companyId, 'integrity.violation_detected', {
      ...context,
      count: found.length,
      kinds,
      violations: found.slice(0, 20).map((v) => ({ seq: v.seq, log_id: v.log_id, kind: v.kind, detail: v.detail })),
    });
  }

  async status(companyId: string): Promise<IntegrityStatus> {
    const [head, checkpoint, state, open, violations, completed] = await Promise.all([
      this.ledger.getChainHead(companyId),
      this.ledger.latestCheckpoint(companyId),
      this.integrityStore.getState(companyId),
      this.integrityStore.openJob(companyId),
      this.integrityStore.countViolations(companyId),
      this.integrityStore.latestCompletedJob(companyId),
    ]);
    const total = head ? head.lastSeq + 1 : 0;
    const verified = Math.min(state?.verified_size ?? 0, total);
    const chainStatus =
      open?.status === 'running' ? 'verifying' : violations > 0 ? 'broken' : total > 0 && verified === 0 && !completed ? 'unverified' : 'valid';
    return {
      chain_status: chainStatus,
      head: head ? { seq: head.lastSeq, hash: head.lastHash } : null,
      checkpoint: checkpoint ? checkpointView(checkpoint) : null,
      last_verified_seq: verified > 0 ? verified - 1 : null,
      last_verified_at: state?.last_verified_at ?? null,
      violation_count: violations,
      coverage_percent: total === 0 ? 100 : Math.floor((verified / total) * 10_000) / 100,
    };
  }
}

function countsView(c: ScanCounts) {
  return { entries_checked: c.entries, entries_erased: c.erased, tree_hashes_checked: c.treeHashes, checkpoints_checked: c.checkpoints, signatures_checked: c.signatures };
}

function parseState(s: IntegrityState): ScanState {
  const edge = JSON.parse(s.verified_edge) as string[] | null | { edge: string[] | null; gap_end: number };
  const lastHash = s.verified_hash === '' ? null : s.verified_hash;
  if (edge !== null && !Array.isArray(edge)) return { size: s.verified_size, lastHash, edge: edge.edge, gapEnd: edge.gap_end };
  return { size: s.verified_size, lastHash, edge };
}

function violationRow(violationId: string, companyId: string, v: ScanViolation, at: string, jobId: string | null): ViolationRow {
  return { company_id: companyId, violation_id: violationId, seq: v.seq, log_id: v.log_id, kind: v.kind, detail: v.detail, detected_at: at, job_id: jobId };
}
