// Versioned migrations, applied in name order at start and by `audit-ledger migrate`.
// Written with Kysely's schema builder so one definition serves SQLite and PostgreSQL.
// Never edit a released migration: add a new one.
import { type Kysely, type Migration, sql } from 'kysely';
import { ssoFlowUses0023, ssoIdentities0021, teamLimits0022 } from './migrations-0021.js';
import { compliance0009 } from './migrations-0009.js';
import { governance0011 } from './migrations-0011.js';
import { search0012 } from './migrations-0012.js';
import { streams0013 } from './migrations-0013.js';
import { checkpointTimestamps0015, tlogPublic0014 } from './migrations-0014.js';
import { agentKeys0017, indexDiet0018, signingKeyCustody0016 } from './migrations-0016.js';
import { continuityHolds0020, treeBackfill0019 } from './migrations-0019.js';

export const MIGRATIONS: Record<string, Migration> = {
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
  '0005_operations': {
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
  },
  '0006_key_rotation': {
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
  },
  '0007_idempotency_conflicts': {
    async up(db: Kysely<unknown>) {
      // A body idempotency_key reused for different content is appended anyway and marked
      // (docs/integrations.md): the key stays unique among originals; each conflict is told
      // apart by its seq. One index still serves every lookup by (company, key).
      await db.schema.alterTable('log_entries').addColumn('idempotency_conflict_of', 'text').execute();
      await db.schema.dropIndex('log_entries_idempotency_uq').execute();
      await sql`CREATE UNIQUE INDEX log_entries_idempotency_uq ON log_entries (company_id, idempotency_key, (CASE WHEN idempotency_conflict_of IS NULL THEN 0 ELSE seq END)) WHERE idempotency_key IS NOT NULL`.execute(db);
    },
  },
  '0008_roles_and_users': {
    async up(db: Kysely<unknown>) {
      // Roles admin, reviewer (what member was) and auditor; users an admin can disable, and
      // one-time passwords that must be changed at first use.
      await db.schema.alterTable('users').addColumn('disabled_at', 'text').execute();
      await db.schema.alterTable('users').addColumn('password_change_required', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await sql`UPDATE users SET role = 'reviewer' WHERE role = 'member'`.execute(db);
      // Console sessions: the same tokens, sent only as an HttpOnly cookie, with an idle deadline.
      await db.schema.alterTable('access_tokens').addColumn('session', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('access_tokens').addColumn('idle_expires_at', 'text').execute();
    },
  },
  '0009_compliance': compliance0009,
  '0010_skeleton_and_user_trail': {
    async up(db: Kysely<unknown>) {
      // Entry format version 3 (docs/ledger-format.md §16): the client's event_id and the links
      // its content names are hashed beside the envelope, so erasure keeps the causal skeleton.
      // Added last, so older rows (versions 1 and 2) have null in both.
      await db.schema.alterTable('log_entries').addColumn('event_id', 'text').execute();
      await db.schema.alterTable('log_entries').addColumn('links', 'text').execute();
      // A user created outside the service (`users create`, first-start bootstrap) waits here for
      // its user.created entry in the administrators' trail, which the service appends.
      await db.schema.alterTable('users').addColumn('trail_pending', 'text').execute();
      // The root cause type a replay reported as an anomaly (period reports name it).
      await db.schema.alterTable('replay_sessions').addColumn('anomaly_type', 'text').execute();
    },
  },
  '0011_governance': governance0011,
  '0012_search': search0012,
  '0013_log_streams': streams0013,
  '0014_tlog_public': tlogPublic0014,
  '0015_checkpoint_timestamps': checkpointTimestamps0015,
  '0016_signing_key_custody': signingKeyCustody0016,
  '0017_agent_keys': agentKeys0017,
  '0018_index_diet': indexDiet0018,
  '0019_tree_backfill': treeBackfill0019,
  '0020_continuity_holds': continuityHolds0020,
  '0021_sso_identities': ssoIdentities0021,
  '0022_team_limits': teamLimits0022,
  '0023_sso_flow_uses': ssoFlowUses0023,
};

export const LATEST_MIGRATION = Object.keys(MIGRATIONS).sort().at(-1) as string;

/** The migration names in this version of the code, in the order they apply. */
export const MIGRATION_NAMES: readonly string[] = Object.keys(MIGRATIONS).sort();
