// Migration 0003_verifiable_log. Never edit a migration once released: add a new one.
import { type Kysely, type Migration, sql } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    // The Merkle tree in stored-hash order (src/core/merkle.ts): leaf and node hashes, hex.
    await db.schema
      .createTable('merkle_hashes')
      .addColumn('company_id', 'text', (c) => c.notNull())
      .addColumn('idx', 'bigint', (c) => c.notNull())
      .addColumn('hash', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('merkle_hashes_pk', ['company_id', 'idx'])
      .execute();
    // Every signed checkpoint is kept: clients compare the ones they hold with these.
    await db.schema
      .createTable('checkpoints')
      .addColumn('company_id', 'text', (c) => c.notNull())
      .addColumn('tree_size', 'bigint', (c) => c.notNull())
      .addColumn('root_hash', 'text', (c) => c.notNull())
      .addColumn('timestamp', 'text', (c) => c.notNull())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('note', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('checkpoints_pk', ['company_id', 'tree_size'])
      .execute();
    // How far the background verifier has got, and its lease (one verifier per company).
    await db.schema
      .createTable('integrity_state')
      .addColumn('company_id', 'text', (c) => c.primaryKey())
      .addColumn('verified_size', 'bigint', (c) => c.notNull())
      .addColumn('verified_hash', 'text', (c) => c.notNull())
      .addColumn('verified_edge', 'text', (c) => c.notNull())
      .addColumn('checkpoint_size', 'bigint', (c) => c.notNull())
      .addColumn('last_verified_at', 'text')
      .addColumn('lease_owner', 'text')
      .addColumn('lease_until', 'text')
      .execute();
    await db.schema
      .createTable('integrity_violations')
      .addColumn('company_id', 'text', (c) => c.notNull())
      .addColumn('violation_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'bigint')
      .addColumn('log_id', 'text')
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('detail', 'text', (c) => c.notNull())
      .addColumn('detected_at', 'text', (c) => c.notNull())
      .addColumn('job_id', 'text')
      .addPrimaryKeyConstraint('integrity_violations_pk', ['company_id', 'violation_id'])
      .execute();
    await db.schema
      .createTable('verification_jobs')
      .addColumn('company_id', 'text', (c) => c.notNull())
      .addColumn('job_id', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('options', 'text', (c) => c.notNull())
      .addColumn('requested_at', 'text', (c) => c.notNull())
      .addColumn('started_at', 'text')
      .addColumn('finished_at', 'text')
      .addColumn('lease_owner', 'text')
      .addColumn('lease_until', 'text')
      .addColumn('report', 'text')
      .addPrimaryKeyConstraint('verification_jobs_pk', ['company_id', 'job_id'])
      .execute();
    // At most one queued or running job per company, whatever races the API sees.
    await db.schema
      .createIndex('verification_jobs_one_open_uq')
      .on('verification_jobs')
      .column('company_id')
      .unique()
      .where(sql.ref('status'), 'in', sql`('queued', 'running')`)
      .execute();
  },
};
