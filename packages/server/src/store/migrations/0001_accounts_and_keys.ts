// Migration 0001_accounts_and_keys. Never edit a migration once released: add a new one.
import { type Kysely, type Migration, sql } from 'kysely';

export const migration: Migration = {
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
};
