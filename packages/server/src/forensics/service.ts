// Replay sessions over the store: create one pinned to the chain as it is now, load its
// events (verifying each), and answer timeline, graph, staleness and root cause from them.
import { checkEntrySignature, checkpointProblems, checkRecordAlone, type EntryAlone, type EntryCheckCode, entryLeafHash, fromHex, type Hash, type JsonObject, recordToEntry, rootWithLeaves, storedHashIndex, type Subtree, toHex } from '@audit-ledger/core';
import { DomainError, NotFoundError } from '../kernel/domain-error.js';
import type { EventSink } from '../kernel/events.js';
import { entriesOf } from '../exports/formats.js';
import type { Keyring } from '../ledger/keyring.js';
import { uuidv7 } from '../ledger/uuidv7.js';
import { treeReader } from '../ledger/proofs.js';
import type { LogEntryRow } from '../store/chain.js';
import type { ForensicsStore, ReplaySession } from '../store/forensics.js';
import type { LedgerStore } from '../store/ledger.js';
import { iso } from '../kernel/time.js';
import type { DetectedCause } from '../governance/incidents.js';
import { buildGraph, type CausalGraph } from './graph.js';
import { type RootCause, rootCause } from './rootcause.js';
import { assessStaleness, type MaxAgeDefaults, type StalenessReport } from './staleness.js';
import { type TimelineItem, timeline } from './timeline.js';
import { buildTrace, type Trace, type TraceEvent } from './trace.js';

export interface SessionView {
  id: string;
  company_id: string;
  trace_id: string;
  token_id: string | null;
  metadata: JsonObject;
  created_at: string;
  event_count: number;
  tree_size: number;
}

/** A replay session was asked for a trace with no entries. */
export class TraceNotFoundError extends DomainError<'trace_not_found'> {
  constructor(traceId: string) {
    super('trace_not_found', `No events with trace_id ${traceId}`, { traceId });
  }
}

/**
 * Entries not covered by a checkpoint yet are checked by signature (~100 µs each). A
 * verdict is a pure function of (key, hash, signature), so it is remembered: a changed
 * entry changes the triple and is checked afresh. Bounded; the oldest verdicts go first (each
 * Forensics instance keeps its own: no module state).
 */
const MAX_REMEMBERED = 200_000;
/** An event's integrity problems as the replay answers name them. */
const PROBLEM_WORDS: Record<EntryCheckCode, string> = {
  entry_malformed: 'hash mismatch',
  hash_mismatch: 'hash mismatch',
  content_mismatch: 'content mismatch',
  unknown_key: 'bad signature',
  bad_signature: 'bad signature',
  key_not_active: 'bad signature',
};

export interface ForensicsDeps {
  ledger: LedgerStore;
  forensicsStore: ForensicsStore;
  keyring: Keyring;
  events: EventSink;
  clock: () => number;
  /** The checkpoint key name (LEDGER_ORIGIN). */
  ledgerOrigin: string;
  maxAgeDefaults: MaxAgeDefaults;
}

export class Forensics {
  private readonly ledger: LedgerStore;
  private readonly forensicsStore: ForensicsStore;
  private readonly keyring: Keyring;
  private readonly opts: ForensicsDeps;
  /** (key_id, hash, signature) → whether the signature held: remembered per service, bounded (MAX_REMEMBERED). */
  private readonly signatureVerdicts = new Map<string, boolean>();

  constructor(deps: ForensicsDeps) {
    this.ledger = deps.ledger;
    this.forensicsStore = deps.forensicsStore;
    this.keyring = deps.keyring;
    this.opts = deps;
  }

  view(s: ReplaySession): SessionView {
    return {
      id: s.session_id,
      company_id: s.company_id,
      trace_id: s.trace_id,
      token_id: s.token_id,
      metadata: JSON.parse(s.metadata) as JsonObject,
      created_at: s.created_at,
      event_count: s.event_count,
      tree_size: s.tree_size,
    };
  }

