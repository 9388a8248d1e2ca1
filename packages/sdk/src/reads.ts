// The client's typed reads: entries, proofs and checkpoints, integrity, replays and their
// analyses, human review, evidence and exports, each one request to the service's API. Their types
// are generated from the OpenAPI document (api-types.ts). AuditLedgerClient (client.ts) adds
// delivery on top.
import type { CausalGraph, EntryCheck, EntryPage, EvidenceBundle, HitlRejection, HitlRejectionInput, IntegrityStatus, LedgerEntry, ReplaySession, RootCause, Staleness, Timeline } from './api.js';
import { CheckpointWatcher, type InclusionProof, type SignedCheckpoint, type WatchOptions } from './checkpoints.js';
import { type Problem, ProblemError } from './problem.js';
import { Approvals } from './approvals.js';

/** Where and as whom the reads go. */
export interface Connection {
  /** The service's API root, without a trailing slash. */
  baseUrl: string;
  apiKey: string;
  fetch: typeof fetch;
}

export class LedgerReads {
  /** Approvals bound to the exact action: request, wait, check, and guarded() runs (docs/governance.md). */
  readonly approvals: Approvals;

  constructor(private readonly connection: Connection) {
    this.approvals = new Approvals({ get: (path) => this.get(path), post: (path, body) => this.post(path, body) }, (event) => this.post('/logs', event));
  }

