// Migration 0016 (issue 32): signing keys kept in a PKCS#11 token. Never edit a migration once released.
import type { Kysely, Migration } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    // A signing key kept in a PKCS#11 token: 'pkcs11:<label>', so every process opens it there (docs/transparency.md, "Key custody").
    await db.schema.alterTable('signing_keys').addColumn('custody', 'text').execute();
  },
};
