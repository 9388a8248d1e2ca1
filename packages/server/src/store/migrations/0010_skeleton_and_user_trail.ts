// Migration 0010_skeleton_and_user_trail. Never edit a migration once released: add a new one.
import { type Kysely, type Migration } from 'kysely';

export const migration: Migration = {
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
};
