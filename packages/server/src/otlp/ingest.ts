// OTLP ingestion without HTTP: a decoded export request in, ledger entries committed, and the
// OTLP partial-success answer out (how many items were refused, and why). Each span or log
// record is mapped (map.ts), checked against the same schema as POST /logs, and prepared by the
// same code; the accepted ones are appended together (in chunks of MAX_BATCH_SIZE), so a 200
// means every accepted item is committed. A refused item never blocks the others.
import type { Config } from '../config.js';
import { compileBodySchema } from '../http/validation.js';
import type { Appender } from '../ledger/appender.js';
import type { AppendedEvent } from '../ledger/appender/errors.js';
import { isReservedSource, LogInput, type LogInputT, type PreparedEvent, prepareEvent, RESERVED_SOURCE_PREFIX } from '../ledger/input.js';
import type { UsageCounter } from '../ops/usage.js';
import type { LogRecord, ResourceGroup, Span } from './decode.js';
import { type Mapped, mapLogs, mapSpans } from './map.js';

export interface OtlpResult {
  /** Items committed (or found already committed: an exporter's retry). */
  accepted: number;
  /** Items refused; `errorMessage` says why (the first few reasons). */
  rejected: number;
  errorMessage: string;
}

export interface OtlpIngestDeps {
  appender: Appender;
  usage: UsageCounter;
  config: Pick<Config, 'maxBatchSize' | 'maxEntryBytes'>;
}

const MAX_REASONS = 5;
const validInput = compileBodySchema<LogInputT>(LogInput);

export class OtlpIngest {
  constructor(private readonly deps: OtlpIngestDeps) {}

  traces(companyId: string, keyId: string | null, groups: Array<ResourceGroup<Span>>): Promise<OtlpResult> {
    return this.ingest(companyId, keyId, mapSpans(groups, this.deps.config.maxEntryBytes), 'span');
  }

  logs(companyId: string, keyId: string | null, groups: Array<ResourceGroup<LogRecord>>): Promise<OtlpResult> {
    return this.ingest(companyId, keyId, mapLogs(groups, this.deps.config.maxEntryBytes), 'log record');
  }

  private async ingest(companyId: string, keyId: string | null, mapped: Mapped[], noun: string): Promise<OtlpResult> {
    const reasons: string[] = [];
    const accepted: Array<{ event: PreparedEvent; sortKey: bigint }> = [];
    mapped.forEach((m, i) => {
      const refuse = (why: string) => reasons.push(`${noun} ${i}: ${why}`);
      if (!m.ok) return refuse(m.reason);
      if (!validInput(m.event)) return refuse((validInput.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`).join('; '));
      const input = m.event as LogInputT;
      if (isReservedSource(input.source)) return refuse(`service.name may not start with "${RESERVED_SOURCE_PREFIX}" (reserved for entries the service writes itself)`);
      const p = prepareEvent(input, '', { maxEntryBytes: this.deps.config.maxEntryBytes });
      if (Array.isArray(p)) return refuse(p.map((e) => `${e.field || '/'} ${e.message}`).join('; '));
      accepted.push({ event: p, sortKey: m.sortKey });
    });
    // In order of time (Array.prototype.sort is stable): a parent span after the children it waited for.
    accepted.sort((x, y) => (x.sortKey < y.sortKey ? -1 : x.sortKey > y.sortKey ? 1 : 0));
    const events = accepted.map((a) => a.event);
    const results: AppendedEvent[] = [];
    for (let i = 0; i < events.length; i += this.deps.config.maxBatchSize) {
      results.push(...(await this.deps.appender.append(companyId, events.slice(i, i + this.deps.config.maxBatchSize))));
    }
    this.deps.usage.appended(companyId, keyId, events, results);
    const rejected = mapped.length - events.length;
    const more = reasons.length > MAX_REASONS ? ` (and ${reasons.length - MAX_REASONS} more)` : '';
    return { accepted: events.length, rejected, errorMessage: rejected === 0 ? '' : `${rejected} of ${mapped.length} refused: ${reasons.slice(0, MAX_REASONS).join('; ')}${more}` };
  }
}
