// Row types of the log stream tables (migration 0013); schema.ts puts them in the Database.

export type StreamStatus = 'active' | 'paused' | 'failed';

export interface LogStreamsTable {
  company_id: string;
  stream_id: string;
  name: string;
  destination_type: string;
  destination: string;
  secret_encrypted: string | null;
  format: string;
  filter: string;
  status: StreamStatus;
  status_reason: string | null;
  cursor_seq: number;
  pending_to_seq: number | null;
  pending_checkpoint_size: number | null;
  last_checkpoint_size: number | null;
  last_checkpoint_root: string | null;
  attempts: number;
  next_attempt_at: string;
  failing_since: string | null;
  last_error: string | null;
  retry_window_seconds: number;
  lease_owner: string | null;
  lease_until: string | null;
  delivered_batches: number;
  delivered_entries: number;
  last_delivered_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface LogStreamBatchesTable {
  company_id: string;
  stream_id: string;
  batch_id: string;
  from_seq: number;
  to_seq: number;
  entry_count: number;
  checkpoint_size: number;
  attempts: number;
  delivered_at: string;
}
