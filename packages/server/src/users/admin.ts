// User management without HTTP: an admin invites users (with a one-time password, or one they
// set), changes roles, disables and re-enables them, and resets passwords; a user replaces a
// one-time password with their own. Every change is recorded in the administrators' audit trail
// (ingestion/trail.ts): who did what to whom. Passwords and their hashes never enter an entry.
import { randomBytes, randomUUID } from 'node:crypto';
import { hashPassword, verifyPassword } from '../crypto/passwords.js';
import { isPlausibleEmail, MIN_PASSWORD_LENGTH } from '../kernel/config.js';
import { DomainError } from '../kernel/domain-error.js';
import type { AdminTrail } from '../ingestion/recorder.js';
import type { AccountStore, User } from '../store/accounts.js';
import type { UserRole } from '../store/schema.js';
import { iso } from '../kernel/time.js';

/** Who did it: the signed-in admin (or the user themself). */
export interface Actor {
  userId: string;
  email: string;
}

export interface UserView {
  user_id: string;
  email: string;
  role: UserRole;
  created_at: string;
  disabled: boolean;
  disabled_at: string | null;
  password_change_required: boolean;
}

export const userView = (u: User): UserView => ({
  user_id: u.user_id,
  email: u.email,
  role: u.role,
  created_at: u.created_at,
  disabled: u.disabled_at !== null,
  disabled_at: u.disabled_at,
  password_change_required: u.password_change_required === 1,
});

/** No such user in the caller's company (another company's user id is answered the same). Fix the id. */
export class UserNotFoundError extends DomainError<'user_not_found'> {
  constructor(userId: string) {
    super('user_not_found', `No user ${userId} in this company`, { userId });
  }
}

/** The change would leave the company without an active admin. Make another user admin first. */
export class LastAdminError extends DomainError<'last_admin'> {
  constructor(userId: string) {
    super('last_admin', `User ${userId} is the company's last active admin: make another user admin first`, { userId });
  }
}

/** Bad input the schema cannot express (a taken email, a short password, a wrong current password). Fix the field named. */
export class UserInputError extends DomainError<'user_input'> {
  constructor(field: string, message: string, status: 400 | 409 = 400) {
    super('user_input', message, { field, status });
  }
}

export interface UserAdminDeps {
  accounts: AccountStore;
  trail: AdminTrail;
  clock: () => number;
  /** New record ids (random UUIDs unless a test supplies its own). */
  newId?: () => string;
}

/** A one-time password: 18 random bytes, base64url (24 characters), shown once. */
const oneTimePassword = () => randomBytes(18).toString('base64url');

export class UserAdmin {
  constructor(private readonly deps: UserAdminDeps) {}

  list(companyId: string): Promise<User[]> {
    return this.deps.accounts.listUsers(companyId);
  }

  /** Invites a user into the admin's company; without a password, a one-time one is made and returned (shown once). */
  async create(companyId: string, actor: Actor, input: { email: string; role: UserRole; password?: string | undefined }): Promise<{ user: User; oneTimePassword: string | null }> {
    const email = input.email.trim();
    if (!isPlausibleEmail(email)) throw new UserInputError('/body/email', `not an email address: "${input.email}"`);
    if (input.password !== undefined && input.password.length < MIN_PASSWORD_LENGTH) throw new UserInputError('/body/password', `must be at least ${MIN_PASSWORD_LENGTH} characters`);
    const company = await this.deps.accounts.getCompany(companyId);
    if (!company) throw new UserNotFoundError(actor.userId);
    const otp = input.password === undefined ? oneTimePassword() : null;
    let created: User;
    try {
      ({ user: created } = await this.deps.accounts.createUser({
        companyName: company.name,
        newCompanyId: (this.deps.newId ?? randomUUID)(),
        userId: (this.deps.newId ?? randomUUID)(),
        email,
        passwordHash: await hashPassword(otp ?? (input.password as string)),
        role: input.role,
        now: iso(this.deps.clock()),
        passwordChangeRequired: otp !== null,
        existingCompanyOnly: true,
      }));
    } catch (err) {
      if (err instanceof DomainError && err.code === 'email_taken') throw new UserInputError('/body/email', `a user with email ${email} already exists`, 409);
      throw err;
    }
    await this.record(companyId, 'user.created', actor, created, { role: created.role, one_time_password: otp !== null });
    return { user: created, oneTimePassword: otp };
  }

