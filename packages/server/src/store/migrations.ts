// Versioned migrations, applied in name order at start and by `audit-ledger migrate`: one file
// each in migrations/, named as it is recorded. Written with Kysely's schema builder so one
// definition serves SQLite and PostgreSQL. Never edit a released migration: add a new one (a file
// here, and its line below).
import type { Migration } from 'kysely';
import { migration as m0001 } from './migrations/0001_accounts_and_keys.js';
import { migration as m0002 } from './migrations/0002_ledger.js';
import { migration as m0003 } from './migrations/0003_verifiable_log.js';
import { migration as m0004 } from './migrations/0004_forensics.js';
import { migration as m0005 } from './migrations/0005_operations.js';
import { migration as m0006 } from './migrations/0006_key_rotation.js';
import { migration as m0007 } from './migrations/0007_idempotency_conflicts.js';
import { migration as m0008 } from './migrations/0008_roles_and_users.js';
import { migration as m0009 } from './migrations/0009_compliance.js';
import { migration as m0010 } from './migrations/0010_skeleton_and_user_trail.js';
import { migration as m0011 } from './migrations/0011_governance.js';
import { migration as m0012 } from './migrations/0012_search.js';
import { migration as m0013 } from './migrations/0013_log_streams.js';
import { migration as m0014 } from './migrations/0014_tlog_public.js';
import { migration as m0015 } from './migrations/0015_checkpoint_timestamps.js';
import { migration as m0016 } from './migrations/0016_signing_key_custody.js';
import { migration as m0017 } from './migrations/0017_agent_keys.js';
import { migration as m0018 } from './migrations/0018_index_diet.js';
import { migration as m0019 } from './migrations/0019_tree_backfill.js';
import { migration as m0020 } from './migrations/0020_continuity_holds.js';
import { migration as m0021 } from './migrations/0021_sso_identities.js';
import { migration as m0022 } from './migrations/0022_team_limits.js';
import { migration as m0023 } from './migrations/0023_sso_flow_uses.js';
import { migration as m0024 } from './migrations/0024_search_after_commit.js';

export const MIGRATIONS: Record<string, Migration> = {
  '0001_accounts_and_keys': m0001,
  '0002_ledger': m0002,
  '0003_verifiable_log': m0003,
  '0004_forensics': m0004,
  '0005_operations': m0005,
  '0006_key_rotation': m0006,
  '0007_idempotency_conflicts': m0007,
  '0008_roles_and_users': m0008,
  '0009_compliance': m0009,
  '0010_skeleton_and_user_trail': m0010,
  '0011_governance': m0011,
  '0012_search': m0012,
  '0013_log_streams': m0013,
  '0014_tlog_public': m0014,
  '0015_checkpoint_timestamps': m0015,
  '0016_signing_key_custody': m0016,
  '0017_agent_keys': m0017,
  '0018_index_diet': m0018,
  '0019_tree_backfill': m0019,
  '0020_continuity_holds': m0020,
  '0021_sso_identities': m0021,
  '0022_team_limits': m0022,
  '0023_sso_flow_uses': m0023,
  '0024_search_after_commit': m0024,
};

export const LATEST_MIGRATION = Object.keys(MIGRATIONS).sort().at(-1) as string;

/** The migration names in this version of the code, in the order they apply. */
export const MIGRATION_NAMES: readonly string[] = Object.keys(MIGRATIONS).sort();
