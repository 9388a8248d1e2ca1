// Log streams as an admin manages them, without HTTP: a destination checked before it is kept
// (addresses under the same policy as webhooks, STREAM_ALLOW_PRIVATE lifting it; a directory only
// under STREAM_DIRECTORY), its token or key sealed by the secret box and never shown again (an
// HTTPS stream's signing secret is made here and shown once), every change an administrators'
// trail entry, and each stream's lag. routes/streams.ts parses, calls one method and shapes the answer.
import { X509Certificate } from 'node:crypto';
import type { JsonObject } from '@audit-ledger/core';
import type { AdminTrail, TrailActor } from '../ingestion/recorder.js';
import { InputError, NotFoundError } from '../kernel/domain-error.js';
import { iso } from '../kernel/time.js';
import { uuidv7 } from '../ledger/uuidv7.js';
import type { LedgerStore } from '../store/ledger.js';
import type { SecretBox } from '../store/secret-box.js';
import type { StreamBatchRow, StreamRow, StreamStore } from '../store/streams.js';
import { newWebhookSecret } from '../webhooks/secrets.js';
import { type Resolver, urlProblem } from '../egress/address-policy.js';
import type { DestinationConfig } from './destinations.js';
import type { StreamFilter } from './delivery.js';
import type { StreamFormat } from './formats.js';

export type { StreamRow, StreamBatchRow };

/** What an admin sends: the destination with its secret (a Splunk token, a Datadog API key). */
export type DestinationInput = DestinationConfig & { token?: string | undefined; api_key?: string | undefined };

export interface StreamInput {
  name: string;
  destination: DestinationInput;
  format: StreamFormat;
  filter?: StreamFilter | undefined;
  /** `now` (the default): entries appended from now on; `beginning`: the whole ledger; or a seq to backfill from. */
  start?: 'now' | 'beginning' | { from_seq: number } | undefined;
  retry_window_seconds?: number | undefined;
}

export interface StreamChange {
  name?: string | undefined;
  destination?: DestinationInput | undefined;
  format?: StreamFormat | undefined;
  filter?: StreamFilter | undefined;
  retry_window_seconds?: number | undefined;
}

export interface StreamLag {
  entries: number;
  seconds: number;
}

export const DEFAULT_RETRY_WINDOW_SECONDS = 86_400;

export interface LogStreamsDeps {
  streamStore: StreamStore;
  ledger: Pick<LedgerStore, 'getChainHead' | 'getEntriesBySeq'>;
  secretBox: Pick<SecretBox, 'seal'>;
  trail: Pick<AdminTrail, 'record'>;
  clock: () => number;
  config: { streamAllowPrivate: boolean };
  resolveHost: Resolver;
  /** Wakes this process's delivery (a new or resumed stream goes at once). */
  kick: () => void;
}

export class LogStreams {
  constructor(private readonly deps: LogStreamsDeps) {}

  /** A new stream; an HTTPS stream's signing secret is in the answer (this once). */
  async create(companyId: string, input: StreamInput, actor: TrailActor): Promise<{ row: StreamRow; secret?: string }> {
    const { streamStore, clock, trail } = this.deps;
    const { config, secret, generated } = await this.destination(input.destination, input.format);
    const head = await this.deps.ledger.getChainHead(companyId);
    const size = head ? head.lastSeq + 1 : 0;
    const start = input.start ?? 'now';
    const cursor = start === 'now' ? size : start === 'beginning' ? 0 : start.from_seq;
    if (cursor > size) throw new InputError([{ field: '/body/start/from_seq', message: `is past the end of the ledger (it holds ${size} entries, seq 0–${size - 1})` }]);
    const now = iso(clock());
    const row: StreamRow = {
      company_id: companyId,
      stream_id: uuidv7(clock()),
      name: input.name,
      destination_type: config.type,
      destination: JSON.stringify(config),
      secret_encrypted: secret === null ? null : this.deps.secretBox.seal(secret),
      format: input.format,
      filter: JSON.stringify(cleanFilter(input.filter)),
      status: 'active',
      status_reason: null,
      cursor_seq: cursor,
      pending_to_seq: null,
      pending_checkpoint_size: null,
      last_checkpoint_size: null,
      last_checkpoint_root: null,
      attempts: 0,
      next_attempt_at: now,
      failing_since: null,
      last_error: null,
      retry_window_seconds: input.retry_window_seconds ?? DEFAULT_RETRY_WINDOW_SECONDS,
      lease_owner: null,
      lease_until: null,
      delivered_batches: 0,
      delivered_entries: 0,
      last_delivered_at: null,
      created_at: now,
      updated_at: now,
    };
    // Recorded first: a stream that starts now sends its own creation record as its first entry.
    await trail.record(companyId, 'stream.created', actor, { stream_id: row.stream_id, name: row.name, destination: config as unknown as JsonObject, format: row.format, filter: cleanFilter(input.filter) as JsonObject, cursor_seq: cursor });
    await streamStore.insert(row);
    this.deps.kick();
    return generated ? { row, secret: generated } : { row };
  }

