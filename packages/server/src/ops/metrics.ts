// Prometheus metrics (prom-client), one registry per app so tests can build several.
// Labels are bounded: route patterns, methods, status codes, results; never a company or
// key (unbounded cardinality, and not for an operator's dashboards to see).
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export class Metrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'audit_ledger_http_requests_total',
    help: 'HTTP requests answered, by route pattern, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  readonly requestDuration = new Histogram({
    name: 'audit_ledger_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by route pattern, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly eventsAppended = new Counter({ name: 'audit_ledger_events_appended_total', help: 'Ledger entries committed', registers: [this.registry] });
  readonly idempotencyConflicts = new Counter({
    name: 'audit_ledger_idempotency_conflicts_total',
    help: 'Events appended although their body idempotency_key was already used for different content (marked idempotency_conflict)',
    registers: [this.registry],
  });
  readonly appendBatchSize = new Histogram({
    name: 'audit_ledger_append_batch_size',
    help: 'Entries committed per append transaction (group commit)',
    buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000],
    registers: [this.registry],
  });
  readonly appendDuration = new Histogram({
    name: 'audit_ledger_append_duration_seconds',
    help: 'Time an append transaction took, from lock to commit',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  readonly witnessCosignatures = new Counter({ name: 'audit_ledger_witness_cosignatures_total', help: 'Checkpoint cosignatures received from witnesses', labelNames: ['witness'], registers: [this.registry] });
  readonly witnessRefusals = new Counter({
    name: 'audit_ledger_witness_refusals_total',
    help: 'Checkpoints a witness refused as inconsistent with what it cosigned before (a split view or a rewritten history)',
    labelNames: ['witness'],
    registers: [this.registry],
  });
  readonly rateLimited = new Counter({ name: 'audit_ledger_rate_limited_requests_total', help: 'Requests refused with 429 by a per-key rate limit', registers: [this.registry] });
  readonly webhookDeliveries = new Counter({
    name: 'audit_ledger_webhook_deliveries_total',
    help: 'Webhook delivery attempts, by result (delivered, retry, failed, disabled)',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly integrityViolations = new Counter({
    name: 'audit_ledger_integrity_violations_total',
    help: 'Integrity violations found by the verifier, by kind',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly verificationRuns = new Counter({
    name: 'audit_ledger_verification_runs_total',
    help: 'Verification passes, by kind (background, full) and result (clean, violations, failed)',
    labelNames: ['kind', 'result'] as const,
    registers: [this.registry],
  });

  /** Each (route, method, status)'s request series, resolved once: labelling on every request costs more than counting. */
  private readonly requestSeries = new Map<string, { count: { inc(): void }; duration: { observe(v: number): void } }>();

  constructor(sources: { rateLimitFallback?: () => boolean } = {}) {
    collectDefaultMetrics({ register: this.registry, prefix: 'audit_ledger_' });
    const fallback = sources.rateLimitFallback ?? (() => false);
    new Gauge({
      name: 'audit_ledger_rate_limit_fallback',
      help: '1 while Redis is unreachable and rate limits and the login lockout are counted in this process only',
      registers: [this.registry],
      collect() {
        this.set(fallback() ? 1 : 0);
      },
    });
  }

  /** Counts an answered request and its duration (labels are bounded: route patterns, methods, statuses). */
  observeRequest(route: string, method: string, status: number, seconds: number): void {
    const key = `${route} ${method} ${status}`;
    let series = this.requestSeries.get(key);
    if (!series) {
      const labels = { route, method, status: String(status) };
      series = { count: this.requests.labels(labels), duration: this.requestDuration.labels(labels) };
      this.requestSeries.set(key, series);
    }
    series.count.inc();
    series.duration.observe(seconds);
  }
}
