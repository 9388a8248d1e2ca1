// Approvals from the agent's side (docs/governance.md): ask for one action with its exact
// arguments, wait for a person's decision, and run the action only when it was approved for
// exactly those arguments: `guarded(action, args, fn)` does all three and records the execution
// (an `action.executed` entry naming the approval, which the service checks against the approved
// arguments hash). The hash is RFC 8785 canonical JSON under SHA-256, computed here too, so a
// mutation of the arguments between the request and the run is caught before anything runs.
import { argumentsHash as coreArgumentsHash, type Json } from '@audit-ledger/core';
import type { Approval, ApprovalCheckAnswer, ApprovalRequestInput } from './api.js';

/** What a request sends, besides the action and its arguments. */
export type RequestOptions = Omit<ApprovalRequestInput, 'action' | 'arguments'>;

export interface WaitOptions {
  /** Give up after this long (default 10 minutes); the approval stays pending at the service. */
  timeoutMs?: number;
  /** Seconds each long-poll waits at the service (default 30, at most 60). */
  pollSeconds?: number;
  signal?: AbortSignal;
}

export interface GuardOptions extends RequestOptions, WaitOptions {
  /** Recorded on the execution entry (the service checks it against the approval's tool). */
  tool?: string;
}

/** The lowercase hex SHA-256 of the RFC 8785 canonical JSON of the arguments: what an approval binds (the core's rule). */
export const argumentsHash = (args: unknown): string => coreArgumentsHash(args as Json);

/** The action was not approved (rejected, expired, revoked, or still pending when the wait ended). */
export class ApprovalDenied extends Error {
  constructor(readonly approval: Approval) {
    super(`approval ${approval.id} for ${approval.action} is ${approval.status}${approval.decision_reason ? `: ${approval.decision_reason}` : ''}`);
    this.name = 'ApprovalDenied';
  }
}

/** The arguments about to run are not those approved: nothing ran. */
export class ApprovalMismatch extends Error {
  constructor(
    readonly approval: Approval,
    readonly argumentsHash: string,
  ) {
    super(`the arguments hash to ${argumentsHash}, but approval ${approval.id} covers ${approval.arguments_hash}: nothing was run`);
    this.name = 'ApprovalMismatch';
  }
}

export interface Transport {
  get<T>(path: string): Promise<T>;
  post<T>(path: string, body: unknown): Promise<T>;
}

/** One requested approval: its state as last read, and a way to wait for the decision. */
export class ApprovalHandle {
  constructor(
    private readonly http: Transport,
    public approval: Approval,
  ) {}

  get id(): string {
    return this.approval.id;
  }

  /** Waits (long-polling) until the approval is decided or expired, or `timeoutMs` passes; answers its state then. */
  async decision(opts: WaitOptions = {}): Promise<Approval> {
    const deadline = Date.now() + (opts.timeoutMs ?? 600_000);
    for (;;) {
      const left = Math.ceil((deadline - Date.now()) / 1000);
      const wait = Math.max(0, Math.min(opts.pollSeconds ?? 30, 60, left));
      this.approval = await this.http.get<Approval>(`/approvals/${encodeURIComponent(this.id)}?wait=${wait}`);
      if (this.approval.status !== 'pending' || Date.now() >= deadline || opts.signal?.aborted) return this.approval;
    }
  }
}

export class Approvals {
  constructor(
    private readonly http: Transport,
    /** Records an execution synchronously (POST /logs), answering the service's check of it. */
    private readonly record: (event: { event_type: string; trace_id?: string; agent_id?: string; idempotency_key: string; data: Record<string, unknown> }) => Promise<{ log_id: string; approval_check?: unknown }>,
  ) {}

  /** Asks for approval of one action with its exact arguments (an `approval.requested` entry, committed when this resolves). */
  async request(action: string, args: unknown, opts: RequestOptions = {}): Promise<ApprovalHandle> {
    const approval = await this.http.post<Approval>('/approvals', { ...opts, action, arguments: args });
    const mine = argumentsHash(args);
    if (approval.arguments_hash !== mine) throw new Error(`the service hashed the arguments to ${approval.arguments_hash}, this client to ${mine}: they were changed on the way`);
    return new ApprovalHandle(this.http, approval);
  }

  get(id: string): Promise<Approval> {
    return this.http.get(`/approvals/${encodeURIComponent(id)}`);
  }

  /** Would these arguments run under the approval now? (recorded by the service; takes no use) */
  check(id: string, args: unknown, opts: { action?: string; agent_id?: string } = {}): Promise<ApprovalCheckAnswer> {
    return this.http.post(`/approvals/${encodeURIComponent(id)}/check`, { arguments: args, ...opts });
  }

  /**
   * Requests approval of `action` with `args`, waits for the decision, and runs `fn(args)` only
   * when it is approved and `args` still hash to what was approved; then records the execution as
   * an `action.executed` entry naming the approval (with the outcome, or the error `fn` threw).
   * Throws ApprovalDenied (not approved) or ApprovalMismatch (the arguments changed after the
   * request; an `action.blocked` entry records it), and runs nothing then.
   */
  async guarded<A, R>(action: string, args: A, fn: (args: A) => Promise<R> | R, opts: GuardOptions = {}): Promise<{ value: R; approval: Approval; execution: { log_id: string; approval_check?: unknown } }> {
    const { timeoutMs, pollSeconds, signal, ...requestOpts } = opts;
    // One key for this run's execution entry: a retried POST appends it once.
    const run = globalThis.crypto.randomUUID();
    const handle = await this.request(action, args, requestOpts);
    const approval = await handle.decision({ ...(timeoutMs !== undefined ? { timeoutMs } : {}), ...(pollSeconds !== undefined ? { pollSeconds } : {}), ...(signal ? { signal } : {}) });
    if (approval.status !== 'approved') throw new ApprovalDenied(approval);
    const where = { ...(requestOpts.trace_id ? { trace_id: requestOpts.trace_id } : {}), ...(requestOpts.agent_id ? { agent_id: requestOpts.agent_id } : {}) };
    const now = argumentsHash(args);
    if (now !== approval.arguments_hash) {
      await this.record({ event_type: 'action.blocked', ...where, idempotency_key: `blocked-${approval.id}-${run}`, data: { action, ...(opts.tool ? { tool: opts.tool } : {}), approval_id: approval.id, arguments: args as unknown as Record<string, unknown>, arguments_hash: now, approved_arguments_hash: approval.arguments_hash, reason: 'the arguments changed after they were approved' } });
      throw new ApprovalMismatch(approval, now);
    }
    let value: R;
    try {
      value = await fn(args);
    } catch (err) {
      await this.record({ event_type: 'action.executed', ...where, idempotency_key: `executed-${approval.id}-${run}`, data: { action, ...(opts.tool ? { tool: opts.tool } : {}), approval_id: approval.id, arguments: args as unknown as Record<string, unknown>, status: 'failed', error: err instanceof Error ? err.message : String(err) } });
      throw err;
    }
    const execution = await this.record({ event_type: 'action.executed', ...where, idempotency_key: `executed-${approval.id}-${run}`, data: { action, ...(opts.tool ? { tool: opts.tool } : {}), approval_id: approval.id, arguments: args as unknown as Record<string, unknown>, status: 'succeeded' } });
    return { value, approval, execution };
  }
}