  list(companyId: string): Promise<StreamRow[]> {
    return this.deps.streamStore.list(companyId);
  }

  async get(companyId: string, streamId: string): Promise<StreamRow> {
    const s = await this.deps.streamStore.get(companyId, streamId);
    if (!s) throw new NotFoundError(`No log stream ${streamId}`);
    return s;
  }

  /** Changes what and where a stream sends; its cursor stays (nothing is sent twice or skipped). */
  async update(companyId: string, streamId: string, change: StreamChange, actor: TrailActor): Promise<{ row: StreamRow; secret?: string }> {
    const current = await this.get(companyId, streamId);
    const format = change.format ?? (current.format as StreamFormat);
    let dest: Awaited<ReturnType<LogStreams['destination']>> | undefined;
    if (change.destination !== undefined) dest = await this.destination(change.destination, format);
    else if (change.format !== undefined) this.checkFormat(JSON.parse(current.destination) as DestinationConfig, format);
    const now = iso(this.deps.clock());
    await this.deps.streamStore.update(companyId, streamId, {
      ...(change.name !== undefined ? { name: change.name } : {}),
      ...(change.format !== undefined ? { format: change.format } : {}),
      ...(change.filter !== undefined ? { filter: JSON.stringify(cleanFilter(change.filter)) } : {}),
      ...(change.retry_window_seconds !== undefined ? { retry_window_seconds: change.retry_window_seconds } : {}),
      ...(dest ? { destination_type: dest.config.type, destination: JSON.stringify(dest.config), secret_encrypted: dest.secret === null ? null : this.deps.secretBox.seal(dest.secret) } : {}),
      updated_at: now,
    });
    const changed: JsonObject = {};
    if (change.name !== undefined) changed.name = change.name;
    if (change.format !== undefined) changed.format = change.format;
    if (change.filter !== undefined) changed.filter = cleanFilter(change.filter) as JsonObject;
    if (change.retry_window_seconds !== undefined) changed.retry_window_seconds = change.retry_window_seconds;
    if (dest) changed.destination = dest.config as unknown as JsonObject;
    await this.deps.trail.record(companyId, 'stream.updated', actor, { stream_id: streamId, changed });
    const row = await this.get(companyId, streamId);
    return dest?.generated ? { row, secret: dest.generated } : { row };
  }

  /** Stops sending; the cursor stays where it is. */
  async pause(companyId: string, streamId: string, actor: TrailActor): Promise<StreamRow> {
    await this.get(companyId, streamId);
    await this.deps.streamStore.update(companyId, streamId, { status: 'paused', status_reason: 'paused by an admin', updated_at: iso(this.deps.clock()) });
    await this.deps.trail.record(companyId, 'stream.paused', actor, { stream_id: streamId });
    return this.get(companyId, streamId);
  }

  /** Sends again from the cursor (a paused or failed stream), at once and with a new retry window. */
  async resume(companyId: string, streamId: string, actor: TrailActor): Promise<StreamRow> {
    const before = await this.get(companyId, streamId);
    const now = iso(this.deps.clock());
    await this.deps.streamStore.update(companyId, streamId, { status: 'active', status_reason: null, attempts: 0, failing_since: null, next_attempt_at: now, updated_at: now });
    await this.deps.trail.record(companyId, 'stream.resumed', actor, { stream_id: streamId, was: before.status, cursor_seq: before.cursor_seq });
    this.deps.kick();
    return this.get(companyId, streamId);
  }

  async remove(companyId: string, streamId: string, actor: TrailActor): Promise<void> {
    if (!(await this.deps.streamStore.remove(companyId, streamId))) throw new NotFoundError(`No log stream ${streamId}`);
    await this.deps.trail.record(companyId, 'stream.deleted', actor, { stream_id: streamId });
  }

  async batches(companyId: string, streamId: string, f: { beforeFrom?: number | undefined; limit: number }): Promise<StreamBatchRow[]> {
    await this.get(companyId, streamId);
    return this.deps.streamStore.batches(companyId, streamId, f);
  }