  /** Changes a user's role, or disables or re-enables them (a disabled user's tokens stop working at once). */
  async update(companyId: string, actor: Actor, userId: string, patch: { role?: UserRole | undefined; disabled?: boolean | undefined }): Promise<User> {
    const current = await this.deps.accounts.getUser(companyId, userId);
    if (!current) throw new UserNotFoundError(userId);
    const losesAdmin = current.role === 'admin' && current.disabled_at === null && ((patch.role !== undefined && patch.role !== 'admin') || patch.disabled === true);
    if (losesAdmin && (await this.deps.accounts.countActiveAdmins(companyId)) <= 1) throw new LastAdminError(userId);
    const now = iso(this.deps.clock());
    const change: { role?: UserRole; disabled_at?: string | null } = {};
    if (patch.role !== undefined && patch.role !== current.role) change.role = patch.role;
    if (patch.disabled === true && current.disabled_at === null) change.disabled_at = now;
    if (patch.disabled === false && current.disabled_at !== null) change.disabled_at = null;
    if (Object.keys(change).length === 0) return current;
    await this.deps.accounts.updateUser(companyId, userId, change);
    if (change.disabled_at) await this.deps.accounts.revokeUserTokens(companyId, userId, now);
    const after = (await this.deps.accounts.getUser(companyId, userId)) as User;
    if (change.role !== undefined) await this.record(companyId, 'user.role_changed', actor, after, { previous_role: current.role, role: change.role });
    if (change.disabled_at !== undefined) await this.record(companyId, change.disabled_at === null ? 'user.enabled' : 'user.disabled', actor, after, {});
    return after;
  }

  /** A new one-time password (shown once); the user's tokens stop working. */
  async resetPassword(companyId: string, actor: Actor, userId: string): Promise<string> {
    const user = await this.deps.accounts.getUser(companyId, userId);
    if (!user) throw new UserNotFoundError(userId);
    const otp = oneTimePassword();
    await this.deps.accounts.setPassword(companyId, userId, await hashPassword(otp), true);
    await this.deps.accounts.revokeUserTokens(companyId, userId, iso(this.deps.clock()));
    await this.record(companyId, 'user.password_reset', actor, user, {});
    return otp;
  }

  /** The signed-in user replaces their password (a one-time one, or their own); their other tokens stop working. */
  async changeOwnPassword(companyId: string, userId: string, tokenHash: string, current: string, next: string): Promise<void> {
    const user = await this.deps.accounts.getUser(companyId, userId);
    if (!user) throw new UserNotFoundError(userId);
    if (!(await verifyPassword(user.password_hash, current))) throw new UserInputError('/body/current_password', 'is not your current password');
    if (next.length < MIN_PASSWORD_LENGTH) throw new UserInputError('/body/new_password', `must be at least ${MIN_PASSWORD_LENGTH} characters`);
    if (next === current) throw new UserInputError('/body/new_password', 'must differ from the current password');
    await this.deps.accounts.setPassword(companyId, userId, await hashPassword(next), false);
    await this.deps.accounts.revokeUserTokens(companyId, userId, iso(this.deps.clock()), tokenHash);
    await this.record(companyId, 'user.password_changed', { userId, email: user.email }, user, {});
  }

  /**
   * Appends the user.created entry of every user created outside the service (`users create`,
   * the first-start bootstrap), which could not append it themselves: the actor is the operator
   * (whoever runs commands on the service's machine), `via` says which path. Idempotent by the
   * entry's key, so two processes doing it at once append it once. Returns how many it recorded.
   */
  async recordCreatedOutside(): Promise<number> {
    let n = 0;
    for (const u of await this.deps.accounts.usersPendingTrail(100)) {
      await this.deps.trail.record(
        u.company_id,
        'user.created',
        { kind: 'operator' },
        { subject: { kind: 'user', user_id: u.user_id, email: u.email }, role: u.role, one_time_password: false, via: u.trail_pending as string },
        { idempotency_key: `user.created:${u.user_id}` },
      );
      await this.deps.accounts.clearTrailPending(u.company_id, u.user_id);
      n++;
    }
    return n;
  }

  private async record(companyId: string, eventType: string, actor: Actor, subject: User, details: Record<string, string | boolean>): Promise<void> {
    await this.deps.trail.record(companyId, eventType, { kind: 'user', user_id: actor.userId, email: actor.email }, { subject: { kind: 'user', user_id: subject.user_id, email: subject.email }, ...details });
  }

}
