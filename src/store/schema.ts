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

export interface Database {
  companies: CompaniesTable;
  users: UsersTable;
  access_tokens: AccessTokensTable;
  api_keys: ApiKeysTable;
}