  /** Entries appended after the stream's cursor, and how old the oldest of them is. */
  async lag(row: StreamRow): Promise<StreamLag> {
    const head = await this.deps.ledger.getChainHead(row.company_id);
    const entries = Math.max(0, (head ? head.lastSeq + 1 : 0) - row.cursor_seq);
    if (entries === 0) return { entries, seconds: 0 };
    const [oldest] = await this.deps.ledger.getEntriesBySeq(row.company_id, [row.cursor_seq]);
    return { entries, seconds: oldest ? Math.max(0, Math.round((this.deps.clock() - Date.parse(oldest.created_at)) / 1000)) : 0 };
  }

  private checkFormat(d: { type: string }, format: StreamFormat): void {
    if (format === 'cef' && d.type !== 'syslog' && d.type !== 'directory') throw new InputError([{ field: '/body/format', message: `cef is a syslog format: a ${d.type} destination takes ledger or ocsf (JSON)` }]);
  }

  /** The destination as kept, its secret apart, and the secret generated for it (an HTTPS stream's). */
  private async destination(input: DestinationInput, format: StreamFormat): Promise<{ config: DestinationConfig; secret: string | null; generated?: string }> {
    this.checkFormat(input, format);
    const bad = (field: string, message: string) => new InputError([{ field: `/body/destination/${field}`, message }]);
    const allowPrivate = this.deps.config.streamAllowPrivate;
    const checkCa = (ca: string | undefined) => {
      if (ca === undefined) return;
      const pems = ca.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
      if (pems.length === 0) throw bad('ca', 'is not a PEM certificate (-----BEGIN CERTIFICATE----- …)');
      for (const pem of pems) {
        try {
          new X509Certificate(pem);
        } catch (err) {
          throw bad('ca', `holds a certificate that does not parse: ${(err as Error).message}`);
        }
      }
    };
    const checkUrl = async (url: string) => {
      const parsed = URL.canParse(url) ? new URL(url) : null;
      if (parsed?.protocol === 'http:' && !allowPrivate) throw bad('url', 'must be https (plain http is allowed only with STREAM_ALLOW_PRIVATE=true, for a receiver on your own network)');
      const problem = await urlProblem(url, allowPrivate, this.deps.resolveHost, 'STREAM_ALLOW_PRIVATE');
      if (problem) throw bad('url', problem);
    };
    switch (input.type) {
      case 'syslog': {
        checkCa(input.ca);
        // The host under the same address policy as a URL's (the scheme and port only carry it).
        const problem = await urlProblem(`https://${input.host.includes(':') ? `[${input.host}]` : input.host}:${input.port}/`, allowPrivate, this.deps.resolveHost, 'STREAM_ALLOW_PRIVATE');
        if (problem) throw bad('host', problem);
        return { config: { type: 'syslog', host: input.host, port: input.port, ...(input.server_name ? { server_name: input.server_name } : {}), ...(input.ca ? { ca: input.ca } : {}), ...(input.app_name ? { app_name: input.app_name } : {}) }, secret: null };
      }
      case 'splunk_hec':
        checkCa(input.ca);
        await checkUrl(input.url);
        if (!input.token) throw bad('token', 'is required: the HTTP Event Collector token');
        return { config: { type: 'splunk_hec', url: input.url, ...(input.index ? { index: input.index } : {}), ...(input.sourcetype ? { sourcetype: input.sourcetype } : {}), ...(input.ca ? { ca: input.ca } : {}) }, secret: input.token };
      case 'datadog':
        await checkUrl(input.url);
        if (!input.api_key) throw bad('api_key', 'is required: a Datadog API key');
        return { config: { type: 'datadog', url: input.url, ...(input.service ? { service: input.service } : {}), ...(input.tags ? { tags: input.tags } : {}) }, secret: input.api_key };
      case 'https': {
        checkCa(input.ca);
        await checkUrl(input.url);
        const generated = newWebhookSecret();
        return { config: { type: 'https', url: input.url, ...(input.ca ? { ca: input.ca } : {}) }, secret: generated, generated };
      }
      case 'directory':
        return { config: { type: 'directory', folder: input.folder }, secret: null };
    }
  }
}

/** The filter as kept: only the lists given, each without repeats. */
function cleanFilter(f: StreamFilter | undefined): StreamFilter {
  const out: StreamFilter = {};
  if (f?.event_types?.length) out.event_types = [...new Set(f.event_types)];
  if (f?.sources?.length) out.sources = [...new Set(f.sources)];
  if (f?.agent_ids?.length) out.agent_ids = [...new Set(f.agent_ids)];
  return out;
}
