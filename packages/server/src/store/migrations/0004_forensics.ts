// Migration 0004_forensics. Never edit a migration once released: add a new one.
import { type Kysely, type Migration } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('replay_sessions')
      .addColumn('company_id', 'text', (c) => c.notNull())
      .addColumn('session_id', 'text', (c) => c.notNull())
      .addColumn('trace_id', 'text', (c) => c.notNull())
      .addColumn('token_id', 'text')
      .addColumn('metadata', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('event_count', 'bigint', (c) => c.notNull())
      .addColumn('tree_size', 'bigint', (c) => c.notNull())
      .addColumn('anomaly_reported_at', 'text')
      .addPrimaryKeyConstraint('replay_sessions_pk', ['company_id', 'session_id'])
      .execute();
    await db.schema.createIndex('replay_sessions_trace_idx').on('replay_sessions').columns(['company_id', 'trace_id', 'session_id']).execute();
  },
};