  protected async request(method: string, path: string, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = { 'x-api-key': this.connection.apiKey };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await this.connection.fetch(`${this.connection.baseUrl}${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    if (!res.ok) throw new ProblemError((await res.json().catch(() => ({ status: res.status, code: 'unknown', title: res.statusText, detail: '', type: '' }))) as Problem);
    return res;
  }

  protected async get<T>(path: string): Promise<T> {
    return (await (await this.request('GET', path)).json()) as T;
  }

  protected async post<T>(path: string, body: unknown): Promise<T> {
    return (await (await this.request('POST', path, body)).json()) as T;
  }

  /** One entry, as stored. */
  getLog(logId: string): Promise<LedgerEntry> {
    return this.get(`/logs/${encodeURIComponent(logId)}`);
  }

  /** The service's check of one entry (hash, links, signature, inclusion under the latest checkpoint). */
  verifyLog(logId: string): Promise<EntryCheck> {
    return this.get(`/logs/${encodeURIComponent(logId)}/verify`);
  }

  /** The company's agent key register (docs/ledger-format.md §20): what agent signatures are checked against (verifyReceipt's agentKeys). */
  async agentKeys(agentId?: string): Promise<Array<{ key_id: string; agent_id: string; public_key: string; active_from: string; active_to: string | null }>> {
    return (await this.get<{ items: Array<{ key_id: string; agent_id: string; public_key: string; active_from: string; active_to: string | null }> }>(`/agent-keys${agentId === undefined ? '' : `?agent_id=${encodeURIComponent(agentId)}`}`)).items;
  }

  /** The latest signed checkpoint. */
  checkpoint(): Promise<SignedCheckpoint> {
    return this.get('/integrity/checkpoint');
  }

  /** The consistency proof between two signed tree sizes. */
  consistency(first: number, second: number): Promise<{ first: number; second: number; proof: string[] }> {
    return this.get(`/integrity/consistency?first=${first}&second=${second}`);
  }

  /** An entry's inclusion proof in the tree of the latest checkpoint (or `treeSize`), with that checkpoint. */
  proof(logId: string, treeSize?: number): Promise<InclusionProof & { checkpoint: SignedCheckpoint | null }> {
    return this.get(`/logs/${encodeURIComponent(logId)}/proof${treeSize ? `?tree_size=${treeSize}` : ''}`);
  }

  /** A watcher that checks every new checkpoint against the pinned keys and the last one accepted (call start(ms) to poll). */
  watchCheckpoints(opts: WatchOptions): CheckpointWatcher {
    return new CheckpointWatcher(this, opts);
  }

  /** The company's chain: head, latest checkpoint, verification state. */
  integrityStatus(): Promise<IntegrityStatus> {
    return this.get('/integrity/status');
  }

  /** Opens a replay session of a trace (pinned at its current size), for the analyses below. */
  replay(traceId: string, metadata: Record<string, unknown> = {}): Promise<ReplaySession> {
    return this.post('/forensics/replays', { trace_id: traceId, metadata });
  }

  /** The replay's events in event-time order, each with its integrity. */
  timeline(sessionId: string): Promise<Timeline> {
    return this.get(`/forensics/replays/${encodeURIComponent(sessionId)}/timeline`);
  }

  /** The replay's causal graph: events, context sources, edges, cycles and dangling references. */
  causalGraph(sessionId: string): Promise<CausalGraph> {
    return this.get(`/forensics/replays/${encodeURIComponent(sessionId)}/causal-graph`);
  }

  /** How old each context source was when a decision used it. */
  staleness(sessionId: string): Promise<Staleness> {
    return this.get(`/forensics/replays/${encodeURIComponent(sessionId)}/staleness`);
  }

  /** The outcome of the replayed run and its most likely root cause, with the evidence path. */
  rootCause(sessionId: string): Promise<RootCause> {
    return this.get(`/forensics/replays/${encodeURIComponent(sessionId)}/root-cause`);
  }

  /** Records a human reviewer's rejection of an agent decision (a hitl.rejected entry, committed when this resolves). */
  rejectDecision(input: HitlRejectionInput): Promise<HitlRejection> {
    return this.post('/hitl/reject', input);
  }

  /** An evidence bundle (entries, inclusion proofs, signed checkpoint) for a trace or a seq range, to verify offline. */
  evidence(query: { trace_id: string } | { from_seq: number; to_seq: number }): Promise<EvidenceBundle> {
    return this.get(`/exports/evidence?${new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]))}`);
  }

  /** A streaming export, as the service sends it: JSON Lines (verifiable) or CSV (for reading). */
  async exportStream(query: { format: 'jsonl' | 'csv'; trace_id?: string; event_type?: string; from?: string; to?: string }): Promise<ReadableStream<Uint8Array>> {
    const params = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined) as Array<[string, string]>);
    const res = await this.request('GET', `/exports/logs?${params}`);
    if (!res.body) throw new Error('the export answer has no body');
    return res.body;
  }

  /** Every exported entry, parsed line by line as the JSON Lines export streams in (memory stays flat). */
  async *exportEntries(query: { trace_id?: string; event_type?: string; from?: string; to?: string } = {}): AsyncGenerator<LedgerEntry> {
    const reader = (await this.exportStream({ ...query, format: 'jsonl' })).getReader();
    const text = new TextDecoder('utf-8', { fatal: true });
    let rest = '';
    for (;;) {
      const { value, done } = await reader.read();
      rest += done ? text.decode() : text.decode(value, { stream: true });
      let nl = rest.indexOf('\n');
      while (nl >= 0) {
        const line = rest.slice(0, nl);
        rest = rest.slice(nl + 1);
        if (line.trim() !== '') yield JSON.parse(line) as LedgerEntry;
        nl = rest.indexOf('\n');
      }
      if (done) break;
    }
    if (rest.trim() !== '') yield JSON.parse(rest) as LedgerEntry;
  }

  /** Every entry matching the query, in seq order, following cursors. */
  async *search(query: Partial<Record<'trace_id' | 'session_id' | 'event_type' | 'source' | 'from' | 'to', string>> & { limit?: number } = {}): AsyncGenerator<LedgerEntry> {
    let cursor: string | null = null;
    do {
      const params = new URLSearchParams(Object.entries({ ...query, limit: String(query.limit ?? 500) }).filter(([, v]) => v !== undefined) as Array<[string, string]>);
      if (cursor) params.set('cursor', cursor);
      const page: EntryPage = await this.get(`/logs?${params}`);
      yield* page.items;
      cursor = page.next_cursor;
    } while (cursor);
  }
}
