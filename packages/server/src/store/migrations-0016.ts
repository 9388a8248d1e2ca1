// Migrations of issue 32's key custody (signing keys kept in a PKCS#11 token, and agents' own
// keys: producer signatures) and issue 33's index diet. Never edit a migration once released.
import type { Kysely, Migration } from 'kysely';

export const indexDiet0018: Migration = {
  async up(db: Kysely<unknown>) {
    // A time range is found by searching the primary key (store/time-bounds.ts): created_at never
    // decreases along seq. One B-tree fewer for every append (docs/performance.md, "Indexes").
    await db.schema.dropIndex('log_entries_created_at_idx').execute();
  },
};

export const agentKeys0017: Migration = {
  async up(db: Kysely<unknown>) {
    // Format version 4 (docs/ledger-format.md §20): the agent's own signature, hashed in the entry.
    await db.schema.alterTable('log_entries').addColumn('agent_key_id', 'text').execute();
    await db.schema.alterTable('log_entries').addColumn('agent_signature', 'text').execute();
    // The register of agents' keys each company's admins keep.
    await db.schema
      .createTable('agent_keys')
      .addColumn('company_id', 'text', (c) => c.notNull())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('agent_id', 'text', (c) => c.notNull())
      .addColumn('public_key', 'text', (c) => c.notNull())
      .addColumn('active_from', 'text', (c) => c.notNull())
      .addColumn('active_to', 'text')
      .addColumn('ended_reason', 'text')
      .addColumn('registered_at', 'text', (c) => c.notNull())
      .addColumn('registered_by', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('agent_keys_pk', ['company_id', 'key_id'])
      .execute();
  },
};

export const signingKeyCustody0016: Migration = {
  async up(db: Kysely<unknown>) {
    // A signing key kept in a PKCS#11 token: 'pkcs11:<label>', so every process opens it there (docs/transparency.md, "Key custody").
    await db.schema.alterTable('signing_keys').addColumn('custody', 'text').execute();
  },
};
