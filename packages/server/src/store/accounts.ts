// Companies, users, access tokens and API keys: the account side of the store, over the one
// database handle. Every query but the credential lookups is scoped by company_id.
import { type Selectable, sql } from 'kysely';
import { DomainError } from '../kernel/domain-error.js';
import type { DbHandle } from './handle.js';
import type { ApiKeysTable, CompaniesTable, UserRole, UsersTable } from './schema.js';

export type Company = Selectable<CompaniesTable>;
export type User = Selectable<UsersTable>;
export type ApiKey = Selectable<ApiKeysTable>;

export interface AccessTokenGrant {
  company_id: string;
  user_id: string;
  role: UserRole;
  email: string;
  expires_at: string;
  revoked_at: string | null;
  disabled_at: string | null;
  password_change_required: number;
  session: number;
  idle_expires_at: string | null;
}

/** A key as created: every column but the ones the store sets (status active, not revoked). */
export type NewApiKey = Omit<ApiKey, 'status' | 'revoked_at'>;

/** Thrown by insertApiKey when the company already has an active key (spec 5.6). */
export class ActiveKeyExistsError extends DomainError<'active_key_exists'> {
  constructor(companyId: string) {
    super('active_key_exists', 'the company already has an active API key', { companyId });
  }
}

/** Thrown by createUser when a company name matches several companies once letter case is ignored. */
export class CompanyNameAmbiguousError extends DomainError<'company_name_ambiguous'> {
  constructor(name: string, matches: string[]) {
    super('company_name_ambiguous', `the company name "${name}" matches ${matches.map((m) => `"${m}"`).join(', ')} once letter case is ignored; give one of them exactly`, { name, matches });
  }
}

export class EmailTakenError extends DomainError<'email_taken'> {
  constructor(email: string) {
    super('email_taken', `a user with email ${email} already exists`, { email });
  }
}

/** How long an active API key may be served from the in-process cache. */
export const KEY_CACHE_MS = 2000;

export interface AccountStoreDeps {
  handle: DbHandle;
  /** Milliseconds since the epoch (the key cache's clock). */
  clock: () => number;
}

export class AccountStore {
  private readonly keyCache = new Map<string, { key: ApiKey; until: number }>();
  private readonly h: DbHandle;
  private readonly clock: () => number;

  constructor(deps: AccountStoreDeps) {
    this.h = deps.handle;
    this.clock = deps.clock;
  }

  async countUsers(): Promise<number> {
    const row = await this.h.db.selectFrom('users').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Every company's id (a service-wide action is recorded in each company's chain). */
  async companyIds(): Promise<string[]> {
    return (await this.h.db.selectFrom('companies').select('company_id').orderBy('company_id').execute()).map((r) => r.company_id);
  }

  async getCompany(companyId: string): Promise<Company | undefined> {
    return this.h.db.selectFrom('companies').selectAll().where('company_id', '=', companyId).executeTakeFirst();
  }

  /** Whether the company's tlog-tiles API is public (docs/transparency.md). */
  async tlogPublic(companyId: string): Promise<boolean> {
    const row = await this.h.db.selectFrom('companies').select('tlog_public').where('company_id', '=', companyId).executeTakeFirst();
    return row?.tlog_public === 1;
  }

  async setTlogPublic(companyId: string, isPublic: boolean): Promise<void> {
    await this.h.db.updateTable('companies').set({ tlog_public: isPublic ? 1 : 0 }).where('company_id', '=', companyId).execute();
  }

