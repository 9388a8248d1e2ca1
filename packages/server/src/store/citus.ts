// The PostgreSQL store on a Citus coordinator (issue 45): detected by the extension in the
// database, and the schema distributed after the migrations (Store.migrate). Every table of a
// company's data is keyed by company_id first, so each is distributed by it and co-located with
// the others (Citus's default co-location for one distribution column type): a company's chain,
// tree, checkpoints and everything else live on one shard. The tables that are not a company's
// (the service's keys) or that need keys unique across companies (emails, credential hashes,
// company names, SSO identities) are reference tables, copied to every node. The migration
// bookkeeping stays on the coordinator. Distributing is idempotent: a table already distributed
// is left as it is. LEDGER_STORE says whether to (Store.migrate); what runs on one shard and what
// looks across companies is docs/scaling.md's.
import { type Kysely, sql } from 'kysely';

/** Service-wide tables, or tables with keys unique across companies: reference tables on Citus. */
export const CITUS_REFERENCE_TABLES: readonly string[] = ['companies', 'users', 'api_keys', 'access_tokens', 'signing_keys', 'key_transitions', 'sso_identities', 'sso_flow_uses'];

/** Whether the database is a Citus coordinator (the extension is there). */
export async function isCitus(db: Kysely<unknown>): Promise<boolean> {
  const r = await sql<{ n: string }>`SELECT count(*) AS n FROM pg_extension WHERE extname = 'citus'`.execute(db);
  return Number(r.rows[0]?.n ?? 0) > 0;
}

/** Distributes what is not yet distributed; answers the tables it distributed and made reference tables. */
export async function distributeSchema(db: Kysely<unknown>): Promise<{ distributed: string[]; reference: string[] }> {
  const tables = (
    await sql<{ table_name: string; has_company: boolean }>`
      SELECT t.table_name, EXISTS (SELECT 1 FROM information_schema.columns c WHERE c.table_schema = t.table_schema AND c.table_name = t.table_name AND c.column_name = 'company_id') AS has_company
      FROM information_schema.tables t WHERE t.table_schema = current_schema() AND t.table_type = 'BASE TABLE' ORDER BY t.table_name`.execute(db)
  ).rows;
  const done = new Set((await sql<{ name: string }>`SELECT logicalrelid::regclass::text AS name FROM pg_dist_partition`.execute(db)).rows.map((r) => r.name));
  const out = { distributed: [] as string[], reference: [] as string[] };
  // Reference tables first: distributed tables' foreign keys may point at them.
  for (const t of tables.filter((x) => CITUS_REFERENCE_TABLES.includes(x.table_name) && !done.has(x.table_name))) {
    await sql`SELECT create_reference_table(${t.table_name})`.execute(db);
    out.reference.push(t.table_name);
  }
  for (const t of tables.filter((x) => x.has_company && !CITUS_REFERENCE_TABLES.includes(x.table_name) && !done.has(x.table_name))) {
    await sql`SELECT create_distributed_table(${t.table_name}, 'company_id')`.execute(db);
    out.distributed.push(t.table_name);
  }
  return out;
}
