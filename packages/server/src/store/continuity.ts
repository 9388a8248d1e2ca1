// What backups read and restores write: the service-wide rows a ledger needs (companies, signing
// keys and their transitions), and a company's chain rebuilt from an export, written exactly as
// exported (nothing re-signed, nothing re-hashed). Restores write only into a ledger that does
// not have the company's entries yet (continuity/restore.ts checks that first).
import { type Kysely, type Selectable, sql } from 'kysely';
import type { ChainHead, CheckpointRow, LogEntryRow } from './chain.js';
import type { DbHandle } from './handle.js';
import type { ApiKeysTable, CompaniesTable, Database, KeyTransitionsTable, SigningKeysTable, SsoIdentitiesTable, UsersTable } from './schema.js';
import type { CheckpointCosignaturesTable, ContinuityHoldsTable } from './schema-compliance.js';

export type CompanyRow = Selectable<CompaniesTable>;
export type KeyTransitionRow = Selectable<KeyTransitionsTable>;
export type CosignatureRow = Selectable<CheckpointCosignaturesTable>;

/**
 * The rows a rebuilt ledger needs besides its entries (backup file service.json): the companies,
 * the signing keys and their transitions, and who may use it (users and API keys: hashes only,
 * as stored). Configuration (webhooks, streams, retention policies, legal holds, teams) is not
 * here: on PostgreSQL it comes back with pg_dump or a base backup (docs/operations.md).
 */
export interface ServiceRows {
  companies: CompanyRow[];
  users?: Array<Selectable<UsersTable>>;
  api_keys?: Array<Selectable<ApiKeysTable>>;
  /** As stored: a rotated key's private half stays sealed with the secrets key, which is never in a backup. */
  signing_keys: Array<Selectable<SigningKeysTable>>;
  key_transitions: KeyTransitionRow[];
  /** The provider identities SSO users are bound to (absent in backups made before migration 0021). */
  sso_identities?: Array<Selectable<SsoIdentitiesTable>>;
}

/** The chain is not where the rebuild expected it (another writer, or a second restore): nothing written. */
export class RestoreConflictError extends Error {
  override readonly name = 'RestoreConflictError';
}

// Rows per insert statement: 34 columns × 200 stays below SQLite's 32,766 parameters.
const CHUNK = 200;

export class ContinuityStore {
  private readonly db: Kysely<Database>;

  constructor(handle: DbHandle) {
    this.db = handle.db;
  }

  async serviceRows(): Promise<ServiceRows> {
    const [companies, users, api_keys, signing_keys, key_transitions, sso_identities] = await Promise.all([
      this.db.selectFrom('companies').selectAll().orderBy('company_id').execute(),
      this.db.selectFrom('users').selectAll().orderBy('company_id').orderBy('user_id').execute(),
      this.db.selectFrom('api_keys').selectAll().orderBy('company_id').orderBy('key_id').execute(),
      this.db.selectFrom('signing_keys').selectAll().orderBy('key_id').execute(),
      this.db.selectFrom('key_transitions').selectAll().orderBy('created_at').execute(),
      // A database at a schema before 0021 (a backup's file, read before migrating) has none.
      this.db.selectFrom('sso_identities').selectAll().orderBy('company_id').orderBy('issuer').orderBy('subject').execute().catch(() => undefined),
    ]);
    return { companies, users, api_keys, signing_keys, key_transitions, ...(sso_identities ? { sso_identities } : {}) };
  }

