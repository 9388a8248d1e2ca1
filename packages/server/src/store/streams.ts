// Storage for log streams and the batches they delivered. A stream is delivered by one process at
// a time: takeLease is one conditional UPDATE (on both stores, the row's lock makes two takers
// see each other), and every later change names the lease's owner, so a process whose lease ran
// out (a long pause, a crash it came back from) changes nothing.
import type { Selectable } from 'kysely';
import type { DbHandle } from './handle.js';
import type { LogStreamBatchesTable, LogStreamsTable } from './schema.js';

export type StreamRow = Selectable<LogStreamsTable>;
export type StreamBatchRow = Selectable<LogStreamBatchesTable>;

/** What a delivery pass may change (never the configuration). */
export type StreamProgress = Partial<
  Pick<
    StreamRow,
    | 'cursor_seq'
    | 'pending_to_seq'
    | 'pending_checkpoint_size'
    | 'last_checkpoint_size'
    | 'last_checkpoint_root'
    | 'attempts'
    | 'next_attempt_at'
    | 'failing_since'
    | 'last_error'
    | 'status'
    | 'status_reason'
    | 'delivered_batches'
    | 'delivered_entries'
    | 'last_delivered_at'
  >
>;

export class StreamStore {
  constructor(private readonly store: DbHandle) {}

  private get db() {
    return this.store.db;
  }

  async insert(row: StreamRow): Promise<void> {
    await this.db.insertInto('log_streams').values(row).execute();
  }

  get(companyId: string, streamId: string): Promise<StreamRow | undefined> {
    return this.db.selectFrom('log_streams').selectAll().where('company_id', '=', companyId).where('stream_id', '=', streamId).executeTakeFirst();
  }

  list(companyId: string): Promise<StreamRow[]> {
    return this.db.selectFrom('log_streams').selectAll().where('company_id', '=', companyId).orderBy('stream_id').execute();
  }

  /** A configuration change (name, filter, destination, status) by an admin. */
  async update(companyId: string, streamId: string, set: Partial<Omit<StreamRow, 'company_id' | 'stream_id'>>): Promise<boolean> {
    const r = await this.db.updateTable('log_streams').set(set).where('company_id', '=', companyId).where('stream_id', '=', streamId).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async remove(companyId: string, streamId: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const r = await trx.deleteFrom('log_streams').where('company_id', '=', companyId).where('stream_id', '=', streamId).executeTakeFirst();
      await trx.deleteFrom('log_stream_batches').where('company_id', '=', companyId).where('stream_id', '=', streamId).execute();
      return Number(r.numDeletedRows) === 1;
    });
  }

  /** Active streams whose next attempt is due and whose lease is free, every company's. */
  due(now: string, limit: number): Promise<Array<Pick<StreamRow, 'company_id' | 'stream_id' | 'cursor_seq' | 'pending_to_seq'>>> {
    return this.db
      .selectFrom('log_streams')
      .select(['company_id', 'stream_id', 'cursor_seq', 'pending_to_seq'])
      .where('status', '=', 'active')
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
      .orderBy('next_attempt_at')
      .limit(limit)
      .execute();
  }

  /** Takes the stream's lease for `owner` until `until` when it is free; the row as leased, or undefined. */
  async takeLease(companyId: string, streamId: string, owner: string, now: string, until: string): Promise<StreamRow | undefined> {
    const r = await this.db
      .updateTable('log_streams')
      .set({ lease_owner: owner, lease_until: until })
      .where('company_id', '=', companyId)
      .where('stream_id', '=', streamId)
      .where('status', '=', 'active')
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) return undefined;
    const row = await this.get(companyId, streamId);
    return row?.lease_owner === owner ? row : undefined;
  }

  /** Changes what delivery moved, while `owner` still holds the lease; false when it no longer does. */
  async progress(companyId: string, streamId: string, owner: string, set: StreamProgress, release: boolean): Promise<boolean> {
    const r = await this.db
      .updateTable('log_streams')
      .set({ ...set, ...(release ? { lease_owner: null, lease_until: null } : {}) })
      .where('company_id', '=', companyId)
      .where('stream_id', '=', streamId)
      .where('lease_owner', '=', owner)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** A delivered batch and the stream's moved cursor, together; false when `owner` lost the lease. */
  async delivered(batch: StreamBatchRow, owner: string, set: StreamProgress): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const r = await trx
        .updateTable('log_streams')
        .set({ ...set, lease_owner: null, lease_until: null })
        .where('company_id', '=', batch.company_id)
        .where('stream_id', '=', batch.stream_id)
        .where('lease_owner', '=', owner)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) !== 1) return false;
      const seen = await trx.selectFrom('log_stream_batches').select('batch_id').where('company_id', '=', batch.company_id).where('stream_id', '=', batch.stream_id).where('batch_id', '=', batch.batch_id).executeTakeFirst();
      if (!seen) await trx.insertInto('log_stream_batches').values(batch).execute();
      return true;
    });
  }

  /** Delivered batches, newest first; `beforeFrom` is the from_seq of the previous page's last. */
  batches(companyId: string, streamId: string, f: { beforeFrom?: number | undefined; limit: number }): Promise<StreamBatchRow[]> {
    let q = this.db.selectFrom('log_stream_batches').selectAll().where('company_id', '=', companyId).where('stream_id', '=', streamId);
    if (f.beforeFrom !== undefined) q = q.where('from_seq', '<', f.beforeFrom);
    return q.orderBy('from_seq', 'desc').limit(f.limit).execute();
  }

  /** Every stream of every company (the metrics' lag gauges). */
  all(): Promise<StreamRow[]> {
    return this.db.selectFrom('log_streams').selectAll().orderBy('company_id').orderBy('stream_id').execute();
  }
}
