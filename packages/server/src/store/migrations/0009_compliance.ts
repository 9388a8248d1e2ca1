// Migration 0009: entry format version 2 (erasable content), retention, legal holds, erasures,
// witnesses and period reports (issue 17). In its own file for size; never edit it once released.
import { type Kysely, type Migration, SqliteAdapter, sql } from 'kysely';

export const migration: Migration = {
    async up(db: Kysely<unknown>) {
      // Entry format version 2 (docs/ledger-format.md §14): a salted commitment to data and
      // extra is hashed in their place, so the content can be erased and the chain still verifies.
      for (const col of ['content_commitment', 'content_salt', 'erased_at', 'erasure_id']) {
        await db.schema.alterTable('log_entries').addColumn(col, 'text').execute();
      }
      // An erased entry has no data: the column becomes nullable.
      if (db.getExecutor().adapter instanceof SqliteAdapter) await sqliteDropNotNull(db, 'log_entries', 'data');
      else await sql`ALTER TABLE log_entries ALTER COLUMN data DROP NOT NULL`.execute(db);

      // Content retention, per company and optionally per event type.
      await db.schema
        .createTable('retention_policies')
        .addColumn('company_id', 'text', (c) => c.primaryKey().references('companies.company_id'))
        .addColumn('content_days', 'integer')
        .addColumn('by_event_type', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('updated_by', 'text', (c) => c.notNull())
        .addColumn('last_run_at', 'text')
        .addColumn('erased_total', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      // Legal holds: nothing in scope is erased until the hold is released.
      await db.schema
        .createTable('legal_holds')
        .addColumn('company_id', 'text', (c) => c.notNull().references('companies.company_id'))
        .addColumn('hold_id', 'text', (c) => c.notNull())
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('case_reference', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('released_at', 'text')
        .addColumn('released_by', 'text')
        .addColumn('release_reason', 'text')
        .addPrimaryKeyConstraint('legal_holds_pk', ['company_id', 'hold_id'])
        .execute();
      // Erasures, by request or by retention: planned, recorded in the ledger, then applied.
      await db.schema
        .createTable('erasures')
        .addColumn('company_id', 'text', (c) => c.notNull().references('companies.company_id'))
        .addColumn('erasure_id', 'text', (c) => c.notNull())
        .addColumn('request_id', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('legal_basis', 'text', (c) => c.notNull())
        .addColumn('requested_by', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('log_ids', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('record_log_id', 'text')
        .addColumn('erased_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('applied_at', 'text')
        .addPrimaryKeyConstraint('erasures_pk', ['company_id', 'erasure_id'])
        .execute();
      await db.schema.createIndex('erasures_status_idx').on('erasures').columns(['company_id', 'status']).execute();

      // Independent witnesses (C2SP tlog-witness): what each witness last cosigned of each
      // company's log, and the cosignatures, kept with the checkpoint they sign.
      await db.schema
        .createTable('witness_state')
        .addColumn('company_id', 'text', (c) => c.notNull().references('companies.company_id'))
        .addColumn('witness', 'text', (c) => c.notNull())
        .addColumn('tree_size', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('refusals', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('last_error', 'text')
        .addColumn('last_error_at', 'text')
        .addPrimaryKeyConstraint('witness_state_pk', ['company_id', 'witness'])
        .execute();
      await db.schema
        .createTable('checkpoint_cosignatures')
        .addColumn('company_id', 'text', (c) => c.notNull().references('companies.company_id'))
        .addColumn('tree_size', 'bigint', (c) => c.notNull())
        .addColumn('witness', 'text', (c) => c.notNull())
        .addColumn('timestamp', 'bigint', (c) => c.notNull())
        .addColumn('line', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('checkpoint_cosignatures_pk', ['company_id', 'tree_size', 'witness'])
        .execute();

      // Period reports for regulators and auditors: the signed JSON, kept as signed.
      await db.schema
        .createTable('compliance_reports')
        .addColumn('company_id', 'text', (c) => c.notNull().references('companies.company_id'))
        .addColumn('report_id', 'text', (c) => c.notNull())
        .addColumn('period_from', 'text', (c) => c.notNull())
        .addColumn('period_to', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('document', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('compliance_reports_pk', ['company_id', 'report_id'])
        .execute();
    },
  };

/**
 * SQLite cannot drop a NOT NULL constraint: the table is rebuilt the way SQLite documents
 * (https://sqlite.org/lang_altertable.html#otheralter): a copy with the new definition, the rows
 * copied, the old table dropped, the copy renamed, and its indexes made again from their own SQL.
 */
async function sqliteDropNotNull(db: Kysely<unknown>, table: string, column: string): Promise<void> {
  const rows = (await sql<{ type: string; sql: string }>`SELECT type, sql FROM sqlite_master WHERE tbl_name = ${table} AND sql IS NOT NULL`.execute(db)).rows;
  const create = rows.find((r) => r.type === 'table');
  if (!create) throw new Error(`no table ${table}`);
  const before = `"${column}" text not null`;
  if (!create.sql.includes(before)) throw new Error(`${table}.${column} is not defined as ${before}`);
  const copy = `${table}_rebuild`;
  const definition = create.sql.replace(before, `"${column}" text`).replace(/^create table "?[a-z_]+"?/i, `CREATE TABLE "${copy}"`);
  await sql.raw(definition).execute(db);
  await sql.raw(`INSERT INTO "${copy}" SELECT * FROM "${table}"`).execute(db);
  await sql.raw(`DROP TABLE "${table}"`).execute(db);
  await sql.raw(`ALTER TABLE "${copy}" RENAME TO "${table}"`).execute(db);
  for (const index of rows.filter((r) => r.type === 'index')) await sql.raw(index.sql).execute(db);
}
