// The one store interface. Both backends are this class over a different Kysely
// dialect (see sqlite.ts and postgres.ts); the same behavioural suite runs on both.
import { type Kysely, type Selectable, sql } from 'kysely';
import type { ChainHead, ChainWriter, CheckpointRow, LogEntryRow, WithChain } from './chain.js';
import { KeyStore } from './keys.js';
import { currentMigration, LATEST_MIGRATION, migrateToLatest } from './migrations.js';
import type { ApiKeysTable, CompaniesTable, Database, UserRole, UsersTable } from './schema.js';

export type StoreKind = 'sqlite' | 'postgres';
export type Company = Selectable<CompaniesTable>;
export type User = Selectable<UsersTable>;
export type ApiKey = Selectable<ApiKeysTable>;
export type { SigningKeyRow } from './keys.js';

export interface EntryFilter {
  trace_id?: string;
  session_id?: string;
  event_type?: string;
  source?: string;
  /** created_at >= from */
  from?: string;
  /** created_at < to */
  to?: string;
  /** Continue after this seq (in the direction of order). */
  afterSeq?: number;
  /** Only entries with seq below this (a replay session's pinned tree size). */
  seqBelow?: number;
  /** Only entries whose data has this string value at this top-level field. */
  dataField?: { name: string; value: string };
  order: 'asc' | 'desc';
  limit: number;
}

export interface AccessTokenGrant {
  company_id: string;
  user_id: string;
  role: UserRole;
  email: string;
  expires_at: string;
  revoked_at: string | null;
}

/** A key as created: every column but the ones the store sets (status active, not revoked). */
export type NewApiKey = Omit<ApiKey, 'status' | 'revoked_at'>;

/** Thrown by insertApiKey when the company already has an active key (spec 5.6). */
export class ActiveKeyExistsError extends Error {
  constructor() {
    super('the company already has an active API key');
    this.name = 'ActiveKeyExistsError';
  }
}

export class EmailTakenError extends Error {
  constructor(email: string) {
    super(`a user with email ${email} already exists`);
    this.name = 'EmailTakenError';
  }
}

export interface MigrationState {
  current: string | null;
  latest: string;
}

/** How long an active API key may be served from the in-process cache. */
export const KEY_CACHE_MS = 2000;

export class Store {
  private readonly keyCache = new Map<string, { key: ApiKey; until: number }>();
  /** The service's signing keys and their transitions (service-wide). */
  readonly keys: KeyStore;

  constructor(
    readonly kind: StoreKind,
    readonly db: Kysely<Database>,
    /** Recognizes a unique-constraint violation and returns the violated index's name. */
    readonly uniqueViolation: (err: unknown) => string | undefined,
    /** The locked append transaction for one company's chain (dialect-specific). */
    readonly withChain: WithChain,
    /** When the backend has one: appends committed off the request thread (see ChainWriter). */
    readonly chainWriter?: ChainWriter,
  ) {
    this.keys = new KeyStore(db, kind);
  }

  async migrate(): Promise<string[]> {
    return migrateToLatest(this.db as Kysely<unknown>);
  }

  async migrationState(): Promise<MigrationState> {
    return { current: await currentMigration(this.db as Kysely<unknown>), latest: LATEST_MIGRATION };
  }

  async close(): Promise<void> {
    await this.chainWriter?.close();
    await this.db.destroy();
  }

