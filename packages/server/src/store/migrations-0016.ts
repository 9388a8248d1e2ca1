// Migrations of issue 32's key custody: signing keys kept in a PKCS#11 token, and agents' own
// keys (producer signatures). Never edit a migration once released.
import type { Kysely, Migration } from 'kysely';

export const signingKeyCustody0016: Migration = {
  async up(db: Kysely<unknown>) {
    // A signing key kept in a PKCS#11 token: 'pkcs11:<label>', so every process opens it there (docs/transparency.md, "Key custody").
    await db.schema.alterTable('signing_keys').addColumn('custody', 'text').execute();
  },
};
