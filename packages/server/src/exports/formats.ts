// Streaming exports and evidence bundles. Exports page through the store by seq and
// yield text as the HTTP stream asks for it, so memory stays flat however large the range.
import { type AgentKey, type KeyTransition, publicKeyPem, rawKeyFromBase64, recordToEntry, verifierKey } from '@audit-ledger/core';
import { LOG_ENTRY_COLUMNS } from '../store/columns.js';
import type { CheckpointRow, LogEntryRow } from '../store/chain.js';
import type { KeyStore, SigningKeyRow } from '../store/keys.js';
import type { EntryFilter, LedgerStore } from '../store/ledger.js';
import type { WitnessStore } from '../store/witnesses.js';
import { type CheckpointView, cosignedCheckpointView, type InclusionView, inclusionViews, timestampView, type TimestampView } from '../ledger/proofs.js';
import type { AgentKeyStore } from '../store/agent-keys.js';

const PAGE = 1000;

/** Every entry matching the filter, in seq order, a page at a time. */
export async function* entriesOf(ledger: LedgerStore, companyId: string, filter: Omit<EntryFilter, 'order' | 'limit' | 'afterSeq'>): AsyncGenerator<LogEntryRow> {
  let afterSeq: number | undefined;
  for (;;) {
    const rows = await ledger.listEntries(companyId, { ...filter, order: 'asc', limit: PAGE, afterSeq });
    yield* rows;
    if (rows.length < PAGE) return;
    afterSeq = (rows[rows.length - 1] as LogEntryRow).seq;
  }
}

