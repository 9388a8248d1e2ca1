// Creating users: shared by the first-start bootstrap and `audit-ledger users create`.
import { randomUUID } from 'node:crypto';
import { isPlausibleEmail, MIN_PASSWORD_LENGTH } from '../kernel/config.js';
import { hashPassword } from '../crypto/passwords.js';
import type { UserRole } from '../store/schema.js';
import type { AccountStore, Company, User } from '../store/accounts.js';
import { iso } from '../kernel/time.js';

export class AccountInputError extends Error {}

/** Where users are created: the store (or its account repository). */
export interface AccountsDeps {
  accounts: AccountStore;
}

/**
 * Creates a user in the named company (matched ignoring letter case), creating the company if
 * none matches. Outside the service, so its user.created trail entry is left to the service
 * (UserAdmin.recordCreatedOutside), marked with how it was created.
 */
export async function createUser(
  store: AccountsDeps,
  input: { company: string; email: string; password: string; role?: UserRole },
  clock: () => number = Date.now,
  /** null: no trail entry at all (tests that count a company's entries from seq 0). */
  via: 'cli' | 'bootstrap' | null = 'cli',
): Promise<{ company: Company; user: User }> {
  const company = input.company.trim();
  if (company === '' || company.length > 200) throw new AccountInputError('company name must be 1–200 characters');
  if (!isPlausibleEmail(input.email)) throw new AccountInputError(`not an email address: "${input.email}"`);
  if (input.password.length < MIN_PASSWORD_LENGTH) throw new AccountInputError(`password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  return store.accounts.createUser({
    companyName: company,
    newCompanyId: randomUUID(),
    userId: randomUUID(),
    email: input.email.trim(),
    passwordHash: await hashPassword(input.password),
    role: input.role ?? 'admin',
    now: iso(clock()),
    ...(via !== null ? { trailPending: via } : {}),
  });
}

/** First start: when the store has no user and bootstrap credentials are configured, create them. */
export async function bootstrapIfEmpty(
  store: AccountsDeps,
  bootstrap: { company: string; email: string; password: string } | undefined,
  clock: () => number = Date.now,
): Promise<{ company: Company; user: User } | undefined> {
  if (!bootstrap || (await store.accounts.countUsers()) > 0) return undefined;
  return createUser(store, bootstrap, clock, 'bootstrap');
}