  /** Adds the rows this store does not have yet (by key); rows it has are left as they are. */
  async addServiceRows(rows: ServiceRows): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      for (const c of rows.companies) await trx.insertInto('companies').values(c).onConflict((oc) => oc.column('company_id').doNothing()).execute();
      for (const u of rows.users ?? []) await trx.insertInto('users').values(u).onConflict((oc) => oc.columns(['company_id', 'user_id']).doNothing()).execute();
      for (const k of rows.api_keys ?? []) await trx.insertInto('api_keys').values(k).onConflict((oc) => oc.columns(['company_id', 'key_id']).doNothing()).execute();
      for (const k of rows.signing_keys) await trx.insertInto('signing_keys').values(k).onConflict((oc) => oc.column('key_id').doNothing()).execute();
      for (const i of rows.sso_identities ?? []) await trx.insertInto('sso_identities').values(i).onConflict((oc) => oc.columns(['company_id', 'issuer', 'subject']).doNothing()).execute();
      const known = new Set((await trx.selectFrom('key_transitions').select('new_key_id').execute()).map((t) => t.new_key_id));
      for (const t of rows.key_transitions) if (!known.has(t.new_key_id)) await trx.insertInto('key_transitions').values(t).execute();
    });
  }

  /**
   * A key rotation a restored chain records (a signing_key.rotated entry supplied from an export,
   * made after the backup): the new key's public half becomes the active one and the old key is
   * retired at the transition's time, so the service never signs again with a key the world saw
   * retired. The new key's private half is not in any export: docs/operations.md, "Restore".
   */
  async recordTransition(t: KeyTransitionRow, algorithm: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const known = await trx.selectFrom('key_transitions').select('new_key_id').where('new_key_id', '=', t.new_key_id).executeTakeFirst();
      if (known) return;
      await trx.insertInto('key_transitions').values(t).execute();
      await trx
        .insertInto('signing_keys')
        .values({ key_id: t.new_key_id, algorithm, public_key: t.new_public_key, active_from: t.created_at, active_to: null, private_key_encrypted: null, custody: null })
        .onConflict((oc) => oc.column('key_id').doNothing())
        .execute();
      await trx.updateTable('signing_keys').set({ active_to: t.created_at }).where('key_id', '=', t.old_key_id).where('active_to', 'is', null).execute();
    });
  }

  /** Every company's entry count (its chain head's seq + 1), companies without entries included (0). */
  async sizes(): Promise<Map<string, number>> {
    const companies = await this.db.selectFrom('companies').select('company_id').execute();
    const heads = await this.db.selectFrom('chain_heads').select(['company_id', 'last_seq']).execute();
    const sizes = new Map(companies.map((c) => [c.company_id, 0]));
    for (const h of heads) sizes.set(h.company_id, Number(h.last_seq) + 1);
    return sizes;
  }

  /**
   * Appends entries exactly as given (they must follow the stored head: seq and prev_hash), the
   * tree rows they complete and the new head, in one transaction. Unlike an append, it does not
   * require their signing keys to be active: a rebuilt history was signed by the keys of its time.
   */
  async appendRestored(companyId: string, rows: LogEntryRow[], tree: { indexes: number[]; hashes: string[] }, head: ChainHead): Promise<void> {
    const first = rows[0];
    if (!first) return;
    await this.db.transaction().execute(async (trx) => {
      const stored = await trx.selectFrom('chain_heads').select(['last_seq', 'last_hash']).where('company_id', '=', companyId).executeTakeFirst();
      const lastSeq = stored ? Number(stored.last_seq) : -1;
      if (first.seq !== lastSeq + 1 || (stored && first.prev_hash !== stored.last_hash)) {
        throw new RestoreConflictError(`company ${companyId}: the stored chain ends at seq ${lastSeq}, and the entries to restore start at seq ${first.seq}`);
      }
      for (let i = 0; i < rows.length; i += CHUNK) await trx.insertInto('log_entries').values(rows.slice(i, i + CHUNK)).execute();
      for (let i = 0; i < tree.indexes.length; i += 1000) {
        const values = tree.indexes.slice(i, i + 1000).map((idx, j) => ({ company_id: companyId, idx, hash: tree.hashes[i + j] as string }));
        await trx.insertInto('merkle_hashes').values(values).execute();
      }
      const h = { last_seq: head.lastSeq, last_hash: head.lastHash, last_created_at: head.lastCreatedAt };
      if (stored) await trx.updateTable('chain_heads').set(h).where('company_id', '=', companyId).execute();
      else await trx.insertInto('chain_heads').values({ company_id: companyId, ...h }).execute();
    });
  }

  /** Keeps signed checkpoints (and witnesses' cosignatures of them) that came with a backup or from outside; known ones are left. */
  async addCheckpoints(checkpoints: CheckpointRow[], cosignatures: CosignatureRow[] = []): Promise<void> {
    if (checkpoints.length === 0 && cosignatures.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      for (const c of checkpoints) await trx.insertInto('checkpoints').values(c).onConflict((oc) => oc.columns(['company_id', 'tree_size']).doNothing()).execute();
      for (const c of cosignatures) await trx.insertInto('checkpoint_cosignatures').values(c).onConflict((oc) => oc.columns(['company_id', 'tree_size', 'witness']).doNothing()).execute();
    });
  }

  /** A company's checkpoints up to a size, oldest first, and the witnesses' cosignatures of them. */
  async checkpointsUpTo(companyId: string, size: number): Promise<{ checkpoints: CheckpointRow[]; cosignatures: CosignatureRow[] }> {
    const checkpoints = await this.db.selectFrom('checkpoints').selectAll().where('company_id', '=', companyId).where('tree_size', '<=', size).orderBy('tree_size').execute();
    const cosignatures = await this.db.selectFrom('checkpoint_cosignatures').selectAll().where('company_id', '=', companyId).where('tree_size', '<=', size).orderBy('tree_size').execute();
    return { checkpoints, cosignatures };
  }
}

