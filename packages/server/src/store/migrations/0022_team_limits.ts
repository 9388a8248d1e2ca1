// Migration 0022 (issue 42): the limits a reviewer team sets. Never edit a migration once released.
import type { Kysely, Migration } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    // What a team lets a requester choose for its actions (governance/assignment.ts, limitsFor):
    // a JSON object {min_risk?, max_uses?, max_expires_in_seconds?}; '{}' is no limit.
    await db.schema.alterTable('approval_teams').addColumn('limits', 'text', (c) => c.notNull().defaultTo('{}')).execute();
  },
};
