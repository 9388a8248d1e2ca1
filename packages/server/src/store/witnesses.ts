// Storage for independent witnesses: each witness's last cosigned size per company, its
// refusals, and the cosignatures kept with the checkpoints they sign; and the RFC 3161
// timestamps of checkpoints (the other anchor outside the operator).
import type { Selectable } from 'kysely';
import type { DbHandle } from './handle.js';
import type { CheckpointCosignaturesTable, CheckpointTimestampsTable, WitnessStateTable } from './schema.js';

export type WitnessStateRow = Selectable<WitnessStateTable>;
export type CosignatureRow = Selectable<CheckpointCosignaturesTable>;
export type TimestampRow = Selectable<CheckpointTimestampsTable>;

export class WitnessStore {
  constructor(private readonly store: DbHandle) {}

  private get db() {
    return this.store.db;
  }

  states(companyId: string): Promise<WitnessStateRow[]> {
    return this.db.selectFrom('witness_state').selectAll().where('company_id', '=', companyId).orderBy('witness').execute();
  }

  async state(companyId: string, witness: string): Promise<WitnessStateRow | undefined> {
    return this.db.selectFrom('witness_state').selectAll().where('company_id', '=', companyId).where('witness', '=', witness).executeTakeFirst();
  }

  private async upsert(companyId: string, witness: string, set: Partial<WitnessStateRow>, at: string): Promise<void> {
    await this.db
      .insertInto('witness_state')
      .values({ company_id: companyId, witness, tree_size: 0, updated_at: at, refusals: 0, last_error: null, last_error_at: null, ...set })
      .onConflict((oc) => oc.columns(['company_id', 'witness']).doUpdateSet({ ...set, updated_at: at }))
      .execute();
  }

  /** The witness cosigned the checkpoint: keep the cosignature and its new size. */
  async cosigned(row: CosignatureRow, at: string): Promise<void> {
    await this.db.insertInto('checkpoint_cosignatures').values(row).onConflict((oc) => oc.columns(['company_id', 'tree_size', 'witness']).doNothing()).execute();
    await this.upsert(row.company_id, row.witness, { tree_size: row.tree_size, last_error: null, last_error_at: null }, at);
  }

  /** The witness says its last cosigned size is `size` (a 409 answer). */
  async witnessSize(companyId: string, witness: string, size: number, at: string): Promise<void> {
    await this.upsert(companyId, witness, { tree_size: size }, at);
  }

  async failed(companyId: string, witness: string, error: string, refused: boolean, at: string): Promise<void> {
    const current = await this.state(companyId, witness);
    await this.upsert(companyId, witness, { last_error: error, last_error_at: at, refusals: (current?.refusals ?? 0) + (refused ? 1 : 0), tree_size: current?.tree_size ?? 0 }, at);
  }

  cosignatures(companyId: string, treeSize: number): Promise<CosignatureRow[]> {
    return this.db.selectFrom('checkpoint_cosignatures').selectAll().where('company_id', '=', companyId).where('tree_size', '=', treeSize).orderBy('witness').execute();
  }

  async addTimestamp(row: TimestampRow): Promise<void> {
    await this.db.insertInto('checkpoint_timestamps').values(row).onConflict((oc) => oc.columns(['company_id', 'tree_size', 'tsa']).doNothing()).execute();
  }

  /** The newest timestamp from this TSA, or null. */
  async latestTimestamp(companyId: string, tsa: string): Promise<TimestampRow | undefined> {
    return this.db.selectFrom('checkpoint_timestamps').selectAll().where('company_id', '=', companyId).where('tsa', '=', tsa).orderBy('tree_size', 'desc').limit(1).executeTakeFirst();
  }

  /** The newest timestamp of a checkpoint at or below `treeSize` (what a bundle of that size carries). */
  async timestampAtOrBelow(companyId: string, treeSize: number): Promise<TimestampRow | undefined> {
    return this.db.selectFrom('checkpoint_timestamps').selectAll().where('company_id', '=', companyId).where('tree_size', '<=', treeSize).orderBy('tree_size', 'desc').orderBy('tsa').limit(1).executeTakeFirst();
  }

  /** A page of timestamps, newest first. */
  timestamps(companyId: string, limit: number): Promise<TimestampRow[]> {
    return this.db.selectFrom('checkpoint_timestamps').selectAll().where('company_id', '=', companyId).orderBy('tree_size', 'desc').orderBy('tsa').limit(limit).execute();
  }
}
