// Row types of the compliance tables (migration 0009: retention, legal holds, erasures, witness
// state and cosignatures, period reports), as Kysely sees them; schema.ts puts them in the
// Database with the rest. The same conventions: company_id first, times as fixed-width ISO 8601 UTC.

/** A company's content retention (docs/compliance.md): content older than the days is erased. */
export interface RetentionPoliciesTable {
  company_id: string;
  /** Days content is kept; null: kept forever (unless an event type says otherwise). */
  content_days: number | null;
  /** JSON object {event_type: days}, overriding content_days for those types. */
  by_event_type: string;
  updated_at: string;
  updated_by: string;
  last_run_at: string | null;
  erased_total: number;
}

export interface LegalHoldsTable {
  company_id: string;
  hold_id: string;
  /** JSON: {trace_id} | {session_id} | {agent_id} | {from?, to?} | {all: true}. */
  scope: string;
  reason: string;
  case_reference: string | null;
  created_at: string;
  created_by: string;
  released_at: string | null;
  released_by: string | null;
  release_reason: string | null;
}

export type ErasureKind = 'request' | 'retention';
/** planned: chosen, not yet in the ledger; recorded: its compliance.erasure entry is committed; applied: the content is gone. */
export type ErasureStatus = 'planned' | 'recorded' | 'applied';

export interface ErasuresTable {
  company_id: string;
  erasure_id: string;
  /** The request (or retention run) it belongs to: a large one is recorded in several erasures of at most 1000 entries. */
  request_id: string;
  kind: ErasureKind;
  legal_basis: string;
  requested_by: string;
  created_at: string;
  /** JSON array of the log_ids erased. */
  log_ids: string;
  status: ErasureStatus;
  /** The log_id of the compliance.erasure entry; null while planned. */
  record_log_id: string | null;
  erased_count: number;
  applied_at: string | null;
}

/** What one witness last cosigned of one company's log. */
export interface WitnessStateTable {
  company_id: string;
  witness: string;
  tree_size: number;
  updated_at: string;
  /** Checkpoints the witness refused as inconsistent with what it cosigned before. */
  refusals: number;
  last_error: string | null;
  last_error_at: string | null;
}

/** A witness's cosignature of a checkpoint: the note signature line, exactly as it answered. */
export interface CheckpointCosignaturesTable {
  company_id: string;
  tree_size: number;
  witness: string;
  /** POSIX seconds, from the cosignature. */
  timestamp: number;
  line: string;
}

/** An RFC 3161 timestamp of a checkpoint (docs/ledger-format.md §19): the TSA's token over SHA-256 of the checkpoint note. */
export interface CheckpointTimestampsTable {
  company_id: string;
  tree_size: number;
  /** The TSA's URL. */
  tsa: string;
  /** The TimeStampToken's DER, base64. */
  token: string;
  /** The token's genTime. */
  gen_time: string;
  created_at: string;
}

/** A period report: the signed JSON document, exactly as signed. */
export interface ComplianceReportsTable {
  company_id: string;
  report_id: string;
  period_from: string;
  period_to: string;
  created_at: string;
  /** JSON of the actor who asked for it. */
  created_by: string;
  document: string;
}

/** A company whose stored ledger is behind a checkpoint seen outside it: appends refused until an operator decides (docs/operations.md, "Continuity"). */
export interface ContinuityHoldsTable {
  company_id: string;
  /** The size of the checkpoint seen outside. */
  seen_size: number;
  /** The stored ledger's size when the hold was made. */
  stored_size: number;
  /** Where it was seen: this service's checkpoint marks, or a witness. */
  source: string;
  /** The signed note, when the source had it. */
  note: string | null;
  detected_at: string;
  decision: 'supplied' | 'loss_accepted' | 'restored' | null;
  reason: string | null;
  decided_at: string | null;
  recorded_at: string | null;
}
