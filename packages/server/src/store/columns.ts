import type { LogEntriesTable } from './schema.js';

/** Entries the service writes itself (the administrators' trail, HITL rejections) carry a `source` under this prefix; clients may not (ingestion/input.ts). */
export const RESERVED_SOURCE_PREFIX = 'audit-ledger/';

/** Every column of log_entries, in table order (typed so a missing column fails to compile). */
const columns: { [K in keyof LogEntriesTable]: true } = {
  company_id: true,
  seq: true,
  log_id: true,
  format_version: true,
  event_type: true,
  data: true,
  source: true,
  trace_id: true,
  session_id: true,
  timestamp: true,
  span_id: true,
  parent_span_id: true,
  parent_event_id: true,
  root_event_id: true,
  agent_id: true,
  workflow_id: true,
  causality_type: true,
  idempotency_key: true,
  schema_version: true,
  extra: true,
  created_at: true,
  prev_hash: true,
  hash: true,
  signature: true,
  key_id: true,
  idempotency_conflict_of: true,
  content_commitment: true,
  content_salt: true,
  erased_at: true,
  erasure_id: true,
  event_id: true,
  links: true,
  agent_key_id: true,
  agent_signature: true,
};
export const LOG_ENTRY_COLUMNS = Object.keys(columns) as Array<keyof LogEntriesTable>;