  async findCompanyByName(name: string): Promise<Company | undefined> {
    return this.h.db.selectFrom('companies').selectAll().where('name', '=', name).executeTakeFirst();
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
    /** A one-time password: the user must set their own at first login. */
    passwordChangeRequired?: boolean;
    /** Only into this existing company (an admin inviting a user), never a new one. */
    existingCompanyOnly?: boolean;
    /** Created outside the service: the service appends its user.created trail entry later. */
    trailPending?: 'cli' | 'bootstrap';
  }): Promise<{ company: Company; user: User }> {
    try {
      return await this.h.db.transaction().execute(async (trx) => {
        let company = await trx.selectFrom('companies').selectAll().where('name', '=', input.companyName).executeTakeFirst();
        if (!company) {
          // Names that differ only by letter case are one company (SQLite's lower() folds ASCII
          // letters only; PostgreSQL's, every letter): `--company Acme` joins "acme", never makes a second.
          const alike = await trx.selectFrom('companies').selectAll().where(sql`lower(name)`, '=', sql`lower(${input.companyName})`).execute();
          if (alike.length > 1) throw new CompanyNameAmbiguousError(input.companyName, alike.map((c) => c.name));
          company = alike[0];
        }
        if (!company) {
          if (input.existingCompanyOnly) throw new Error(`no company named ${input.companyName}`);
          company = { company_id: input.newCompanyId, name: input.companyName, created_at: input.now, tlog_public: 0 };
          await trx.insertInto('companies').values(company).execute();
        }
        const user: User = {
          company_id: company.company_id,
          user_id: input.userId,
          email: input.email.toLowerCase(),
          password_hash: input.passwordHash,
          role: input.role,
          created_at: input.now,
          disabled_at: null,
          password_change_required: input.passwordChangeRequired ? 1 : 0,
          trail_pending: input.trailPending ?? null,
        };
        await trx.insertInto('users').values(user).execute();
        return { company, user };
      });
    } catch (err) {
      if (this.h.uniqueViolation(err) === 'users_email_uq') throw new EmailTakenError(input.email);
      throw err;
    }
  }

  /** Users created outside the service whose user.created trail entry is not appended yet (oldest first). */
  async usersPendingTrail(limit: number): Promise<User[]> {
    return this.h.db.selectFrom('users').selectAll().where('trail_pending', 'is not', null).orderBy('created_at').limit(limit).execute();
  }

  /** Their trail entry is committed. */
  async clearTrailPending(companyId: string, userId: string): Promise<void> {
    await this.h.db.updateTable('users').set({ trail_pending: null }).where('company_id', '=', companyId).where('user_id', '=', userId).execute();
  }

  async findUserByEmail(email: string): Promise<User | undefined> {
    return this.h.db.selectFrom('users').selectAll().where('email', '=', email.toLowerCase()).executeTakeFirst();
  }

  async getUser(companyId: string, userId: string): Promise<User | undefined> {
    return this.h.db
      .selectFrom('users')
      .selectAll()
      .where('company_id', '=', companyId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
  }

  /** The company's users, oldest first. */
  async listUsers(companyId: string): Promise<User[]> {
    return this.h.db.selectFrom('users').selectAll().where('company_id', '=', companyId).orderBy('created_at').orderBy('user_id').execute();
  }

  /** Changes a user's role or disabled state; returns the user as it was before, or undefined when not found. */
  async updateUser(companyId: string, userId: string, patch: { role?: UserRole; disabled_at?: string | null }): Promise<User | undefined> {
    return this.h.db.transaction().execute(async (trx) => {
      const before = await trx.selectFrom('users').selectAll().where('company_id', '=', companyId).where('user_id', '=', userId).executeTakeFirst();
      if (!before) return undefined;
      await trx.updateTable('users').set(patch).where('company_id', '=', companyId).where('user_id', '=', userId).execute();
      return before;
    });
  }

  /** Sets a user's password hash, and whether it must be changed at next use. */
  async setPassword(companyId: string, userId: string, passwordHash: string, changeRequired: boolean): Promise<void> {
    await this.h.db
      .updateTable('users')
      .set({ password_hash: passwordHash, password_change_required: changeRequired ? 1 : 0 })
      .where('company_id', '=', companyId)
      .where('user_id', '=', userId)
      .execute();
  }

  /** Active admins of the company (so the last one cannot be demoted or disabled). */
  /** The user a provider identity (issuer and subject) is bound to, in the company. */
  async ssoIdentity(companyId: string, issuer: string, subject: string): Promise<{ user_id: string } | undefined> {
    return this.h.db.selectFrom('sso_identities').select('user_id').where('company_id', '=', companyId).where('issuer', '=', issuer).where('subject', '=', subject).executeTakeFirst();
  }

  /** The subject a user is bound to at a provider, if any. */
  async ssoSubjectOf(companyId: string, userId: string, issuer: string): Promise<string | undefined> {
    return (await this.h.db.selectFrom('sso_identities').select('subject').where('company_id', '=', companyId).where('user_id', '=', userId).where('issuer', '=', issuer).executeTakeFirst())?.subject;
  }

  /** Binds a provider identity to a user (the first link); false when either is already bound (another process won). */
  async linkSsoIdentity(row: { company_id: string; issuer: string; subject: string; user_id: string; linked_at: string }): Promise<boolean> {
    try {
      const r = await this.h.db.insertInto('sso_identities').values(row).onConflict((oc) => oc.columns(['company_id', 'issuer', 'subject']).doNothing()).executeTakeFirst();
      return Number(r.numInsertedOrUpdatedRows ?? 0n) === 1;
    } catch (err) {
      if (this.h.uniqueViolation(err)) return false;
      throw err;
    }
  }

  /**
   * Takes a single sign-on flow (by the SHA-256 of its state): true the first time, false ever
   * after. Flows used before `forgetBefore` are forgotten (they are past their life anyway).
   */
  async useSsoFlow(stateHash: string, at: string, forgetBefore: string): Promise<boolean> {
    await this.h.db.deleteFrom('sso_flow_uses').where('used_at', '<', forgetBefore).execute();
    try {
      const r = await this.h.db.insertInto('sso_flow_uses').values({ state_hash: stateHash, used_at: at }).onConflict((oc) => oc.column('state_hash').doNothing()).executeTakeFirst();
      return Number(r.numInsertedOrUpdatedRows ?? 0n) === 1;
    } catch (err) {
      if (this.h.uniqueViolation(err)) return false;
      throw err;
    }
  }

  async countActiveAdmins(companyId: string): Promise<number> {
    const row = await this.h.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('company_id', '=', companyId)
      .where('role', '=', 'admin')
      .where('disabled_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Revokes every live token of a user (disabled, or password reset); returns how many. */
  async revokeUserTokens(companyId: string, userId: string, now: string, except?: string): Promise<number> {
    let q = this.h.db.updateTable('access_tokens').set({ revoked_at: now }).where('company_id', '=', companyId).where('user_id', '=', userId).where('revoked_at', 'is', null);
    if (except !== undefined) q = q.where('token_hash', '!=', except);
    const r = await q.executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  // ---- access tokens ----

  async insertAccessToken(row: { company_id: string; token_hash: string; user_id: string; created_at: string; expires_at: string; idle_expires_at?: string }): Promise<void> {
    await this.h.db
      .insertInto('access_tokens')
      .values({ ...row, revoked_at: null, session: row.idle_expires_at === undefined ? 0 : 1, idle_expires_at: row.idle_expires_at ?? null })
      .execute();
  }

  /** Moves a session's idle deadline forward. */
  async touchSession(companyId: string, tokenHash: string, idleExpiresAt: string): Promise<void> {
    await this.h.db.updateTable('access_tokens').set({ idle_expires_at: idleExpiresAt }).where('company_id', '=', companyId).where('token_hash', '=', tokenHash).execute();
  }

  async findAccessToken(tokenHash: string): Promise<AccessTokenGrant | undefined> {
    return this.h.db
      .selectFrom('access_tokens as t')
      .innerJoin('users as u', (j) => j.onRef('u.company_id', '=', 't.company_id').onRef('u.user_id', '=', 't.user_id'))
      .select(['t.company_id', 't.user_id', 'u.role', 'u.email', 't.expires_at', 't.revoked_at', 'u.disabled_at', 'u.password_change_required', 't.session', 't.idle_expires_at'])
      .where('t.token_hash', '=', tokenHash)
      .executeTakeFirst();
  }

  async revokeAccessToken(companyId: string, tokenHash: string, now: string): Promise<void> {
    await this.h.db
      .updateTable('access_tokens')
      .set({ revoked_at: now })
      .where('company_id', '=', companyId)
      .where('token_hash', '=', tokenHash)
      .where('revoked_at', 'is', null)
      .execute();
  }

  /** Removes tokens that expired before `before`; returns how many. */
  async deleteExpiredAccessTokens(before: string): Promise<number> {
    const res = await this.h.db.deleteFrom('access_tokens').where('expires_at', '<', before).executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  // ---- API keys ----

  /** Inserts an active key; the partial unique index makes a second active key fail. */
  async insertApiKey(key: NewApiKey): Promise<ApiKey> {
    const row: ApiKey = { ...key, status: 'active', revoked_at: null };
    try {
      await this.h.db.insertInto('api_keys').values(row).execute();
    } catch (err) {
      if (this.h.uniqueViolation(err) === 'api_keys_one_active_uq') throw new ActiveKeyExistsError(key.company_id);
      throw err;
    }
    return row;
  }

  async listApiKeys(companyId: string): Promise<ApiKey[]> {
    return this.h.db
      .selectFrom('api_keys')
      .selectAll()
      .where('company_id', '=', companyId)
      .orderBy('created_at', 'desc')
      .orderBy('key_id')
      .execute();
  }

  async getApiKey(companyId: string, keyId: string): Promise<ApiKey | undefined> {
    return this.h.db
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
    const now = this.clock();
    const hit = this.keyCache.get(keyHash);
    if (hit && hit.until > now) return hit.key;
    const key = await this.h.db.selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
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
    await this.h.db
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
}
