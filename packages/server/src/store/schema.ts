// Row types of every table, as Kysely sees them. Every table leads with company_id so
// the schema can be distributed by company. Timestamps are fixed-width ISO 8601 UTC
// strings with milliseconds ("2026-01-02T03:04:05.678Z"): identical on both stores,
// sortable as text, and exactly what the ledger hashes. The compliance tables are in
// schema-compliance.ts.
import type { ColumnType } from 'kysely';
import type { CheckpointRecord, ViolationKind } from '@audit-ledger/core';
import type { ApprovalsTable, ApprovalTeamsTable, GovernanceChecksTable, IncidentNotesTable, IncidentReportsTable, IncidentsTable, PolicyVersionsTable } from './schema-governance.js';
import type { LogStreamBatchesTable, LogStreamsTable } from './schema-streams.js';
import type { CheckpointCosignaturesTable, CheckpointTimestampsTable, ComplianceReportsTable, ErasuresTable, LegalHoldsTable, RetentionPoliciesTable, WitnessStateTable, ContinuityHoldsTable } from './schema-compliance.js';

export type * from './schema-compliance.js';
export type * from './schema-governance.js';
export type * from './schema-streams.js';

export interface CompaniesTable {
  company_id: string;
  name: string;
  created_at: string;
  /** 1: the company's tlog-tiles API is public (docs/transparency.md); 0 by default (set only by setTlogPublic). */
  tlog_public: ColumnType<number, number | undefined, number>;
}

/**
 * admin: everything. reviewer: reads, replays, HITL rejections (was `member`). auditor:
 * read-only (logs, verification, proofs, exports, replays and their analyses, integrity).
 */
export type UserRole = 'admin' | 'reviewer' | 'auditor';
export const USER_ROLES: readonly UserRole[] = ['admin', 'reviewer', 'auditor'];

export interface UsersTable {
  company_id: string;
  user_id: string;
  /** Lower-cased; unique across the service because login is by email alone. */
  email: string;
  password_hash: string;
  role: UserRole;
  created_at: string;
  /** Set when an admin disabled the user: no login, and every token stops working. */
  disabled_at: string | null;
  /** 1 after an invitation or reset with a one-time password: the user must set their own before anything else. */
  password_change_required: number;
  /**
   * How a user created outside the service came to be ('cli': `users create`; 'bootstrap': the
   * first start), until the service has appended its user.created trail entry; then null.
   */
  trail_pending: string | null;
}

export interface AccessTokensTable {
  company_id: string;
  /** SHA-256 hex of the token; the token itself is never stored. */
  token_hash: string;
  user_id: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
  /** 1 for a console session (sent only as the HttpOnly cookie, CSRF-checked); 0 for a bearer token. */
  session: number;
  /** A session's idle deadline, moved forward as it is used; null for a bearer token. */
  idle_expires_at: string | null;
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
  /**
   * RFC 8785 canonical JSON text of the data object, exactly as hashed (format version 1) or as
   * committed to (version 2). null once a version 2 entry's content is erased.
   */
  data: string | null;
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
  /**
   * Not hashed: for an entry whose body idempotency_key an earlier entry with different content
   * already used, that entry's log_id (docs/integrations.md, "Idempotency keys"); else null.
   * Derivable from hashed fields alone (the earliest entry with the key is the original).
   */
  idempotency_conflict_of: string | null;
  /** Format version 2: hex SHA-256 commitment to data and extra, hashed in their place; null in version 1. */
  content_commitment: string | null;
  /** Format version 2: base64 of the commitment's 32-byte salt (not hashed); null in version 1 and once erased. */
  content_salt: string | null;
  /** When the content was erased (not hashed); null while it is there. */
  erased_at: string | null;
  /** The log_id of the erasure record (compliance.erasure) that erased it; null while the content is there. */
  erasure_id: string | null;
  /** Format version 3: the client's own event id (hashed, kept on erasure); null in versions 1 and 2. */
  event_id: string | null;
  /** Format version 3: canonical JSON of the links the content names (hashed, kept on erasure), or null. */
  links: string | null;
  /** Format version 4: the key_id of the agent key that signed the event (hashed); null otherwise. */
  agent_key_id: string | null;
  /** Format version 4: the agent's Ed25519 signature over the event, base64 (hashed); null otherwise. */
  agent_signature: string | null;
}

/** A company's agent key register (docs/ledger-format.md §20): agents' own Ed25519 keys, registered by an admin. */
export interface AgentKeysTable {
  company_id: string;
  key_id: string;
  agent_id: string;
  /** Raw 32-byte Ed25519 public key, base64. */
  public_key: string;
  active_from: string;
  /** Revoked or replaced from then on; null while active. */
  active_to: string | null;
  /** Why it stopped: the revocation's reason, or "replaced by <key_id>". */
  ended_reason: string | null;
  registered_at: string;
  /** The admin's user id. */
  registered_by: string;
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
  /** A key made by online rotation: its PKCS#8 PEM sealed with the secrets key; null for key files. */
  private_key_encrypted: string | null;
  /** A key kept in a PKCS#11 token: 'pkcs11:<label>' (every process opens it there); null otherwise. */
  custody: string | null;
}

/** Key transition statements (core/key-transition.ts), service-wide like signing_keys. */
export interface KeyTransitionsTable {
  new_key_id: string;
  old_key_id: string;
  old_public_key: string;
  new_public_key: string;
  created_at: string;
  statement: string;
  old_signature: string;
  new_signature: string;
}

/** One stored Merkle hash (src/core/merkle.ts storedHashIndex order), lowercase hex. */
export interface MerkleHashesTable {
  company_id: string;
  idx: number;
  hash: string;
}

