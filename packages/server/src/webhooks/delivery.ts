// Delivers the outbox: claims due deliveries (several processes never claim the same
// one), POSTs each with Standard Webhooks headers, records the attempt, and schedules a
// retry with exponential backoff and jitter on network errors, timeouts, 5xx and 429
// (honouring Retry-After). 410 Gone disables the endpoint. Times come from the injected
// clock, so tests drive the schedule without sleeping.
import { retryAfterMs, retryDelayMs, type RetryPolicy } from '@audit-ledger/core';
import { BackgroundTask } from '../kernel/background.js';
import type { Metrics } from '../ops/metrics.js';
import type { EventSink } from '../kernel/events.js';
import { uuidv7 } from '../ledger/uuidv7.js';
import type { DeliveryRow, WebhookStore } from '../store/webhooks.js';
import { iso } from '../kernel/time.js';
import type { SecretBox } from '../store/secret-box.js';
import { signWebhook } from './signature.js';
import { fetch, type Agent } from 'undici';
import { pinnedAgent, type Resolver, urlProblem } from '../egress/address-policy.js';

/** Waits before attempts 2–8 (Standard Webhooks' example schedule): about 27.5 hours in all. */
export const RETRY_DELAYS_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];
/** Each wait is stretched or shrunk by up to this fraction, so retries of many messages spread out. */
export const JITTER = 0.1;
/** The core's retry policy over that schedule; a Retry-After longer than the schedule's longest wait is capped there. */
const WEBHOOK_RETRY: RetryPolicy = { schedule: RETRY_DELAYS_MS, maxMs: Math.max(...RETRY_DELAYS_MS), jitter: JITTER };
const POLL_MS = 500;
const BATCH = 20;

export interface DeliveryDeps {
  webhookStore: WebhookStore;
  secretBox: SecretBox;
  clock: () => number;
  timeoutMs: number;
  allowPrivate: boolean;
  metrics: Metrics;
  events: EventSink;
  logError: (obj: object, msg: string) => void;
  random?: () => number;
  /** How host names are resolved (tests pass their own to play DNS rebinding). */
  resolve?: Resolver;
}

type Outcome = { result: 'delivered' | 'retry' | 'failed' | 'disabled'; retryAfterMs?: number };


export class DeliveryWorker {
  private readonly task: BackgroundTask;
  private started = false;
  /** Connects only to the address its own lookup checked (see egress/address-policy.ts). */
  private readonly agent: Agent;

  constructor(private readonly deps: DeliveryDeps) {
    this.agent = pinnedAgent(deps.allowPrivate, deps.resolve);
    this.task = new BackgroundTask(
      () => this.drain(),
      (err) => deps.logError({ err }, 'webhook delivery pass failed'),
    );
  }

  start(): void {
    this.started = true;
    this.task.start(POLL_MS);
  }

  async close(): Promise<void> {
    await this.task.close();
    await this.agent.close();
  }

  /** Delivers what is due now; does nothing in a process that does not deliver (WEBHOOK_DELIVERY=off). */
  kick(): void {
    if (this.started) this.task.kick();
  }

  private async drain(): Promise<void> {
    while (!this.task.closed) {
      const now = this.deps.clock();
      const due = await this.deps.webhookStore.claimDue(iso(now), iso(now + this.deps.timeoutMs + 30_000), BATCH);
      if (due.length === 0) return;
      await Promise.all(due.map((d) => this.deliver(d)));
    }
  }

