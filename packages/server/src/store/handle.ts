// One database handle: what every repository of the store is built over (accounts, ledger,
// signing keys, webhooks, integrity, forensics, usage). The Store (store.ts) is one.
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

export type StoreKind = 'sqlite' | 'postgres';

export interface DbHandle {
  readonly kind: StoreKind;
  readonly db: Kysely<Database>;
  /** Recognizes a unique-constraint violation and returns the violated index's name. */
  readonly uniqueViolation: (err: unknown) => string | undefined;
}
