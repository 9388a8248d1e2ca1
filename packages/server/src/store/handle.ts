// One database handle: what every repository of the store is built over (accounts, ledger,
// signing keys, webhooks, integrity, forensics, usage). The Store (store.ts) is one.
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { SearchIndex } from './search-index.js';

export type StoreKind = 'sqlite' | 'postgres';

export interface DbHandle {
  readonly kind: StoreKind;
  readonly db: Kysely<Database>;
  /** Recognizes a unique-constraint violation and returns the violated index's name. */
  readonly uniqueViolation: (err: unknown) => string | undefined;
  /** When the backend has one (SQLite): runs a compiled search query off the request thread, within a time budget (sqlite-reader.ts). */
  readonly searchOffThread?: (sql: string, parameters: readonly unknown[]) => Promise<unknown[]>;
  /** The index of words inside events (search-index.ts), when the store keeps one. */
  readonly searchIndex?: SearchIndex;
}