  /** Pins a session to the chain as it is now; throws TraceNotFoundError for a trace with no entries. */
  /** The company's replay session (another company's id is not found). */
  async session(companyId: string, sessionId: string): Promise<ReplaySession> {
    const s = await this.forensicsStore.getSession(companyId, sessionId);
    if (!s) throw new NotFoundError(`No replay session ${sessionId}`);
    return s;
  }

  /** A session and its trace as pinned, for the four analyses. */
  async sessionTrace(companyId: string, sessionId: string): Promise<{ s: ReplaySession; trace: Trace }> {
    const s = await this.session(companyId, sessionId);
    return { s, trace: await this.loadTrace(s) };
  }

  /** Replay sessions, newest first (before: a session id of the previous page). */
  sessions(companyId: string, f: { traceId?: string | undefined; before?: string | undefined; limit: number }): Promise<ReplaySession[]> {
    return this.forensicsStore.listSessions(companyId, f);
  }

  /** The company's traces, most recently active first (beforeSeq: the previous page's last). */
  traces(companyId: string, f: { beforeSeq?: number | undefined; limit: number }) {
    return this.forensicsStore.traceSummaries(companyId, f);
  }

  async createSession(companyId: string, input: { trace_id: string; token_id?: string; metadata: JsonObject }): Promise<SessionView> {
    const head = await this.ledger.getChainHead(companyId);
    const treeSize = head ? head.lastSeq + 1 : 0;
    const count = treeSize === 0 ? 0 : await this.forensicsStore.countTraceEntries(companyId, input.trace_id, treeSize);
    if (count === 0) throw new TraceNotFoundError(input.trace_id);
    const now = this.opts.clock();
    const session: ReplaySession = {
      company_id: companyId,
      session_id: uuidv7(now),
      trace_id: input.trace_id,
      token_id: input.token_id ?? null,
      metadata: JSON.stringify(input.metadata),
      created_at: iso(now),
      event_count: count,
      tree_size: treeSize,
      anomaly_reported_at: null,
      anomaly_type: null,
    };
    await this.forensicsStore.insertSession(session);
    return this.view(session);
  }

  /**
   * The session's events (seq below its tree_size), each verified: its hash recomputed, and
   * its authenticity proven either under the latest signed checkpoint (one multi-leaf
   * Merkle check for all of them: O(k log n) hashing and one signature) or, where that
   * cannot be done, by its own signature.
   */
  async loadTrace(s: ReplaySession): Promise<Trace> {
    const rows: LogEntryRow[] = [];
    for await (const row of entriesOf(this.ledger, s.company_id, { trace_id: s.trace_id, seqBelow: s.tree_size })) rows.push(row);
    // Each event's own checks once (hash from the stored text, content); the signature below, only where needed.
    const own = rows.map((row) => checkRecordAlone(row, undefined, { signature: false }));
    const proven = await this.provenUnderCheckpoint(s.company_id, rows, own.map((c) => c.hash as string));
    const events: TraceEvent[] = [];
    for (const [i, row] of rows.entries()) events.push(await this.toEvent(row, own[i] as EntryAlone, proven.has(row.seq)));
    return buildTrace(events);
  }

  /** Seqs of these rows whose recomputed hashes rebuild, with stored hashes for the rest of the tree, the latest checkpoint's signed root. */
  private async provenUnderCheckpoint(companyId: string, rows: LogEntryRow[], hashes: string[]): Promise<Set<number>> {
    const none = new Set<number>();
    if (rows.some((r, i) => hashes[i] !== r.hash)) return none; // the check would fail anyway
    const cp = await this.ledger.latestCheckpoint(companyId);
    if (!cp || checkpointProblems(cp, this.opts.ledgerOrigin, await this.keyring.publicKey(cp.key_id)).length > 0) return none;
    const known = new Map<number, Hash>();
    rows.forEach((r, i) => r.seq < cp.tree_size && known.set(r.seq, entryLeafHash(hashes[i] as string)));
    if (known.size === 0) return none;
    const need: Subtree[] = [];
    rootWithLeaves(cp.tree_size, known, undefined, need);
    const stored = await treeReader(this.ledger, companyId)([...new Set(need.map((x) => storedHashIndex(x.level, x.index)))]);
    let root: Hash;
    try {
      root = rootWithLeaves(cp.tree_size, known, (x) => {
        const h = stored.get(storedHashIndex(x.level, x.index));
        if (h === undefined) throw new Error('missing stored hash');
        return fromHex(h);
      });
    } catch {
      return none;
    }
    return toHex(root) === cp.root_hash ? new Set(known.keys()) : none;
  }