  /** One round trip to the database; rejects when it does not answer. */
  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }

  // ---- companies and users ----

  async countUsers(): Promise<number> {
    const row = await this.db.selectFrom('users').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async getCompany(companyId: string): Promise<Company | undefined> {
    return this.db.selectFrom('companies').selectAll().where('company_id', '=', companyId).executeTakeFirst();
  }

  async findCompanyByName(name: string): Promise<Company | undefined> {
    return this.db.selectFrom('companies').selectAll().where('name', '=', name).executeTakeFirst();
  }

  /**
   * Creates the user, and the company when none has that name, in one transaction.
   * Throws EmailTakenError when the email is in use.
   */
  async createUser(input: {
    companyName: string;
    newCompanyId: string;
    userId: string;
    email: string;
    passwordHash: string;
    role: UserRole;
    now: string;
  }): Promise<{ company: Company; user: User }> {
    try {
      return await this.db.transaction().execute(async (trx) => {
        let company = await trx.selectFrom('companies').selectAll().where('name', '=', input.companyName).executeTakeFirst();
        if (!company) {
          company = { company_id: input.newCompanyId, name: input.companyName, created_at: input.now };
          await trx.insertInto('companies').values(company).execute();
        }
        const user: User = {
          company_id: company.company_id,
          user_id: input.userId,
          email: input.email.toLowerCase(),
          password_hash: input.passwordHash,
          role: input.role,
          created_at: input.now,
        };
        await trx.insertInto('users').values(user).execute();
        return { company, user };
      });
    } catch (err) {
      if (this.uniqueViolation(err) === 'users_email_uq') throw new EmailTakenError(input.email);
      throw err;
    }
  }

  async findUserByEmail(email: string): Promise<User | undefined> {
    return this.db.selectFrom('users').selectAll().where('email', '=', email.toLowerCase()).executeTakeFirst();
  }

  async getUser(companyId: string, userId: string): Promise<User | undefined> {
    return this.db
      .selectFrom('users')
      .selectAll()
      .where('company_id', '=', companyId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
  }

  // ---- access tokens ----

  async insertAccessToken(row: { company_id: string; token_hash: string; user_id: string; created_at: string; expires_at: string }): Promise<void> {
    await this.db.insertInto('access_tokens').values({ ...row, revoked_at: null }).execute();
  }

  async findAccessToken(tokenHash: string): Promise<AccessTokenGrant | undefined> {
    return this.db
      .selectFrom('access_tokens as t')
      .innerJoin('users as u', (j) => j.onRef('u.company_id', '=', 't.company_id').onRef('u.user_id', '=', 't.user_id'))
      .select(['t.company_id', 't.user_id', 'u.role', 'u.email', 't.expires_at', 't.revoked_at'])
      .where('t.token_hash', '=', tokenHash)
      .executeTakeFirst();
  }

  async revokeAccessToken(companyId: string, tokenHash: string, now: string): Promise<void> {
    await this.db
      .updateTable('access_tokens')
      .set({ revoked_at: now })
      .where('company_id', '=', companyId)
      .where('token_hash', '=', tokenHash)
      .where('revoked_at', 'is', null)
      .execute();
  }

  /** Removes tokens that expired before `before`; returns how many. */
  async deleteExpiredAccessTokens(before: string): Promise<number> {
    const res = await this.db.deleteFrom('access_tokens').where('expires_at', '<', before).executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  // ---- API keys ----

  /** Inserts an active key; the partial unique index makes a second active key fail. */
  async insertApiKey(key: NewApiKey): Promise<ApiKey> {
    const row: ApiKey = { ...key, status: 'active', revoked_at: null };
    try {
      await this.db.insertInto('api_keys').values(row).execute();
    } catch (err) {
      if (this.uniqueViolation(err) === 'api_keys_one_active_uq') throw new ActiveKeyExistsError();
      throw err;
    }
    return row;
  }

  async listApiKeys(companyId: string): Promise<ApiKey[]> {
    return this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('company_id', '=', companyId)
      .orderBy('created_at', 'desc')
      .orderBy('key_id')
      .execute();
  }

  async getApiKey(companyId: string, keyId: string): Promise<ApiKey | undefined> {
    return this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('company_id', '=', companyId)
      .where('key_id', '=', keyId)
      .executeTakeFirst();
  }

  /**
   * Looks a presented key up by its hash. Active keys are cached for KEY_CACHE_MS, since
   * every API-key request needs this; revoking through this store clears the entry at
   * once, and other processes sharing the database see a revocation within KEY_CACHE_MS.
   */
  async findApiKeyByHash(keyHash: string): Promise<ApiKey | undefined> {
    const now = Date.now();
    const hit = this.keyCache.get(keyHash);
    if (hit && hit.until > now) return hit.key;
    const key = await this.db.selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
    if (key?.status === 'active') {
      if (this.keyCache.size >= 10_000) this.keyCache.clear();
      this.keyCache.set(keyHash, { key, until: now + KEY_CACHE_MS });
    } else {
      this.keyCache.delete(keyHash);
    }
    return key;
  }

  /** Revokes the key if it is active; returns the key as stored afterwards, or undefined if the company has no such key. */
  async revokeApiKey(companyId: string, keyId: string, now: string): Promise<ApiKey | undefined> {
    await this.db
      .updateTable('api_keys')
      .set({ status: 'revoked', revoked_at: now })
      .where('company_id', '=', companyId)
      .where('key_id', '=', keyId)
      .where('status', '=', 'active')
      .execute();
    // After the update, so a lookup that raced it cannot leave the key cached.
    for (const [hash, entry] of this.keyCache) if (entry.key.company_id === companyId && entry.key.key_id === keyId) this.keyCache.delete(hash);
    return this.getApiKey(companyId, keyId);
  }

  // ---- ledger reads ----

  async getEntry(companyId: string, logId: string): Promise<LogEntryRow | undefined> {
    return this.db.selectFrom('log_entries').selectAll().where('company_id', '=', companyId).where('log_id', '=', logId).executeTakeFirst();
  }

  async getEntriesBySeq(companyId: string, seqs: number[]): Promise<LogEntryRow[]> {
    if (seqs.length === 0) return [];
    return this.db.selectFrom('log_entries').selectAll().where('company_id', '=', companyId).where('seq', 'in', seqs).execute();
  }

  async getChainHead(companyId: string): Promise<ChainHead | undefined> {
    const row = await this.db.selectFrom('chain_heads').selectAll().where('company_id', '=', companyId).executeTakeFirst();
    return row && row.last_seq >= 0 ? { lastSeq: row.last_seq, lastHash: row.last_hash, lastCreatedAt: row.last_created_at } : undefined;
  }

  /** A page of entries in seq order; every filter is served by a (company_id, column, seq) index. */
  async listEntries(companyId: string, f: EntryFilter): Promise<LogEntryRow[]> {
    let q = this.db.selectFrom('log_entries').selectAll().where('company_id', '=', companyId);
    if (f.trace_id !== undefined) q = q.where('trace_id', '=', f.trace_id);
    if (f.session_id !== undefined) q = q.where('session_id', '=', f.session_id);
    if (f.event_type !== undefined) q = q.where('event_type', '=', f.event_type);
    if (f.source !== undefined) q = q.where('source', '=', f.source);
    if (f.from !== undefined) q = q.where('created_at', '>=', f.from);
    if (f.to !== undefined) q = q.where('created_at', '<', f.to);
    if (f.afterSeq !== undefined) q = q.where('seq', f.order === 'asc' ? '>' : '<', f.afterSeq);
    if (f.seqBelow !== undefined) q = q.where('seq', '<', f.seqBelow);
    if (f.dataField !== undefined) q = q.where(this.jsonText('data', f.dataField.name), '=', f.dataField.value);
    // created_at never decreases along a chain, so (created_at, seq) is seq order; saying
    // so lets a pure time-range query read the created_at index in order instead of sorting.
    const byTime = f.trace_id === undefined && f.session_id === undefined && f.event_type === undefined && f.source === undefined && (f.from !== undefined || f.to !== undefined);
    if (byTime) q = q.orderBy('created_at', f.order);
    return q.orderBy('seq', f.order).limit(f.limit).execute();
  }

  /** A top-level string field of a JSON text column, in this dialect (not indexed: filter by an indexed column too). */
  private jsonText(column: 'data', field: string) {
    if (!/^[a-z_][a-z0-9_]*$/i.test(field)) throw new Error(`bad JSON field name ${field}`);
    return this.kind === 'sqlite' ? sql<string>`json_extract(${sql.ref(column)}, ${`$.${field}`})` : sql<string>`(${sql.ref(column)}::jsonb ->> ${field})`;
  }

  // ---- Merkle tree and checkpoints ----

  /** Stored Merkle hashes of one company by stored-hash index (src/core/merkle.ts). */
  async readTreeHashes(companyId: string, indexes: number[]): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    // Chunked: a proof needs tens of hashes, a caller may ask for more.
    for (let i = 0; i < indexes.length; i += 5000) {
      const rows = await this.db
        .selectFrom('merkle_hashes')
        .select(['idx', 'hash'])
        .where('company_id', '=', companyId)
        .where('idx', 'in', indexes.slice(i, i + 5000))
        .execute();
      for (const r of rows) out.set(r.idx, r.hash);
    }
    return out;
  }

  /** Stored hashes with index in [from, to), in order: what the verifier compares with the tree it rebuilds. */
  async treeHashRange(companyId: string, from: number, to: number): Promise<Array<{ idx: number; hash: string }>> {
    return this.db
      .selectFrom('merkle_hashes')
      .select(['idx', 'hash'])
      .where('company_id', '=', companyId)
      .where('idx', '>=', from)
      .where('idx', '<', to)
      .orderBy('idx')
      .execute();
  }

  async latestCheckpoint(companyId: string): Promise<CheckpointRow | undefined> {
    return this.db.selectFrom('checkpoints').selectAll().where('company_id', '=', companyId).orderBy('tree_size', 'desc').limit(1).executeTakeFirst();
  }

  async getCheckpoint(companyId: string, treeSize: number): Promise<CheckpointRow | undefined> {
    return this.db.selectFrom('checkpoints').selectAll().where('company_id', '=', companyId).where('tree_size', '=', treeSize).executeTakeFirst();
  }

  /** Checkpoints with tree_size in (after, upTo], ascending (a verifier page: at most upTo − after of them). */
  async listCheckpoints(companyId: string, after: number, upTo: number): Promise<CheckpointRow[]> {
    return this.db
      .selectFrom('checkpoints')
      .selectAll()
      .where('company_id', '=', companyId)
      .where('tree_size', '>', after)
      .where('tree_size', '<=', upTo)
      .orderBy('tree_size')
      .execute();
  }
}