export type ContinuityHoldRow = Selectable<ContinuityHoldsTable>;

/** Continuity holds (continuity/guard.ts): what the start-up check found, and what the operator decided. */
export class ContinuityHolds {
  private readonly db: Kysely<Database>;

  constructor(handle: DbHandle) {
    this.db = handle.db;
  }

  /** Records a hold; one already recorded for that company and seen size is left as it is (and returned). */
  async hold(row: Omit<ContinuityHoldRow, 'decision' | 'reason' | 'decided_at' | 'recorded_at'>): Promise<ContinuityHoldRow> {
    await this.db.insertInto('continuity_holds').values({ ...row, decision: null, reason: null, decided_at: null, recorded_at: null }).onConflict((oc) => oc.columns(['company_id', 'seen_size']).doNothing()).execute();
    return (await this.db.selectFrom('continuity_holds').selectAll().where('company_id', '=', row.company_id).where('seen_size', '=', row.seen_size).executeTakeFirst()) as ContinuityHoldRow;
  }

  async all(): Promise<ContinuityHoldRow[]> {
    return this.db.selectFrom('continuity_holds').selectAll().orderBy('company_id').orderBy('seen_size').execute();
  }

  /** Holds no decision has lifted yet. */
  async open(): Promise<ContinuityHoldRow[]> {
    return this.db.selectFrom('continuity_holds').selectAll().where('decision', 'is', null).orderBy('company_id').execute();
  }

  /** Decides every open hold of the company; returns how many. */
  async decide(companyId: string, decision: 'supplied' | 'loss_accepted', reason: string | null, at: string): Promise<number> {
    const res = await this.db.updateTable('continuity_holds').set({ decision, reason, decided_at: at }).where('company_id', '=', companyId).where('decision', 'is', null).executeTakeFirst();
    return Number(res.numUpdatedRows);
  }

  /** What the service still acts on, in one read: holds not decided, and accepted losses its chain does not record yet. */
  async unsettled(): Promise<ContinuityHoldRow[]> {
    return this.db
      .selectFrom('continuity_holds')
      .selectAll()
      .where((eb) => eb.or([eb('decision', 'is', null), eb.and([eb('decision', '=', 'loss_accepted'), eb('recorded_at', 'is', null)])]))
      .orderBy('company_id')
      .execute();
  }

  /**
   * A PostgreSQL restore's holds, taken before it writes anything (one transaction): one per
   * company, and the partial rows an interrupted restore left of the companies it held (`clear`)
   * removed, so the restore writes them anew.
   */
  async holdForRestore(holds: Array<Omit<ContinuityHoldRow, 'decision' | 'reason' | 'decided_at' | 'recorded_at'>>, clear: string[]): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      for (const companyId of clear) {
        for (const table of ['log_entries', 'merkle_hashes', 'chain_heads', 'checkpoint_cosignatures', 'checkpoints'] as const) await trx.deleteFrom(table).where('company_id', '=', companyId).execute();
        // The search index of what an interrupted restore wrote goes too: the indexer rebuilds it from what this one writes.
        for (const table of ['log_search', 'search_positions']) await sql`DELETE FROM ${sql.table(table)} WHERE company_id = ${companyId}`.execute(trx);
        await trx.deleteFrom('continuity_holds').where('company_id', '=', companyId).where('decision', 'is', null).where('source', '=', holds[0]?.source ?? '').execute();
      }
      for (const h of holds) await trx.insertInto('continuity_holds').values({ ...h, decision: null, reason: null, decided_at: null, recorded_at: null }).onConflict((oc) => oc.columns(['company_id', 'seen_size']).doUpdateSet({ decision: null, source: h.source, stored_size: 0, detected_at: h.detected_at })).execute();
    });
  }

  /** Lifts every hold of a completed restore (decision `restored`). */
  async liftRestore(at: string, source: string): Promise<void> {
    await this.db.updateTable('continuity_holds').set({ decision: 'restored', reason: 'the restore completed', decided_at: at }).where('source', '=', source).where('decision', 'is', null).execute();
  }

  async recorded(companyId: string, seenSize: number, at: string): Promise<void> {
    await this.db.updateTable('continuity_holds').set({ recorded_at: at }).where('company_id', '=', companyId).where('seen_size', '=', seenSize).execute();
  }
}
