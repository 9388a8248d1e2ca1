// Migration 0008_roles_and_users. Never edit a migration once released: add a new one.
import { type Kysely, type Migration, sql } from 'kysely';

export const migration: Migration = {
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
};
