// OTLP ingestion without HTTP: a decoded export request in, ledger entries committed, and the
// OTLP partial-success answer out (how many items were refused, and why). Each span or log
// record is mapped (map.ts), checked against the same schema as POST /logs, and prepared by the
// same code; the accepted ones are appended together (in chunks of MAX_BATCH_SIZE), after the
// otel.resource entries they name (each stored once: a repeat is an idempotent duplicate), so a
// 200 means every accepted item and what it names is committed. A refused item never blocks the others.
// Once committed, they pass the same checks as POST /logs (the governance layer's: a tool call or
// action naming an approval_id against its approval, a policy evaluation against the register),
// which record what they find as entries of their own (approval.checked).
import type { Config } from '../kernel/config.js';
import { compileBodySchema } from '../http/validation.js';
import { LogInput, type LogInputT } from '../ingestion/input.js';
import type { PreparedEvent } from '../ledger/appender/types.js';
import type { Ingestion } from '../ingestion/service.js';
import type { LogRecord, ResourceGroup, Span } from './decode.js';
import { type MappedRequest, mapLogs, mapSpans, type OtlpEvent } from './map.js';

export interface OtlpResult {
  /** Items committed (or found already committed: an exporter's retry). */
  accepted: number;
  /** Items refused; `errorMessage` says why (the first few reasons). */
  rejected: number;
  errorMessage: string;
}

export interface OtlpIngestDeps {
  /** The one ingestion path: its rules for each event, and its commit (append, usage, the checks POST /logs makes; OTLP answers no mark, they are recorded as entries). */
  ingestion: Pick<Ingestion, 'prepareOne' | 'commit'>;
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

  /** An event checked as POST /logs checks it, then prepared; or why not. */
  private prepare(event: OtlpEvent): PreparedEvent | string {
    if (!validInput(event)) return (validInput.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`).join('; ');
    const p = this.deps.ingestion.prepareOne(event as LogInputT);
    if (!Array.isArray(p)) return p;
    // The reserved source is OTLP's service.name: said in its words.
    if (p.some((e) => e.field === '/source' && e.message.includes('reserved'))) return `service.name may not start with "audit-ledger/" (reserved for entries the service writes itself)`;
    return p.map((e) => `${e.field || '/'} ${e.message}`).join('; ');
  }

  private async ingest(companyId: string, keyId: string | null, mapped: MappedRequest, noun: string): Promise<OtlpResult> {
    const reasons: string[] = [];
    const resources = new Map<string, PreparedEvent | string>();
    for (const [ref, event] of mapped.resources) resources.set(ref, this.prepare(event));
    const accepted: Array<{ event: PreparedEvent; sortKey: bigint }> = [];
    const named = new Set<string>();
    mapped.items.forEach((m, i) => {
      const refuse = (why: string) => reasons.push(`${noun} ${i}: ${why}`);
      if (!m.ok) return refuse(m.reason);
      const resource = resources.get(m.resourceRef) as PreparedEvent | string;
      if (typeof resource === 'string') return refuse(`its resource and scope: ${resource}`);
      const p = this.prepare(m.event);
      if (typeof p === 'string') return refuse(p);
      accepted.push({ event: p, sortKey: m.sortKey });
      named.add(m.resourceRef);
    });
    // In order of time (Array.prototype.sort is stable): a parent span after the children it waited for.
    accepted.sort((x, y) => (x.sortKey < y.sortKey ? -1 : x.sortKey > y.sortKey ? 1 : 0));
    // The resources first, so an item never precedes what it names.
    const events = [...[...named].map((ref) => resources.get(ref) as PreparedEvent), ...accepted.map((a) => a.event)];
    for (let i = 0; i < events.length; i += this.deps.config.maxBatchSize) {
      await this.deps.ingestion.commit({ companyId, keyId }, events.slice(i, i + this.deps.config.maxBatchSize));
    }
    const rejected = mapped.items.length - accepted.length;
    const more = reasons.length > MAX_REASONS ? ` (and ${reasons.length - MAX_REASONS} more)` : '';
    return { accepted: accepted.length, rejected, errorMessage: rejected === 0 ? '' : `${rejected} of ${mapped.items.length} refused: ${reasons.slice(0, MAX_REASONS).join('; ')}${more}` };
  }
}