  private async deliver(d: DeliveryRow): Promise<void> {
    const { webhookStore: repo, clock } = this.deps;
    const endpoint = await repo.getEndpoint(d.company_id, d.endpoint_id);
    const event = await repo.getEvent(d.company_id, d.event_id);
    const started = clock();
    const attemptBase = { company_id: d.company_id, attempt_id: uuidv7(started), delivery_id: d.delivery_id, endpoint_id: d.endpoint_id, event_id: d.event_id, attempted_at: iso(started) };
    const attempts = d.attempts + 1;
    if (!endpoint || endpoint.enabled !== 1 || !event) {
      await repo.recordAttempt(
        { ...attemptBase, status_code: null, latency_ms: 0, error: !event ? 'event not found' : 'endpoint disabled or deleted', result: 'failed' },
        { status: 'failed', attempts, next_attempt_at: d.next_attempt_at, finished_at: iso(started) },
      );
      this.deps.metrics.webhookDeliveries.inc({ result: 'failed' });
      return;
    }

    let status: number | null = null;
    let error: string | null = null;
    let outcome: Outcome;
    const t0 = performance.now();
    // Names are checked by the pinned connection, so only the URL's form and literal addresses here.
    const refused = await urlProblem(endpoint.url, this.deps.allowPrivate, null);
    if (refused) {
      error = `refused: the URL ${refused}`;
      outcome = { result: 'failed' };
    } else {
      const body = JSON.stringify({ type: event.type, timestamp: event.created_at, data: JSON.parse(event.data) as unknown });
      const ts = Math.floor(started / 1000);
      try {
        const res = await fetch(endpoint.url, {
          method: 'POST',
          redirect: 'manual',
          dispatcher: this.agent,
          signal: AbortSignal.timeout(this.deps.timeoutMs),
          headers: {
            'content-type': 'application/json',
            'user-agent': 'audit-ledger-webhooks',
            'webhook-id': event.event_id,
            'webhook-timestamp': String(ts),
            'webhook-signature': signWebhook(this.deps.secretBox.open(endpoint.secret_encrypted), event.event_id, ts, body),
          },
          body,
        });
        status = res.status;
        await res.body?.cancel().catch(() => {});
        if (status >= 200 && status < 300) outcome = { result: 'delivered' };
        else if (status === 410) outcome = { result: 'disabled' };
        else if (status === 429 || status >= 500) outcome = { result: 'retry', retryAfterMs: retryAfterMs(res.headers.get('retry-after'), clock()) ?? 0 };
        else outcome = { result: 'failed' };
        if (outcome.result !== 'delivered') error = `HTTP ${status}`;
      } catch (err) {
        const e = err as Error & { cause?: { code?: string; message?: string } };
        if (e.cause?.code === 'EWEBHOOKPRIVATE') {
          error = `refused: ${e.cause.message}`;
          outcome = { result: 'failed' };
        } else {
          error = e.name === 'TimeoutError' ? `timed out after ${this.deps.timeoutMs} ms` : `${e.cause?.code ?? e.name}: ${e.cause?.message ?? e.message}`;
          outcome = { result: 'retry' };
        }
      }
    }
    const latency = Math.round(performance.now() - t0);

    let next = d.next_attempt_at;
    let final: Outcome['result'] = outcome.result;
    if (outcome.result === 'retry') {
      const wait = retryDelayMs(WEBHOOK_RETRY, attempts - 1, this.deps.random ?? Math.random, outcome.retryAfterMs);
      if (wait === undefined) final = 'failed';
      else next = iso(clock() + wait);
    }
    const finishedAt = final === 'retry' ? null : iso(clock());
    await repo.recordAttempt(
      { ...attemptBase, status_code: status, latency_ms: latency, error, result: final },
      { status: final === 'delivered' ? 'delivered' : final === 'retry' ? 'pending' : 'failed', attempts, next_attempt_at: next, finished_at: finishedAt },
    );
    this.deps.metrics.webhookDeliveries.inc({ result: final });
    if (final === 'disabled') {
      const reason = `the endpoint answered 410 Gone at ${iso(clock())}`;
      await repo.updateEndpoint(d.company_id, d.endpoint_id, { enabled: 0, disabled_reason: reason, updated_at: iso(clock()) });
      await this.deps.events.emit(d.company_id, 'webhook_endpoint.disabled', { endpoint_id: d.endpoint_id, url: endpoint.url, reason });
    }
  }
}
