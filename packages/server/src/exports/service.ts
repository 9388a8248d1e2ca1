// Exports and evidence bundles, without HTTP: which entries a request selects, the rules a
// selection must meet (one kind of selection, at most MAX_EVIDENCE_ENTRIES, every entry under a
// signed checkpoint), the bundle, and the trail entry each one leaves. routes/exports.ts parses,
// calls one method, and streams or sends what it gets.
import type { JsonObject } from '@audit-ledger/core';
import { type AdminTrail, type TrailActor } from '../ingestion/recorder.js';
import type { Config } from '../kernel/config.js';
import { DomainError, NotFoundError, NotYetCheckpointedError } from '../kernel/domain-error.js';
import type { LogEntryRow } from '../store/chain.js';
import type { KeyStore } from '../store/keys.js';
import type { LedgerStore } from '../store/ledger.js';
import type { WitnessStore } from '../store/witnesses.js';
import { iso } from '../kernel/time.js';
import { buildEvidence, entriesOf, type EvidenceBundle, MAX_EVIDENCE_ENTRIES } from './formats.js';
import type { AgentKeyStore } from '../store/agent-keys.js';

/** A selection the request gave that no bundle can answer: the field, and what it must be. */
export class SelectionError extends DomainError<'invalid_selection'> {
  constructor(field: string, fieldMessage: string, message: string) {
    super('invalid_selection', message, { field, fieldMessage });
  }
}

export interface ExportQuery {
  format: 'jsonl' | 'csv';
  from?: string | undefined;
  to?: string | undefined;
  trace_id?: string | undefined;
  event_type?: string | undefined;
}

export interface EvidenceQuery {
  trace_id?: string | undefined;
  from_seq?: number | undefined;
  to_seq?: number | undefined;
}

export interface ExportsDeps {
  ledger: LedgerStore;
  signingKeys: KeyStore;
  witnessStore: WitnessStore;
  agentKeys: Pick<AgentKeyStore, 'byIds'>;
  trail: Pick<AdminTrail, 'record'>;
  clock: () => number;
  config: Pick<Config, 'checkpointIntervalMs' | 'ledgerOrigin'>;
}

export class Exports {
  constructor(private readonly deps: ExportsDeps) {}

  /**
   * Records the export in the trail, then gives the entries it selects in seq order, read page by
   * page as they are consumed. The export is the ledger as it stands once its own
   * export.generated entry is appended: a complete export ends with that entry, so a checkpoint
   * taken after it covers it.
   */
  async exportEntries(companyId: string, q: ExportQuery, actor: TrailActor): Promise<AsyncGenerator<LogEntryRow>> {
    const record = await this.deps.trail.record(companyId, 'export.generated', actor, { format: q.format, filter: { ...q } as JsonObject });
    return entriesOf(this.deps.ledger, companyId, {
      trace_id: q.trace_id,
      event_type: q.event_type,
      from: q.from === undefined ? undefined : iso(Date.parse(q.from)),
      to: q.to === undefined ? undefined : iso(Date.parse(q.to)),
      seqBelow: record.seq + 1,
    });
  }

  /** A trace's entries, or a seq range, with inclusion proofs to the latest checkpoint (docs/ledger-format.md §10); recorded in the trail. */
  async evidence(companyId: string, q: EvidenceQuery, actor: TrailActor): Promise<EvidenceBundle> {
    const { ledger, config } = this.deps;
    const selection = this.selection(q);
    const checkpoint = await ledger.latestCheckpoint(companyId);
    const rows: LogEntryRow[] =
      'trace_id' in selection
        ? await ledger.listEntries(companyId, { trace_id: selection.trace_id, order: 'asc', limit: MAX_EVIDENCE_ENTRIES + 1 })
        : await ledger.listEntries(companyId, { afterSeq: selection.from_seq - 1, order: 'asc', limit: selection.to_seq - selection.from_seq + 1 });
    if (rows.length > MAX_EVIDENCE_ENTRIES) throw new SelectionError('/querystring/trace_id', `more than ${MAX_EVIDENCE_ENTRIES} entries`, `The trace has more than ${MAX_EVIDENCE_ENTRIES} entries; bundle it by seq ranges instead`);
    if (rows.length === 0) throw new NotFoundError('trace_id' in selection ? `No entries with trace_id ${selection.trace_id}` : `No entries from seq ${selection.from_seq} to ${selection.to_seq}`);
    if (!checkpoint || (rows[0] as LogEntryRow).seq >= checkpoint.tree_size) throw new NotYetCheckpointedError('None of these entries is', config.checkpointIntervalMs);
    const bundle = await buildEvidence(this.deps, companyId, rows, checkpoint, { selection, generatedAt: iso(this.deps.clock()), keyName: config.ledgerOrigin });
    await this.deps.trail.record(companyId, 'evidence.generated', actor, { selection: { ...selection }, checkpoint_tree_size: checkpoint.tree_size, entries: bundle.entries.length });
    return bundle;
  }

  /** Either a trace, or a seq range of at most MAX_EVIDENCE_ENTRIES. */
  private selection(q: EvidenceQuery): EvidenceBundle['selection'] {
    const byTrace = q.trace_id !== undefined;
    const byRange = q.from_seq !== undefined || q.to_seq !== undefined;
    if (byTrace === byRange || (byRange && (q.from_seq === undefined || q.to_seq === undefined))) throw new SelectionError('/querystring', 'needs trace_id, or from_seq and to_seq', 'Give either trace_id, or both from_seq and to_seq');
    if (q.trace_id !== undefined) return { trace_id: q.trace_id };
    const from = q.from_seq as number;
    const to = q.to_seq as number;
    if (to < from) throw new SelectionError('/querystring/to_seq', 'must be at least from_seq', 'to_seq must not be below from_seq');
    if (to - from + 1 > MAX_EVIDENCE_ENTRIES) throw new SelectionError('/querystring/to_seq', `at most ${MAX_EVIDENCE_ENTRIES} entries from from_seq`, `A bundle holds at most ${MAX_EVIDENCE_ENTRIES} entries; narrow the range`);
    return { from_seq: from, to_seq: to };
  }
}
