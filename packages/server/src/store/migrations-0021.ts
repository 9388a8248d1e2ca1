// Migrations of issue 42 (SSO identities bound; team limits; SSO flows used once). Never edit a migration once released.
import type { Kysely, Migration } from 'kysely';

export const ssoIdentities0021: Migration = {
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

export const teamLimits0022: Migration = {
  async up(db: Kysely<unknown>) {
    // What a team lets a requester choose for its actions (governance/assignment.ts, limitsFor):
    // a JSON object {min_risk?, max_uses?, max_expires_in_seconds?}; '{}' is no limit.
    await db.schema.alterTable('approval_teams').addColumn('limits', 'text', (c) => c.notNull().defaultTo('{}')).execute();
  },
};

export const ssoFlowUses0023: Migration = {
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