/** JSON Lines: one entry per line, every ledger field, data and extra as JSON, plus content_hash (= hash) and idempotency_conflict_of (docs/ledger-format.md §10). */
export async function* jsonLines(rows: AsyncIterable<LogEntryRow>): AsyncGenerator<string> {
  let chunk = '';
  for await (const row of rows) {
    const entry = recordToEntry(row);
    chunk += `${JSON.stringify({ ...entry, content_hash: entry.hash })}\n`;
    if (chunk.length > 64 * 1024) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}

/**
 * RFC 4180 field: quoted when it holds a comma, quote or line break. A null is an empty field;
 * an empty string is "" (so the two stay apart). A text that a spreadsheet would run as a
 * formula (first character = + - @, tab or carriage return) gets a leading apostrophe (OWASP
 * "CSV injection"): the CSV is for reading; JSON Lines is the verifiable, exact form.
 */
export function csvField(v: string | number | null): string {
  if (v === null) return '';
  if (typeof v === 'number') return String(v);
  const s = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return s === '' || /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** CSV with a header row; data and extra are their canonical JSON text; formula-like cells neutralised (csvField). */
export async function* csvLines(rows: AsyncIterable<LogEntryRow>): AsyncGenerator<string> {
  let chunk = `${LOG_ENTRY_COLUMNS.join(',')}\r\n`;
  for await (const row of rows) {
    chunk += `${LOG_ENTRY_COLUMNS.map((c) => csvField(row[c])).join(',')}\r\n`;
    if (chunk.length > 64 * 1024) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}

export const EVIDENCE_FORMAT = 'audit-ledger/evidence-bundle/v1';
/** Most entries one bundle holds. */
export const MAX_EVIDENCE_ENTRIES = 10_000;

export type PublicKeyView = {
  key_id: string;
  algorithm: string;
  public_key: string;
  public_key_pem: string;
  note_verifier_key: string;
  active_from: string;
  active_to: string | null;
};

export function publicKeyView(k: SigningKeyRow, keyName: string): PublicKeyView {
  const raw = rawKeyFromBase64(k.public_key);
  return {
    key_id: k.key_id,
    algorithm: k.algorithm,
    public_key: k.public_key,
    public_key_pem: publicKeyPem(raw),
    note_verifier_key: verifierKey(keyName, raw),
    active_from: k.active_from,
    active_to: k.active_to,
  };
}

export interface EvidenceBundle {
  format: typeof EVIDENCE_FORMAT;
  company_id: string;
  generated_at: string;
  selection: { trace_id: string } | { from_seq: number; to_seq: number };
  checkpoint: CheckpointView;
  public_keys: PublicKeyView[];
  /** Every key rotation, oldest first: each new key endorsed by the key before it (docs/ledger-format.md §11). */
  key_transitions: KeyTransition[];
  /** Matching entries newer than the checkpoint, left out because nothing signed covers them yet. */
  entries_after_checkpoint: number;
  entries: Array<{ entry: ReturnType<typeof recordToEntry>; inclusion_proof: Omit<InclusionView, 'root_hash'> }>;
  /** The compliance.erasure entries the erased entries name, proven the same way (docs/ledger-format.md §14). */
  erasure_records: Array<{ entry: ReturnType<typeof recordToEntry>; inclusion_proof: Omit<InclusionView, 'root_hash'> }>;
  /** The RFC 3161 timestamp of the newest timestamped checkpoint at or below this one, with a consistency proof to it (docs/ledger-format.md §19); null when there is none. */
  timestamp: TimestampView | null;
  /** The agent key register's entries for the agent keys the entries name (docs/ledger-format.md §20); empty when no agent signed any. */
  agent_keys: AgentKey[];
}

/** Builds a bundle of these rows (seq order) proven against one checkpoint. */
export async function buildEvidence(
  stores: { ledger: LedgerStore; signingKeys: KeyStore; witnessStore: WitnessStore; agentKeys: Pick<AgentKeyStore, 'byIds'> },
  companyId: string,
  rows: LogEntryRow[],
  checkpoint: CheckpointRow,
  meta: { selection: EvidenceBundle['selection']; generatedAt: string; keyName: string },
): Promise<EvidenceBundle> {
  const covered = rows.filter((r) => r.seq < checkpoint.tree_size);
  const recordIds = [...new Set(covered.flatMap((r) => (r.erasure_id ? [r.erasure_id] : [])))];
  const records = (recordIds.length ? await stores.ledger.getEntriesByLogId(companyId, recordIds) : []).filter((r) => r.seq < checkpoint.tree_size);
  const proven = [...covered, ...records];
  const proofs = await inclusionViews(
    stores.ledger,
    companyId,
    proven.map((r) => r.seq),
    checkpoint.tree_size,
  );
  const withProof = (r: LogEntryRow, i: number) => {
    const { root_hash: _root, ...proof } = proofs[i] as InclusionView;
    return { entry: recordToEntry(r), inclusion_proof: proof };
  };
  return {
    format: EVIDENCE_FORMAT,
    company_id: companyId,
    generated_at: meta.generatedAt,
    selection: meta.selection,
    checkpoint: cosignedCheckpointView(checkpoint, await stores.witnessStore.cosignatures(companyId, checkpoint.tree_size)),
    public_keys: (await stores.signingKeys.list()).map((k) => publicKeyView(k, meta.keyName)),
    key_transitions: await stores.signingKeys.transitions(),
    entries_after_checkpoint: rows.length - covered.length,
    entries: covered.map((r, i) => withProof(r, i)),
    erasure_records: records.map((r, i) => withProof(r, covered.length + i)),
    timestamp: await timestampView(stores, companyId, checkpoint.tree_size),
    agent_keys: await agentRegisterOf(stores.agentKeys, companyId, covered),
  };
}

/** The register's entries for the agent keys these rows name, as the core reads them. */
async function agentRegisterOf(store: Pick<AgentKeyStore, 'byIds'>, companyId: string, rows: LogEntryRow[]): Promise<AgentKey[]> {
  const ids = [...new Set(rows.flatMap((r) => (r.agent_key_id ? [r.agent_key_id] : [])))];
  return (await store.byIds(companyId, ids)).map((k) => ({ key_id: k.key_id, agent_id: k.agent_id, public_key: k.public_key, active_from: k.active_from, active_to: k.active_to })).sort((a, b) => a.key_id.localeCompare(b.key_id));
}
