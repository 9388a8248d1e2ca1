// Migration 0002_ledger. Never edit a migration once released: add a new one.
import { type Kysely, type Migration, sql } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('signing_keys')
      .addColumn('key_id', 'text', (c) => c.primaryKey())
      .addColumn('algorithm', 'text', (c) => c.notNull())
      .addColumn('public_key', 'text', (c) => c.notNull())
      .addColumn('active_from', 'text', (c) => c.notNull())
      .addColumn('active_to', 'text')
      .execute();

    await db.schema
      .createTable('chain_heads')
      .addColumn('company_id', 'text', (c) => c.primaryKey().references('companies.company_id'))
      .addColumn('last_seq', 'bigint', (c) => c.notNull())
      .addColumn('last_hash', 'text', (c) => c.notNull())
      .addColumn('last_created_at', 'text', (c) => c.notNull())
      .execute();

    let t = db.schema
      .createTable('log_entries')
      .addColumn('company_id', 'text', (c) => c.notNull().references('companies.company_id'))
      .addColumn('seq', 'bigint', (c) => c.notNull())
      .addColumn('log_id', 'text', (c) => c.notNull())
      .addColumn('format_version', 'integer', (c) => c.notNull())
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('data', 'text', (c) => c.notNull());
    // Optional envelope fields (listed here, not imported, so this migration never changes).
    for (const f of ['source', 'trace_id', 'session_id', 'timestamp', 'span_id', 'parent_span_id', 'parent_event_id',
      'root_event_id', 'agent_id', 'workflow_id', 'causality_type', 'idempotency_key', 'schema_version']) {
      t = t.addColumn(f, 'text');
    }
    await t
      .addColumn('extra', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('prev_hash', 'text', (c) => c.notNull())
      .addColumn('hash', 'text', (c) => c.notNull())
      .addColumn('signature', 'text', (c) => c.notNull())
      .addColumn('key_id', 'text', (c) => c.notNull())
      // The backstop against forks: one entry per (company, seq), whatever the code does.
      .addPrimaryKeyConstraint('log_entries_pk', ['company_id', 'seq'])
      .execute();
    await db.schema.createIndex('log_entries_log_id_uq').on('log_entries').columns(['company_id', 'log_id']).unique().execute();
    await db.schema
      .createIndex('log_entries_idempotency_uq')
      .on('log_entries')
      .columns(['company_id', 'idempotency_key'])
      .unique()
      .where(sql.ref('idempotency_key'), 'is not', null)
      .execute();
    // Filtered, seq-ordered reads (GET /logs) and the forensics use these. Optional
    // columns get partial indexes: entries without the field cost no index work, and
    // a `col = ?` filter still uses them on both stores.
    for (const col of ['event_type', 'created_at']) {
      await db.schema.createIndex(`log_entries_${col}_idx`).on('log_entries').columns(['company_id', col, 'seq']).execute();
    }
    for (const col of ['trace_id', 'session_id', 'source']) {
      await db.schema
        .createIndex(`log_entries_${col}_idx`)
        .on('log_entries')
        .columns(['company_id', col, 'seq'])
        .where(sql.ref(col), 'is not', null)
        .execute();
    }
  },
};