  private async toEvent(row: LogEntryRow, own: EntryAlone, proven: boolean): Promise<TraceEvent> {
    const entry = recordToEntry(row);
    // A signature the checkpoint proved, or one this service already found valid, is not checked again.
    const memo = `${row.key_id}:${row.hash}:${row.signature}`;
    const problems = own.problems.map((p) => PROBLEM_WORDS[p.code]);
    if (!proven && this.signatureVerdicts.get(memo) !== true) {
      const raw = await this.keyring.publicKey(row.key_id);
      const signature = checkEntrySignature(row, raw && { raw });
      if (this.signatureVerdicts.size >= MAX_REMEMBERED) this.signatureVerdicts.delete(this.signatureVerdicts.keys().next().value as string);
      this.signatureVerdicts.set(memo, signature === null);
      if (signature) problems.push(PROBLEM_WORDS[signature.code]);
    }
    return {
      log_id: row.log_id,
      seq: row.seq,
      event_type: row.event_type,
      source: row.source,
      // An erased entry takes part in the analyses by its skeleton alone: its type, times and
      // envelope, and (format version 3) its links, the references its content named, in the
      // data members they were copied from (docs/ledger-format.md §16).
      data: entry.data ?? entry.links ?? {},
      extra: entry.extra,
      erased: own.content === 'erased',
      event_id: row.event_id,
      timestamp: row.timestamp,
      created_at: row.created_at,
      span_id: row.span_id,
      parent_span_id: row.parent_span_id,
      parent_event_id: row.parent_event_id,
      root_event_id: row.root_event_id,
      causality_type: row.causality_type,
      idempotency_key: row.idempotency_key,
      agent_id: row.agent_id,
      integrity: problems.length === 0 ? 'valid' : 'invalid',
      integrity_problems: problems,
    };
  }

  timeline(trace: Trace): TimelineItem[] {
    return timeline(trace);
  }

  graph(trace: Trace): CausalGraph {
    return buildGraph(trace);
  }

  staleness(trace: Trace): StalenessReport {
    return assessStaleness(trace, this.opts.maxAgeDefaults);
  }

  /** What a replay session's root cause detected (an incident opened from it records this). */
  async causeOfSession(companyId: string, sessionId: string): Promise<DetectedCause> {
    const { s, trace } = await this.sessionTrace(companyId, sessionId);
    const rc = await this.rootCause(s, trace);
    return { replay_session_id: s.session_id, trace_id: s.trace_id, detected: rc.detected, root_cause_type: rc.root_cause_type, description: rc.description, confidence: rc.confidence, evidence: rc.evidence };
  }

  /** The same for a trace, through a replay session made for it; null when the trace has no entries. */
  async causeOfTrace(companyId: string, traceId: string): Promise<DetectedCause | null> {
    try {
      return await this.causeOfSession(companyId, (await this.createSession(companyId, { trace_id: traceId, metadata: { purpose: 'incident report' } })).id);
    } catch (err) {
      if (err instanceof TraceNotFoundError) return null;
      throw err;
    }
  }

  /** The root cause; the first time a session's answer detects something, a forensics.anomaly_detected event is recorded. */
  async rootCause(s: ReplaySession, trace: Trace): Promise<RootCause> {
    const result = rootCause(trace, this.opts.maxAgeDefaults, s.trace_id, buildGraph(trace));
    if (result.detected && (await this.forensicsStore.markAnomalyReported(s.company_id, s.session_id, iso(this.opts.clock()), result.root_cause_type))) {
      await this.opts.events.emit(s.company_id, 'forensics.anomaly_detected', {
        session_id: s.session_id,
        trace_id: s.trace_id,
        root_cause_type: result.root_cause_type,
        confidence: result.confidence,
        description: result.description,
        evidence: result.evidence,
      });
    }
    return result;
  }
}
