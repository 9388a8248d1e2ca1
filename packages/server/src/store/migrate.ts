// Applying the migrations (migrations.ts lists them): at start, by `audit-ledger migrate`, and
// what `migrate --dry-run` says it would do. A database a newer version migrated is refused.
import { type Kysely, type MigrationProvider, Migrator } from 'kysely';
import { LATEST_MIGRATION, MIGRATION_NAMES, MIGRATIONS } from './migrations.js';

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

export function migrator(db: Kysely<unknown>): Migrator {
  return new Migrator({ db, provider, migrationTableName: 'schema_migrations', migrationLockTableName: 'schema_migrations_lock' });
}

/**
 * A database migrated by a newer audit-ledger: it names migrations this code does not have. Such
 * a downgrade is refused, at start and by `migrate`: the older code would write rows the newer
 * schema's constraints or the ledger format it records do not expect.
 */
export class SchemaNewerError extends Error {
  override readonly name = 'SchemaNewerError';
  constructor(readonly unknown: string[]) {
    super(
      `the database was migrated by a newer audit-ledger: its schema has ${unknown.join(', ')}, which this version does not know (it knows up to ${LATEST_MIGRATION}). ` +
        'A downgrade is refused: run the newer version again, or restore a backup taken before the upgrade (docs/operations.md, "Upgrades").',
    );
  }
}

/** The migrations applied to the database, by name (none before the first). */
async function appliedNames(db: Kysely<unknown>): Promise<string[]> {
  const tables = await db.introspection.getTables();
  if (!tables.some((t) => t.name === 'schema_migrations')) return [];
  const rows = await (db as Kysely<{ schema_migrations: { name: string } }>).selectFrom('schema_migrations').select('name').orderBy('name').execute();
  return rows.map((r) => r.name);
}

/** What `migrate --dry-run` reports: the schema now, the migrations that would apply, and any this code does not know. */
export interface MigrationPlan {
  current: string | null;
  latest: string;
  pending: string[];
  /** Applied by a newer version (a downgrade: refused). */
  unknown: string[];
}

export async function migrationPlan(db: Kysely<unknown>): Promise<MigrationPlan> {
  const applied = await appliedNames(db);
  const known = new Set(MIGRATION_NAMES);
  const done = new Set(applied);
  return {
    current: applied.at(-1) ?? null,
    latest: LATEST_MIGRATION,
    pending: MIGRATION_NAMES.filter((m) => !done.has(m)),
    unknown: applied.filter((m) => !known.has(m)),
  };
}

/** Applies every pending migration; throws with the failing migration's name, or SchemaNewerError on a downgrade. */
export async function migrateToLatest(db: Kysely<unknown>): Promise<string[]> {
  const { unknown } = await migrationPlan(db);
  if (unknown.length > 0) throw new SchemaNewerError(unknown);
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

/** What each migration changes, as `migrate --dry-run` prints it. Every migration has a line (a test checks). */
export const MIGRATION_SUMMARIES: Readonly<Record<string, string>> = {
  '0001_accounts_and_keys': 'create companies, users, access_tokens and api_keys (one active API key per company)',
  '0002_ledger': 'create signing_keys, chain_heads and log_entries with their indexes',
  '0003_verifiable_log': 'create merkle_hashes, checkpoints and the integrity verifier tables',
  '0004_forensics': 'create replay_sessions',
  '0005_operations': 'create usage_daily and the webhook tables',
  '0006_key_rotation': 'add signing_keys.private_key_encrypted; create key_transitions',
  '0007_idempotency_conflicts': 'add log_entries.idempotency_conflict_of; make the idempotency index non-unique',
  '0008_roles_and_users': "add users.disabled_at and password_change_required, rename the role member to reviewer, add session columns to access_tokens",
  '0009_compliance': 'add the content commitment columns to log_entries (format version 2); create retention, legal hold, erasure, witness and report tables',
  '0010_skeleton_and_user_trail': 'add log_entries.event_id and links (format version 3), users.trail_pending, replay_sessions.anomaly_type',
  '0011_governance': 'create approvals, reviewer teams, governance checks, policy versions and incidents',
  '0012_search': 'create the index of words in entries (SQLite FTS5 with its triggers; PostgreSQL GIN), built from the stored entries',
  '0013_log_streams': 'create log_streams and log_stream_batches',
  '0014_tlog_public': 'add companies.tlog_public',
  '0015_checkpoint_timestamps': 'create checkpoint_timestamps (RFC 3161 tokens)',
  '0016_signing_key_custody': 'add signing_keys.custody (PKCS#11 keys)',
  '0017_agent_keys': 'add log_entries.agent_key_id and agent_signature (format version 4); create agent_keys',
  '0018_index_diet': 'drop log_entries_created_at_idx (time ranges are found on the primary key)',
  '0020_continuity_holds': 'create continuity_holds (companies whose ledger is behind a checkpoint seen outside: appends refused until an operator decides)',
  '0021_sso_identities': 'create sso_identities (the provider identity, iss and sub, each SSO user is bound to)',
  '0022_team_limits': 'add approval_teams.limits (the least risk, most uses and longest life a requester may choose for a team\'s actions)',
  '0023_sso_flow_uses': 'create sso_flow_uses (each single sign-on flow finishes once)',
  '0024_search_after_commit': 'the search index is kept after the commit: SQLite drops the FTS5 table and triggers of 0012 (the index is rebuilt in ledger.search.db); PostgreSQL replaces the GIN expression index with log_search and search_positions',
  '0019_tree_backfill': 'build the stored Merkle tree of ledgers whose entries were written before the tree existed (schema 0002)',
};
