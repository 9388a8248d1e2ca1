// Migration 0023 (issue 42): SSO sign-in flows used once. Never edit a migration once released.
import type { Kysely, Migration } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    // Each single sign-on flow finishes once (auth/sso.ts): a replayed callback with the same flow
    // cookie is refused even when the provider would accept its code again. Service-wide, not per
    // company (a flow belongs to no company until it ends): a reference table on Citus.
    await db.schema
      .createTable('sso_flow_uses')
      .addColumn('state_hash', 'text', (c) => c.primaryKey())
      .addColumn('used_at', 'text', (c) => c.notNull())
      .execute();
  },
};