/** A signed checkpoint (C2SP signed note), kept forever: exactly the core's CheckpointRecord. */
export type CheckpointsTable = CheckpointRecord;

/** The background verifier's progress for one company. */
export interface IntegrityStateTable {
  company_id: string;
  /** Entries [0, verified_size) have been verified. */
  verified_size: number;
  /** Hash of entry verified_size - 1 (64 zeros when none). */
  verified_hash: string;
  /** JSON array of the hex hashes of the tree edge rebuilt from the verified entries (null: it cannot be; {edge, gap_end} inside a gap, core's ScanState). */
  verified_edge: string;
  /** Checkpoints up to this tree size have been checked. */
  checkpoint_size: number;
  last_verified_at: string | null;
  lease_owner: string | null;
  lease_until: string | null;
}

/** The core's one vocabulary (a full scan finds only the stored kinds: no unknown_key or beyond_head). */
export type { ViolationKind };

export interface IntegrityViolationsTable {
  company_id: string;
  violation_id: string;
  seq: number | null;
  log_id: string | null;
  kind: ViolationKind;
  detail: string;
  detected_at: string;
  /** The full verification that found it; null for the background verifier. */
  job_id: string | null;
}

export type JobStatus = 'queued' | 'running' | 'completed' | 'failed';

export interface VerificationJobsTable {
  company_id: string;
  job_id: string;
  status: JobStatus;
  /** JSON of the options the job was started with. */
  options: string;
  requested_at: string;
  started_at: string | null;
  finished_at: string | null;
  lease_owner: string | null;
  lease_until: string | null;
  /** JSON of the finished report. */
  report: string | null;
}

/** A forensic replay session, pinned to the chain as it was at creation. */
export interface ReplaySessionsTable {
  company_id: string;
  session_id: string;
  trace_id: string;
  token_id: string | null;
  /** JSON text of the client's metadata object. */
  metadata: string;
  created_at: string;
  event_count: number;
  /** Entries with seq < tree_size existed at creation; the session sees only those. */
  tree_size: number;
  /** When its root cause was first reported as an anomaly event (once per session). */
  anomaly_reported_at: string | null;
  /** The root cause type it reported then (STALE_CONTEXT, …); null before (and for sessions reported before migration 0010). */
  anomaly_type: string | null;
}

export interface UsageDailyTable {
  company_id: string;
  /** UTC day, YYYY-MM-DD. */
  day: string;
  /** The API key; '' for requests made with user tokens. */
  key_id: string;
  requests: number;
  events: number;
  rate_limited: number;
  /** Bytes of event data (data and extra JSON) appended. */
  bytes: number;
}

export interface WebhookEndpointsTable {
  company_id: string;
  endpoint_id: string;
  url: string;
  description: string | null;
  /** JSON array of subscribed event types. */
  event_types: string;
  /** The Standard Webhooks secret, AES-256-GCM encrypted (src/store/secret-box.ts). */
  secret_encrypted: string;
  /** 1 or 0. */
  enabled: number;
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookEventsTable {
  company_id: string;
  event_id: string;
  type: string;
  created_at: string;
  /** JSON object. */
  data: string;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookDeliveriesTable {
  company_id: string;
  delivery_id: string;
  event_id: string;
  endpoint_id: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: string;
  /** Set while a worker holds the delivery; a lease that ran out means its worker died. */
  lease_until: string | null;
  created_at: string;
  finished_at: string | null;
}

export interface WebhookAttemptsTable {
  company_id: string;
  attempt_id: string;
  delivery_id: string;
  endpoint_id: string;
  event_id: string;
  attempted_at: string;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  /** delivered, retry, failed (gave up) or disabled (410). */
  result: string;
}

/** The provider identity an SSO user is bound to (migration 0021). */
export interface SsoIdentitiesTable {
  company_id: string;
  issuer: string;
  subject: string;
  user_id: string;
  linked_at: string;
}

/**
 * A single sign-on flow finished once (auth/sso.ts): the SHA-256 of its state. Service-wide like
 * the signing keys (a flow belongs to no company until it ends); kept for twice the flow's life.
 */
export interface SsoFlowUsesTable {
  state_hash: string;
  used_at: string;
}

export interface Database {
  companies: CompaniesTable;
  users: UsersTable;
  access_tokens: AccessTokensTable;
  api_keys: ApiKeysTable;
  log_entries: LogEntriesTable;
  chain_heads: ChainHeadsTable;
  signing_keys: SigningKeysTable;
  key_transitions: KeyTransitionsTable;
  merkle_hashes: MerkleHashesTable;
  checkpoints: CheckpointsTable;
  integrity_state: IntegrityStateTable;
  integrity_violations: IntegrityViolationsTable;
  verification_jobs: VerificationJobsTable;
  replay_sessions: ReplaySessionsTable;
  usage_daily: UsageDailyTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  retention_policies: RetentionPoliciesTable;
  legal_holds: LegalHoldsTable;
  erasures: ErasuresTable;
  witness_state: WitnessStateTable;
  checkpoint_cosignatures: CheckpointCosignaturesTable;
  checkpoint_timestamps: CheckpointTimestampsTable;
  compliance_reports: ComplianceReportsTable;
  approvals: ApprovalsTable;
  approval_teams: ApprovalTeamsTable;
  governance_checks: GovernanceChecksTable;
  policy_versions: PolicyVersionsTable;
  incidents: IncidentsTable;
  incident_notes: IncidentNotesTable;
  incident_reports: IncidentReportsTable;
  log_streams: LogStreamsTable;
  log_stream_batches: LogStreamBatchesTable;
  agent_keys: AgentKeysTable;
  continuity_holds: ContinuityHoldsTable;
  sso_identities: SsoIdentitiesTable;
  sso_flow_uses: SsoFlowUsesTable;
}
