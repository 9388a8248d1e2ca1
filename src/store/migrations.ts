// Versioned migrations, applied in name order at start and by `audit-ledger migrate`.
// Written with Kysely's schema builder so one definition serves SQLite and PostgreSQL.
// Never edit a released migration: add a new one.
import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely';

const migrations: Record<string, Migration> = {
  '0001_accounts_and_keys': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('companies')
        .addColumn('company_id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('users')
        .addColumn('company_id', 'text', (c) => c.notNull().references('companies.company_id'))
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('users_pk', ['company_id', 'user_id'])
        .execute();
      // Login is by email alone, so email is unique across companies.
      await db.schema.createIndex('users_email_uq').on('users').column('email').unique().execute();

      await db.schema
        .createTable('access_tokens')
        .addColumn('company_id', 'text', (c) => c.notNull())
        .addColumn('token_hash', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text')
        .addPrimaryKeyConstraint('access_tokens_pk', ['company_id', 'token_hash'])
        .execute();
      // A presented token is looked up by its hash before its company is known.
      await db.schema.createIndex('access_tokens_hash_uq').on('access_tokens').column('token_hash').unique().execute();

      await db.schema
        .createTable('api_keys')
        .addColumn('company_id', 'text', (c) => c.notNull().references('companies.company_id'))
        .addColumn('key_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('key_prefix', 'text', (c) => c.notNull())
        .addColumn('key_hash', 'text', (c) => c.notNull())
        .addColumn('rate_limit_per_minute', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text')
        .addPrimaryKeyConstraint('api_keys_pk', ['company_id', 'key_id'])
        .execute();
      await db.schema.createIndex('api_keys_hash_uq').on('api_keys').column('key_hash').unique().execute();
      // Spec 5.6: one active key per company. Enforced here, so two simultaneous
      // creates cannot both commit, on either store.
      await db.schema
        .createIndex('api_keys_one_active_uq')
        .on('api_keys')
        .column('company_id')
        .unique()
        .where(sql.ref('status'), '=', 'active')
        .execute();
    },
  },
  '0002_ledger': {
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
  },
  '0003_verifiable_log': {
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
  },
  '0004_forensics': {
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
  },
};

export const LATEST_MIGRATION = Object.keys(migrations).sort().at(-1) as string;

const provider: MigrationProvider = { getMigrations: async () => migrations };

export function migrator(db: Kysely<unknown>): Migrator {
  return new Migrator({ db, provider, migrationTableName: 'schema_migrations', migrationLockTableName: 'schema_migrations_lock' });
}

/** Applies every pending migration; throws with the failing migration's name. */
export async function migrateToLatest(db: Kysely<unknown>): Promise<string[]> {
  const { error, results } = await migrator(db).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** The applied migration name, or null before the first one. */
export async function currentMigration(db: Kysely<unknown>): Promise<string | null> {
  const applied = await migrator(db).getMigrations();
  return applied.filter((m) => m.executedAt !== undefined).at(-1)?.name ?? null;
}
