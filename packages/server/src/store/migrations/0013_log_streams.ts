// Migration 0013: log streams (issue 31): each stream's destination, filter, format and its cursor
// on seq, with the batch it is sending (so a batch sent again after a crash is the same batch, with
// the same id), its lease (one process delivers a stream at a time) and its failure state; and the
// batches delivered. Never edit this migration once released.
import type { Kysely, Migration } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('log_streams')
      .addColumn('company_id', 'text', (c) => c.notNull().references('companies.company_id'))
      .addColumn('stream_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('destination_type', 'text', (c) => c.notNull())
      /** The destination without its secret (JSON). */
      .addColumn('destination', 'text', (c) => c.notNull())
      /** The destination's token or key, sealed by the secret box; null when it has none. */
      .addColumn('secret_encrypted', 'text')
      .addColumn('format', 'text', (c) => c.notNull())
      .addColumn('filter', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('status_reason', 'text')
      /** The first seq no delivered batch covers yet. */
      .addColumn('cursor_seq', 'integer', (c) => c.notNull())
      /** The batch being sent: its last seq and the checkpoint it is proven against. */
      .addColumn('pending_to_seq', 'integer')
      .addColumn('pending_checkpoint_size', 'integer')
      /** The checkpoint the last delivered batch was proven against (the next one proves it extends it). */
      .addColumn('last_checkpoint_size', 'integer')
      .addColumn('last_checkpoint_root', 'text')
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('next_attempt_at', 'text', (c) => c.notNull())
      .addColumn('failing_since', 'text')
      .addColumn('last_error', 'text')
      .addColumn('retry_window_seconds', 'integer', (c) => c.notNull())
      .addColumn('lease_owner', 'text')
      .addColumn('lease_until', 'text')
      .addColumn('delivered_batches', 'integer', (c) => c.notNull())
      .addColumn('delivered_entries', 'integer', (c) => c.notNull())
      .addColumn('last_delivered_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('log_streams_pk', ['company_id', 'stream_id'])
      .execute();
    await db.schema
      .createTable('log_stream_batches')
      .addColumn('company_id', 'text', (c) => c.notNull())
      .addColumn('stream_id', 'text', (c) => c.notNull())
      .addColumn('batch_id', 'text', (c) => c.notNull())
      .addColumn('from_seq', 'integer', (c) => c.notNull())
      .addColumn('to_seq', 'integer', (c) => c.notNull())
      .addColumn('entry_count', 'integer', (c) => c.notNull())
      .addColumn('checkpoint_size', 'integer', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('delivered_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('log_stream_batches_pk', ['company_id', 'stream_id', 'batch_id'])
      .execute();
  },
};
