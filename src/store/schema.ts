// Row types of every table, as Kysely sees them. Every table leads with company_id so
// the schema can be distributed by company. Timestamps are fixed-width ISO 8601 UTC
// strings with milliseconds ("2026-01-02T03:04:05.678Z"): identical on both stores,
// sortable as text, and exactly what the ledger hashes.

export interface CompaniesTable {
  company_id: string;
  name: string;
  created_at: string;
}

export type UserRole = 'admin' | 'member';

export interface UsersTable {
  company_id: string;
  user_id: string;
  /** Lower-cased; unique across the service because login is by email alone. */
  email: string;
  password_hash: string;
  role: UserRole;
  created_at: string;
}

export interface AccessTokensTable {
  company_id: string;
  /** SHA-256 hex of the token; the token itself is never stored. */
  token_hash: string;
  user_id: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
}

export type ApiKeyStatus = 'active' | 'revoked';

export interface ApiKeysTable {
  company_id: string;
  key_id: string;
  name: string;
  /** The first characters of the key, shown in listings so people can tell keys apart. */
  key_prefix: string;
  /** SHA-256 hex of the key; the key itself is never stored. */
  key_hash: string;
  rate_limit_per_minute: number;
  status: ApiKeyStatus;
  created_at: string;
  created_by: string;
  revoked_at: string | null;
}

/** One ledger entry. The columns mirror the hashed entry body (docs/ledger-format.md). */
export interface LogEntriesTable {
  company_id: string;
  seq: number;
  log_id: string;
  format_version: number;
  event_type: string;
  /** RFC 8785 canonical JSON text of the data object, exactly as hashed. */
  data: string;
  source: string | null;
  trace_id: string | null;
  session_id: string | null;
  timestamp: string | null;
  span_id: string | null;
  parent_span_id: string | null;
  parent_event_id: string | null;
  root_event_id: string | null;
  agent_id: string | null;
  workflow_id: string | null;
  causality_type: string | null;
  idempotency_key: string | null;
  schema_version: string | null;
  /** Canonical JSON text of unknown top-level fields, or null. */
  extra: string | null;
  created_at: string;
  prev_hash: string;
  hash: string;
  signature: string;
  key_id: string;
}

/** The tip of a company's chain, locked by every append. */
export interface ChainHeadsTable {
  company_id: string;
  last_seq: number;
  last_hash: string;
  last_created_at: string;
}

/**
 * Public halves of the service's signing keys. Service-wide, not per company: the one
 * table without company_id (a reference table on a distributed PostgreSQL).
 */
export interface SigningKeysTable {
  key_id: string;
  algorithm: string;
  /** Raw 32-byte Ed25519 public key, base64. */
  public_key: string;
  active_from: string;
  active_to: string | null;
}

export interface Database {
  companies: CompaniesTable;
  users: UsersTable;
  access_tokens: AccessTokensTable;
  api_keys: ApiKeysTable;
  log_entries: LogEntriesTable;
  chain_heads: ChainHeadsTable;
  signing_keys: SigningKeysTable;
}
