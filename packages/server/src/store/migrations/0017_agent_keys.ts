// Migration 0017 (issue 32): agents' own keys (producer signatures). Never edit a migration once released.
import type { Kysely, Migration } from 'kysely';

export const migration: Migration = {
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
