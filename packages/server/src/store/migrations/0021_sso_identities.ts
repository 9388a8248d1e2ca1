// Migration 0021 (issue 42): SSO identities bound to users. Never edit a migration once released.
import type { Kysely, Migration } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    // The provider's identity (iss + sub) a user was first signed in with: later sign-ins are
    // matched by it, never by email alone (auth/sso.ts). One identity per provider and user.
    await db.schema
      .createTable('sso_identities')
      .addColumn('company_id', 'text', (c) => c.notNull())
      .addColumn('issuer', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('linked_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('sso_identities_pk', ['company_id', 'issuer', 'subject'])
      .execute();
    await db.schema.createIndex('sso_identities_user_uq').unique().on('sso_identities').columns(['company_id', 'user_id', 'issuer']).execute();
  },
};
