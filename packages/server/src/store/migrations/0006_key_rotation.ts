// Migration 0006_key_rotation. Never edit a migration once released: add a new one.
import { type Kysely, type Migration } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    // Keys made by an online rotation: the private half sealed with the secrets key
    // (LEDGER_SECRETS_KEY_FILE, shared by every process), so every process can switch to it.
    await db.schema.alterTable('signing_keys').addColumn('private_key_encrypted', 'text').execute();
    // Service-wide, like signing_keys: each rotation's statement, signed by the old key and the new.
    await db.schema
      .createTable('key_transitions')
      .addColumn('new_key_id', 'text', (c) => c.primaryKey())
      .addColumn('old_key_id', 'text', (c) => c.notNull().unique())
      .addColumn('old_public_key', 'text', (c) => c.notNull())
      .addColumn('new_public_key', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('statement', 'text', (c) => c.notNull())
      .addColumn('old_signature', 'text', (c) => c.notNull())
      .addColumn('new_signature', 'text', (c) => c.notNull())
      .execute();
  },
};
