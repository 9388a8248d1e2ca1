// Storage for verification: the background verifier's progress and lease, the violations
// it and full verifications found, and verification jobs. Leases are conditional
// updates, so on PostgreSQL one process at a time works on a company.
import type { Selectable } from 'kysely';
import type { LogEntryRow } from './chain.js';
import type { IntegrityStateTable, IntegrityViolationsTable, VerificationJobsTable } from './schema.js';
import { DomainError } from '../kernel/domain-error.js';
import type { DbHandle } from './handle.js';
import type { LedgerStore } from './ledger.js';

export type IntegrityState = Selectable<IntegrityStateTable>;
export type ViolationRow = Selectable<IntegrityViolationsTable>;
export type JobRow = Selectable<VerificationJobsTable>;

/** A queued or running job already exists for the company. */
/** A full verification was asked for while one is queued or running. */
export class JobOpenError extends DomainError<'verification_running'> {
  constructor(job: JobRow) {
    super('verification_running', `verification ${job.job_id} is ${job.status}`, { job });
  }
}

export class IntegrityStore {
  constructor(
    private readonly store: DbHandle,
    private readonly ledger: LedgerStore,
  ) {}

  private get db() {
    return this.store.db;
  }

  // ---- reading what to verify ----

  entriesInRange(companyId: string, from: number, to: number): Promise<LogEntryRow[]> {
    return this.db.selectFrom('log_entries').selectAll().where('company_id', '=', companyId).where('seq', '>=', from).where('seq', '<', to).orderBy('seq').execute();
  }

  /** The erasure records the erased entries among `rows` name, by log_id (one query; none when nothing is erased). */
  async erasureRecordsFor(companyId: string, rows: LogEntryRow[]): Promise<Map<string, LogEntryRow>> {
    const ids = [...new Set(rows.flatMap((r) => (r.erasure_id ? [r.erasure_id] : [])))];
    if (ids.length === 0) return new Map();
    const records = await this.db.selectFrom('log_entries').selectAll().where('company_id', '=', companyId).where('log_id', 'in', ids).execute();
    return new Map(records.map((r) => [r.log_id, r]));
  }

  /**
   * For the idempotency keys of the marked entries among `rows` (idempotency_conflict_of not null:
   * rare), the earliest entry of the company with each key (on the idempotency index; no query
   * when none is marked).
   */
  async firstOfMarkedKeys(companyId: string, rows: LogEntryRow[]): Promise<Map<string, { log_id: string; seq: number }>> {
    const out = new Map<string, { log_id: string; seq: number }>();
    const keys = new Set<string>();
    for (const r of rows) if (r.idempotency_conflict_of !== null && r.idempotency_key !== null) keys.add(r.idempotency_key);
    for (const key of keys) {
      const first = await this.firstWithKey(companyId, key);
      if (first) out.set(key, first);
    }
    return out;
  }

  /** The earliest entry of the company with this idempotency key. */
  async firstWithKey(companyId: string, key: string): Promise<{ log_id: string; seq: number } | undefined> {
    const row = await this.db.selectFrom('log_entries').select(['log_id', 'seq']).where('company_id', '=', companyId).where('idempotency_key', '=', key).orderBy('seq').limit(1).executeTakeFirst();
    return row ? { log_id: row.log_id, seq: Number(row.seq) } : undefined;
  }

  async treeHashes(companyId: string, from: number, to: number): Promise<Map<number, string>> {
    return new Map((await this.ledger.treeHashRange(companyId, from, to)).map((r) => [r.idx, r.hash]));
  }

  /** Companies whose latest checkpoint is beyond what the background verifier has checked. */
  async companiesBehind(): Promise<string[]> {
    const rows = await this.db
      .selectFrom('checkpoints as c')
      .leftJoin('integrity_state as s', 's.company_id', 'c.company_id')
      .select('c.company_id')
      .groupBy(['c.company_id', 's.verified_size'])
      .having((eb) => eb(eb.fn.max('c.tree_size'), '>', eb.fn.coalesce('s.verified_size', eb.lit(0))))
      .execute();
    return rows.map((r) => r.company_id);
  }

  // ---- progress and lease ----

  async getState(companyId: string): Promise<IntegrityState | undefined> {
    return this.db.selectFrom('integrity_state').selectAll().where('company_id', '=', companyId).executeTakeFirst();
  }

