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
  readonly streamBatches = new Counter({
    name: 'audit_ledger_stream_batches_total',
    help: 'Log stream batch sends, by result (delivered, retry, failed: the stream gave up after its retry window)',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly streamEntries = new Counter({ name: 'audit_ledger_stream_entries_delivered_total', help: 'Entries delivered by log streams (each batch counted once per delivery)', registers: [this.registry] });
  /** Companies whose appends wait for an operator's continuity decision (set by services.ts: continuity/guard.ts). */
  continuityHolds: () => number = () => 0;

  /** Every stream's lag, read from the store at each scrape (set by services.ts). */
  streamLag: () => Promise<Array<{ company_id: string; stream_id: string; status: string; entries: number; seconds: number }>> = async () => [];

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
    const holds = () => this.continuityHolds();
    new Gauge({
      name: 'audit_ledger_continuity_holds',
      help: 'Companies whose ledger is behind a checkpoint seen outside it (after a failover or restore): their appends are refused until an operator decides',
      registers: [this.registry],
      collect() {
        this.set(holds());
      },
    });
    // Both gauges come from one read of the store per scrape (prom-client collects them concurrently).
    let read: { at: number; rows: ReturnType<Metrics['streamLag']> } | null = null;
    const lag = () => {
      if (!read || Date.now() - read.at > 1000) read = { at: Date.now(), rows: this.streamLag() };
      return read.rows;
    };
    const gauge = (name: string, help: string, pick: (s: Awaited<ReturnType<Metrics['streamLag']>>[number]) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['company_id', 'stream_id', 'status'] as const,
        registers: [this.registry],
        async collect() {
          const rows = await lag();
          this.reset();
          for (const s of rows) this.set({ company_id: s.company_id, stream_id: s.stream_id, status: s.status }, pick(s));
        },
      });
    gauge('audit_ledger_stream_lag_entries', 'Ledger entries a log stream has not delivered yet (appended after its cursor), by stream', (s) => s.entries);
    gauge('audit_ledger_stream_lag_seconds', 'Age of the oldest entry a log stream has not delivered yet (0 when it is caught up), by stream', (s) => s.seconds);
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
