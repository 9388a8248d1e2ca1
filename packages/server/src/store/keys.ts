// The service's signing keys and the statements that tie each one to the next. Service-wide,
// not per company: two of the three tables without company_id (reference tables on a distributed
// PostgreSQL; the third is sso_flow_uses). Appends check, inside their own transaction, that the key they signed with is
// still active, and a rotation retires the old key in one transaction: so no
// entry or checkpoint is ever committed under a retired key, on either store, in any process.
import { type Kysely, type Selectable, sql } from 'kysely';
import type { KeyTransition } from '@audit-ledger/core';
import { DomainError } from '../kernel/domain-error.js';
import type { DbHandle, StoreKind } from './handle.js';
import type { Database, SigningKeysTable } from './schema.js';

export type SigningKeyRow = Selectable<SigningKeysTable>;

/** Another rotation retired the old key first; nothing was changed. */
export class RotationConflictError extends DomainError<'rotation_conflict'> {
  constructor(keyId: string) {
    super('rotation_conflict', `signing key ${keyId} is no longer the active key (another rotation came first)`, { keyId });
  }
}

export class KeyStore {
  private readonly db: Kysely<Database>;
  private readonly kind: StoreKind;

  constructor(handle: DbHandle) {
    this.db = handle.db;
    this.kind = handle.kind;
  }

  /** Records a key; a key already recorded is left as it is. */
  async register(row: SigningKeyRow): Promise<void> {
    await this.db.insertInto('signing_keys').values(row).onConflict((oc) => oc.column('key_id').doNothing()).execute();
  }

  async list(): Promise<SigningKeyRow[]> {
    return this.db.selectFrom('signing_keys').selectAll().orderBy('active_from').orderBy('key_id').execute();
  }

  /** The active key's row (the newest, should a key file have been swapped in by hand). */
  async active(): Promise<SigningKeyRow | undefined> {
    return this.db.selectFrom('signing_keys').selectAll().where('active_to', 'is', null).orderBy('active_from', 'desc').limit(1).executeTakeFirst();
  }

  /** Marks every other key as no longer active from `at` on. */
  async retireAllExcept(keyId: string, at: string): Promise<void> {
    await this.db.updateTable('signing_keys').set({ active_to: at }).where('key_id', '!=', keyId).where('active_to', 'is', null).execute();
  }

  /**
   * One transaction: the old key retired at the transition's time (chosen by `build` from
   * `notBefore`, later than every time the old key signed), the new key active from then, and
   * the statement recorded. Appends check their key inside their own transaction
   * (postgres.ts, sqlite-writer.ts). On PostgreSQL this takes signing_keys' ACCESS EXCLUSIVE lock
   * first: it waits for the appends in flight (their check holds ACCESS SHARE until they commit),
   * and appends that start meanwhile wait for it and then find the key retired. On SQLite the
   * write lock serializes it with every append.
   */
  async rotate(oldKeyId: string, build: (notBefore: number) => { newKey: SigningKeyRow; transition: KeyTransition }): Promise<KeyTransition> {
    return this.db.transaction().execute(async (trx) => {
      if (this.kind === 'postgres') await sql`LOCK TABLE signing_keys IN ACCESS EXCLUSIVE MODE`.execute(trx);
      // SQLite: a write first, so this transaction holds the write lock before it reads.
      const active = await trx.updateTable('signing_keys').set({ active_to: null }).where('key_id', '=', oldKeyId).where('active_to', 'is', null).executeTakeFirst();
      if (Number(active.numUpdatedRows) !== 1) throw new RotationConflictError(oldKeyId);
      // Every append and checkpoint signed with the old key has committed (PostgreSQL: the lock
      // waited for them; SQLite: the write lock). The transition is dated after all of them, so
      // each old-key signature lies inside the old key's period (ledger-format.md §12).
      const heads = await trx.selectFrom('chain_heads').select((eb) => eb.fn.max('last_created_at').as('at')).executeTakeFirst();
      const cps = await trx.selectFrom('checkpoints').select((eb) => eb.fn.max('timestamp').as('at')).executeTakeFirst();
      const latest = Math.max(...[heads?.at, cps?.at].map((t) => (typeof t === 'string' ? Date.parse(t) : Number.NEGATIVE_INFINITY)));
      const { newKey, transition } = build(latest + 1);
      await trx.updateTable('signing_keys').set({ active_to: transition.created_at }).where('key_id', '=', oldKeyId).execute();
      await trx.insertInto('signing_keys').values(newKey).execute();
      await trx.insertInto('key_transitions').values(transition).execute();
      return transition;
    });
  }

  /** Every transition, oldest first: each one's old key is the previous one's new key. */
  async transitions(): Promise<KeyTransition[]> {
    return this.db.selectFrom('key_transitions').selectAll().orderBy('created_at').orderBy('new_key_id').execute();
  }
}
