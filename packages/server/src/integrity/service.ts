// What the integrity endpoints answer, without HTTP: the status with the witnesses' quorum and the
// retention job's progress, full verifications (recorded in the administrators' trail), their
// reports, and the signed checkpoints and consistency proofs with the rule that only what was
// signed is proven. routes/integrity.ts parses, calls one method and shapes the answer.
import { CoreError } from '@audit-ledger/core';
import type { FastifyBaseLogger } from 'fastify';
import { type AdminTrail, type TrailActor } from '../ingestion/recorder.js';
import type { Config } from '../kernel/config.js';
import { NotFoundError, TreeSizeOutOfRangeError } from '../kernel/domain-error.js';
import { type CheckpointView, checkpointView, type ConsistencyView, consistencyView, cosignedCheckpointView } from '../ledger/proofs.js';
import type { CheckpointRow } from '../store/chain.js';
import type { IntegrityStore, JobRow } from '../store/integrity.js';

/** A verification job as kept (its view is the route's). */
export type { JobRow };
import type { LedgerStore } from '../store/ledger.js';
import type { WitnessStore } from '../store/witnesses.js';
import type { IntegrityVerifier, JobOptions } from './verifier.js';

export interface IntegrityDeps {
  verifier: IntegrityVerifier;
  /** The retention figures the status shows (compliance/service.ts answers them). */
  compliance: { retention(companyId: string): Promise<{ content_days: number | null; last_run_at: string | null; erased_total: number; pending_erasures: number }> };
  trail: Pick<AdminTrail, 'record'>;
  ledger: LedgerStore;
  integrityStore: IntegrityStore;
  witnessStore: WitnessStore;
  config: Pick<Config, 'witnesses' | 'witnessQuorum'>;
  log: Pick<FastifyBaseLogger, 'warn'>;
}

export class Integrity {
  constructor(private readonly deps: IntegrityDeps) {}

  /** The chain's status, which witnesses cosigned the latest checkpoint (and whether they make the quorum), and retention's progress. */
  async status(companyId: string) {
    const { verifier, witnessStore, compliance, config } = this.deps;
    const status = await verifier.status(companyId);
    const states = new Map((await witnessStore.states(companyId)).map((w) => [w.witness, w]));
    const cosigned = status.checkpoint ? (await witnessStore.cosignatures(companyId, status.checkpoint.tree_size)).map((c) => c.witness) : [];
    const items = config.witnesses.map((w) => {
      const st = states.get(w.name);
      return { name: w.name, tree_size: Number(st?.tree_size ?? 0), refusals: st?.refusals ?? 0, last_error: st?.last_error ?? null, last_error_at: st?.last_error_at ?? null };
    });
    const r = await compliance.retention(companyId);
    return {
      ...status,
      witnesses: { quorum: config.witnessQuorum, latest_checkpoint_cosigned_by: cosigned, quorum_met: cosigned.length >= config.witnessQuorum, items },
      retention: { content_days: r.content_days, last_run_at: r.last_run_at, erased_total: r.erased_total, pending_erasures: r.pending_erasures },
    };
  }

  /**
   * Queues a full verification (one open per company) and records the request in the trail. A
   * chain whose stored tree is damaged takes no appends; the verification is how the damage is
   * found, so it then runs unrecorded rather than not at all (and says so in the log).
   */
  async requestVerification(companyId: string, options: JobOptions, actor: TrailActor): Promise<JobRow> {
    return this.deps.verifier.requestFull(companyId, options, async (queued) => {
      try {
        await this.deps.trail.record(companyId, 'integrity.verification_requested', actor, { job_id: queued.job_id, entry_signatures: options.entry_signatures });
      } catch (err) {
        if (!(err instanceof CoreError && err.code === 'missing_tree_hash')) throw err;
        this.deps.log.warn({ err, job_id: queued.job_id }, 'verification requested on a damaged chain: runs without its ledger record');
      }
    });
  }

  async job(companyId: string, jobId: string): Promise<JobRow> {
    const job = await this.deps.integrityStore.getJob(companyId, jobId);
    if (!job) throw new NotFoundError(`No verification job ${jobId}`);
    return job;
  }

  /** The latest completed verification's report (its stored JSON text). */
  async latestReport(companyId: string): Promise<string> {
    const job = await this.deps.integrityStore.latestCompletedJob(companyId);
    if (!job?.report) throw new NotFoundError('No full verification has completed yet: POST /api/v1/integrity/verify starts one');
    return job.report;
  }

  /** A page of the kept checkpoints, ascending by tree size, and where the next page starts (null on the last). */
  async checkpoints(companyId: string, after: number, limit: number): Promise<{ rows: CheckpointRow[]; nextAfter: number | null }> {
    const rows = await this.deps.ledger.checkpointsPage(companyId, after, limit);
    const last = rows.at(-1);
    return { rows, nextAfter: rows.length === limit && last ? last.tree_size : null };
  }

  /** The latest checkpoint, or the one signed at treeSize, with the witnesses' cosignatures. */
  async checkpoint(companyId: string, treeSize?: number) {
    const { ledger, witnessStore } = this.deps;
    const row = treeSize === undefined ? await ledger.latestCheckpoint(companyId) : await ledger.getCheckpoint(companyId, treeSize);
    if (!row) throw new NotFoundError(treeSize === undefined ? 'No checkpoint yet: the ledger has no entries' : `No checkpoint was signed at tree size ${treeSize}`);
    return cosignedCheckpointView(row, await witnessStore.cosignatures(companyId, row.tree_size));
  }

  /** The RFC 3161 timestamps of the company's checkpoints, newest first. */
  async timestamps(companyId: string, limit: number) {
    return (await this.deps.witnessStore.timestamps(companyId, limit)).map((t) => ({ tree_size: Number(t.tree_size), tsa: t.tsa, gen_time: t.gen_time, token: t.token }));
  }

  /** The tree size of the latest checkpoint (0 before the first): proofs go no further. */
  async signedSize(companyId: string): Promise<number> {
    return (await this.deps.ledger.latestCheckpoint(companyId))?.tree_size ?? 0;
  }

  /** A consistency proof between two signed tree sizes (RFC 9162 §2.1.4), with the checkpoints signed at them. */
  async consistency(companyId: string, first: number, second: number): Promise<ConsistencyView & { first_checkpoint: CheckpointView | null; second_checkpoint: CheckpointView | null }> {
    const { ledger } = this.deps;
    const signed = await this.signedSize(companyId);
    if (first > second) throw new TreeSizeOutOfRangeError('/querystring/first', 'must be at most second', `first (${first}) must not exceed second (${second})`);
    if (second > signed) throw new TreeSizeOutOfRangeError('/querystring/second', `must be at most ${signed}`, `second (${second}) is beyond the latest checkpoint (tree size ${signed})`);
    const [view, c1, c2] = await Promise.all([consistencyView(ledger, companyId, first, second), ledger.getCheckpoint(companyId, first), ledger.getCheckpoint(companyId, second)]);
    return { ...view, first_checkpoint: c1 ? checkpointView(c1) : null, second_checkpoint: c2 ? checkpointView(c2) : null };
  }
}
