// Migration 0005_operations. Never edit a migration once released: add a new one.
import { type Kysely, type Migration, sql } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    // Usage per company, UTC day and API key ('' for user tokens), flushed from memory.
    await db.schema
      .createTable('usage_daily')
      .addColumn('company_id', 'text', (c) => c.notNull())
      .addColumn('day', 'text', (c) => c.notNull())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('requests', 'bigint', (c) => c.notNull())
      .addColumn('events', 'bigint', (c) => c.notNull())
      .addColumn('rate_limited', 'bigint', (c) => c.notNull())
      .addColumn('bytes', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('usage_daily_pk', ['company_id', 'day', 'key_id'])
      .execute();
    // Entries appended before usage was counted.
    await sql`INSERT INTO usage_daily (company_id, day, key_id, requests, events, rate_limited, bytes)
      SELECT company_id, substr(created_at, 1, 10), '', 0, count(*), 0, sum(length(data) + coalesce(length(extra), 0))
      FROM log_entries GROUP BY company_id, substr(created_at, 1, 10)`.execute(db);
    await db.schema
      .createTable('webhook_endpoints')
      .addColumn('company_id', 'text', (c) => c.notNull())
      .addColumn('endpoint_id', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('event_types', 'text', (c) => c.notNull())
      .addColumn('secret_encrypted', 'text', (c) => c.notNull())
      .addColumn('enabled', 'integer', (c) => c.notNull())
      .addColumn('disabled_reason', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('webhook_endpoints_pk', ['company_id', 'endpoint_id'])
      .execute();
    await db.schema
      .createTable('webhook_events')
      .addColumn('company_id', 'text', (c) => c.notNull())
      .addColumn('event_id', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('data', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('webhook_events_pk', ['company_id', 'event_id'])
      .execute();
    await db.schema.createIndex('webhook_events_type_idx').on('webhook_events').columns(['company_id', 'type', 'event_id']).execute();
    // The outbox: one row per (event, endpoint), written in the event's transaction.
    await db.schema
      .createTable('webhook_deliveries')
      .addColumn('company_id', 'text', (c) => c.notNull())
      .addColumn('delivery_id', 'text', (c) => c.notNull())
      .addColumn('event_id', 'text', (c) => c.notNull())
      .addColumn('endpoint_id', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('next_attempt_at', 'text', (c) => c.notNull())
      .addColumn('lease_until', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('finished_at', 'text')
      .addPrimaryKeyConstraint('webhook_deliveries_pk', ['company_id', 'delivery_id'])
      .execute();
    // The delivery worker's queue, across companies: due pending deliveries.
    await db.schema.createIndex('webhook_deliveries_due_idx').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute();
    await db.schema
      .createTable('webhook_attempts')
      .addColumn('company_id', 'text', (c) => c.notNull())
      .addColumn('attempt_id', 'text', (c) => c.notNull())
      .addColumn('delivery_id', 'text', (c) => c.notNull())
      .addColumn('endpoint_id', 'text', (c) => c.notNull())
      .addColumn('event_id', 'text', (c) => c.notNull())
      .addColumn('attempted_at', 'text', (c) => c.notNull())
      .addColumn('status_code', 'integer')
      .addColumn('latency_ms', 'integer', (c) => c.notNull())
      .addColumn('error', 'text')
      .addColumn('result', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('webhook_attempts_pk', ['company_id', 'attempt_id'])
      .execute();
    await db.schema.createIndex('webhook_attempts_endpoint_idx').on('webhook_attempts').columns(['company_id', 'endpoint_id', 'attempt_id']).execute();
  },
};