  /** Takes (or renews) the company's verification lease; false when another owner holds it. */
  async acquireLease(companyId: string, owner: string, now: string, until: string): Promise<boolean> {
    await this.db
      .insertInto('integrity_state')
      .values({
        company_id: companyId,
        verified_size: 0,
        verified_hash: '0'.repeat(64),
        verified_edge: '[]',
        checkpoint_size: 0,
        last_verified_at: null,
        lease_owner: null,
        lease_until: null,
      })
      .onConflict((oc) => oc.column('company_id').doNothing())
      .execute();
    const r = await this.db
      .updateTable('integrity_state')
      .set({ lease_owner: owner, lease_until: until })
      .where('company_id', '=', companyId)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now), eb('lease_owner', '=', owner)]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async releaseLease(companyId: string, owner: string): Promise<void> {
    await this.db.updateTable('integrity_state').set({ lease_owner: null, lease_until: null }).where('company_id', '=', companyId).where('lease_owner', '=', owner).execute();
  }

  /**
   * Records progress and the violations found since the last call, in one transaction.
   * `replace` (a full verification) first clears every earlier violation.
   */
  async saveProgress(
    companyId: string,
    progress: Pick<IntegrityState, 'verified_size' | 'verified_hash' | 'verified_edge' | 'checkpoint_size' | 'last_verified_at' | 'lease_until'>,
    violations: ViolationRow[],
    replace = false,
  ): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      if (replace) await trx.deleteFrom('integrity_violations').where('company_id', '=', companyId).execute();
      for (let i = 0; i < violations.length; i += 500) await trx.insertInto('integrity_violations').values(violations.slice(i, i + 500)).execute();
      await trx.updateTable('integrity_state').set(progress).where('company_id', '=', companyId).execute();
    });
  }

  async countViolations(companyId: string): Promise<number> {
    const r = await this.db
      .selectFrom('integrity_violations')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('company_id', '=', companyId)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  // ---- jobs ----

  async insertJob(job: JobRow): Promise<void> {
    try {
      await this.db.insertInto('verification_jobs').values(job).execute();
    } catch (err) {
      if (this.store.uniqueViolation(err) !== 'verification_jobs_one_open_uq') throw err;
      const open = await this.openJob(job.company_id);
      if (open) throw new JobOpenError(open);
      throw err;
    }
  }

  getJob(companyId: string, jobId: string): Promise<JobRow | undefined> {
    return this.db.selectFrom('verification_jobs').selectAll().where('company_id', '=', companyId).where('job_id', '=', jobId).executeTakeFirst();
  }

  openJob(companyId: string): Promise<JobRow | undefined> {
    return this.db.selectFrom('verification_jobs').selectAll().where('company_id', '=', companyId).where('status', 'in', ['queued', 'running']).executeTakeFirst();
  }

  latestCompletedJob(companyId: string): Promise<JobRow | undefined> {
    return this.db
      .selectFrom('verification_jobs')
      .selectAll()
      .where('company_id', '=', companyId)
      .where('status', '=', 'completed')
      .orderBy('finished_at', 'desc')
      .orderBy('job_id', 'desc')
      .limit(1)
      .executeTakeFirst();
  }

  /** Jobs waiting, or running under a lease that ran out (their process died). */
  claimableJobs(now: string): Promise<JobRow[]> {
    return this.db
      .selectFrom('verification_jobs')
      .selectAll()
      .where((eb) => eb.or([eb('status', '=', 'queued'), eb.and([eb('status', '=', 'running'), eb('lease_until', '<', now)])]))
      .orderBy('requested_at')
      .limit(100)
      .execute();
  }

  /** Moves a job to running under this owner, if nobody else holds it; false otherwise. */
  async claimJob(job: JobRow, owner: string, now: string, until: string): Promise<boolean> {
    const r = await this.db
      .updateTable('verification_jobs')
      .set({ status: 'running', lease_owner: owner, lease_until: until, started_at: job.started_at ?? now })
      .where('company_id', '=', job.company_id)
      .where('job_id', '=', job.job_id)
      .where((eb) => eb.or([eb('status', '=', 'queued'), eb.and([eb('status', '=', 'running'), eb('lease_until', '<', now)])]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async renewJob(companyId: string, jobId: string, owner: string, until: string): Promise<void> {
    await this.db.updateTable('verification_jobs').set({ lease_until: until }).where('company_id', '=', companyId).where('job_id', '=', jobId).where('lease_owner', '=', owner).execute();
  }

  /** Puts a job cut short by shutdown back in the queue. */
  async finishJobRequeue(companyId: string, jobId: string): Promise<void> {
    await this.db.updateTable('verification_jobs').set({ status: 'queued', lease_owner: null, lease_until: null }).where('company_id', '=', companyId).where('job_id', '=', jobId).execute();
  }

  async finishJob(companyId: string, jobId: string, status: 'completed' | 'failed', finishedAt: string, report: string): Promise<void> {
    await this.db
      .updateTable('verification_jobs')
      .set({ status, finished_at: finishedAt, report, lease_owner: null, lease_until: null })
      .where('company_id', '=', companyId)
      .where('job_id', '=', jobId)
      .execute();
  }
}
