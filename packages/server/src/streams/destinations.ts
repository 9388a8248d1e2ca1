// Where a log stream sends its batches, and what counts as received at each: syslog over TLS
// (RFC 5425, octet-counted RFC 5424 messages; the receiver's orderly close after reading our
// end of the stream), Splunk's HTTP Event Collector (200, then its indexer acknowledgement when
// the channel has one), Datadog's logs intake (2xx), any HTTPS NDJSON receiver (2xx; signed like
// webhooks, with the batch id as Idempotency-Key), and a directory of sealed segments (the file
// renamed into place after fsync). Every send throws on anything else, and the stream retries.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isIP } from 'node:net';
import tls from 'node:tls';
import { retryAfterMs, type StreamBatchHeader } from '@audit-ledger/core';
import { fetch, type Agent } from 'undici';
import { readBounded } from '../egress/bounded.js';
import { signWebhook } from '../webhooks/signature.js';
import { isPrivateAddress, pinnedAgent, type Resolver, STREAM_PRIVATE_HINT } from '../egress/address-policy.js';
import type { StreamFormat } from './formats.js';

export const DESTINATION_TYPES = ['syslog', 'splunk_hec', 'datadog', 'https', 'directory'] as const;
export type DestinationType = (typeof DESTINATION_TYPES)[number];

/** A destination as kept (its secret apart, sealed). */
export type DestinationConfig =
  | { type: 'syslog'; host: string; port: number; server_name?: string | undefined; ca?: string | undefined; app_name?: string | undefined }
  | { type: 'splunk_hec'; url: string; index?: string | undefined; sourcetype?: string | undefined; ca?: string | undefined }
  | { type: 'datadog'; url: string; service?: string | undefined; tags?: string | undefined }
  | { type: 'https'; url: string; ca?: string | undefined }
  | { type: 'directory'; folder: string };

/** One batch as a destination sends it: the header's values and one rendered line per message (the header's first). */
export interface Outbound {
  streamId: string;
  batchId: string;
  header: StreamBatchHeader;
  format: StreamFormat;
  lines: string[];
  /** Per line: the entry's event type, or null for the header (syslog's MSGID and severity). */
  eventTypes: Array<string | null>;
  failures: boolean[];
}

export interface DestinationDeps {
  allowPrivate: boolean;
  resolve: Resolver;
  /** Root of this company's directory destinations (STREAM_DIRECTORY/<company_id>). */
  directoryRoot: string;
  clock: () => number;
}

export interface Destination {
  send(o: Outbound, signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

/** Splunk's answers (and any receiver's) are read up to this many bytes. */
const MAX_ANSWER_BYTES = 64 * 1024;
const HOSTNAME = os.hostname().replace(/[^\x21-\x7e]/g, '') || '-';

export function openDestination(config: DestinationConfig, secret: string | null, deps: DestinationDeps): Destination {
  switch (config.type) {
    case 'syslog':
      return new SyslogDestination(config, deps);
    case 'directory':
      return new DirectoryDestination(path.join(deps.directoryRoot, config.folder));
    default:
      return new HttpDestination(config, secret, deps);
  }
}

/** RFC 5424 header fields: printable US-ASCII, at most `max` characters, or the nil value. */
const token = (v: string, max: number) => v.replace(/[^\x21-\x7e]/g, '').slice(0, max) || '-';
const sdValue = (v: string) => v.replace(/[\\"\]]/g, (c) => `\\${c}`);

class SyslogDestination implements Destination {
  constructor(
    private readonly config: Extract<DestinationConfig, { type: 'syslog' }>,
    private readonly deps: DestinationDeps,
  ) {}

  /** One RFC 5424 message (facility 13, log audit; warning for failures) framed by its octet count (RFC 6587 §3.4.1). */
  private frame(o: Outbound, i: number, now: string): Buffer {
    const type = o.eventTypes[i] ?? null;
    const pri = 13 * 8 + (o.failures[i] ? 4 : 6);
    const sd = `[audit-ledger@32473 stream="${sdValue(o.streamId)}" batch="${sdValue(o.batchId)}"]`;
    const msg = Buffer.from(`<${pri}>1 ${now} ${HOSTNAME} ${token(this.config.app_name ?? 'audit-ledger', 48)} - ${token(type ?? 'stream-batch', 32)} ${sd} ${o.lines[i] as string}`, 'utf8');
    return Buffer.concat([Buffer.from(`${msg.length} `), msg]);
  }

  private async address(): Promise<string> {
    const host = this.config.host;
    const addresses = isIP(host) ? [host] : (await this.deps.resolve(host)).map((a) => a.address);
    const first = addresses[0];
    if (!first) throw new Error(`host ${host} does not resolve`);
    const bad = this.deps.allowPrivate ? undefined : addresses.find(isPrivateAddress);
    if (bad) throw new Error(`refused: ${host} resolves to ${bad}, ${STREAM_PRIVATE_HINT}`);
    return first;
  }

  async send(o: Outbound, signal: AbortSignal): Promise<void> {
    const address = await this.address();
    const now = new Date(this.deps.clock()).toISOString();
    const payload = Buffer.concat(o.lines.map((_, i) => this.frame(o, i, now)));
    const { host, port, server_name, ca } = this.config;
    await new Promise<void>((resolve, reject) => {
      const socket = tls.connect({ host: address, port, servername: server_name ?? (isIP(host) ? undefined : host), ...(ca ? { ca } : {}), rejectUnauthorized: true });
      let settled = false;
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        socket.destroy();
        reject(err);
      };
      const onAbort = () => fail(new Error('timed out before the syslog server closed the connection'));
      signal.addEventListener('abort', onAbort, { once: true });
      let written = false;
      socket.once('error', (err) => fail(err));
      socket.once('secureConnect', () => socket.end(payload));
      socket.once('finish', () => (written = true));
      // The server closes its end only after reading ours to the end: every message was taken. A
      // close before our end was even written is a refusal, not a receipt.
      socket.once('end', () => {
        if (settled) return;
        if (!written) return fail(new Error('the syslog server closed the connection before the batch was written'));
        settled = true;
        signal.removeEventListener('abort', onAbort);
        socket.destroy();
        resolve();
      });
      socket.once('close', () => fail(new Error('the syslog connection closed before the server finished reading')));
    });
  }

  async close(): Promise<void> {}
}

class HttpDestination implements Destination {
  private readonly agent: Agent;

  constructor(
    private readonly config: Extract<DestinationConfig, { type: 'splunk_hec' | 'datadog' | 'https' }>,
    private readonly secret: string | null,
    private readonly deps: DestinationDeps,
  ) {
    this.agent = pinnedAgent(deps.allowPrivate, deps.resolve, 'ca' in config && config.ca ? { ca: config.ca } : undefined, 'STREAM_ALLOW_PRIVATE');
  }

  private async post(url: string, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<{ status: number; text: string }> {
    let res;
    try {
      res = await fetch(url, { method: 'POST', redirect: 'manual', dispatcher: this.agent, signal, headers: { 'user-agent': 'audit-ledger-streams', ...headers }, body });
    } catch (err) {
      const e = err as Error & { cause?: { code?: string; message?: string } };
      if (e.cause?.code === 'EWEBHOOKPRIVATE') throw new Error(`refused: ${e.cause.message ?? ''}`);
      throw new Error(e.name === 'TimeoutError' || e.name === 'AbortError' ? 'timed out' : `${e.cause?.code ?? e.name}: ${e.cause?.message ?? e.message}`);
    }
    const text = await readBounded(res as unknown as Response, MAX_ANSWER_BYTES).catch(() => '');
    if (res.status < 200 || res.status >= 300) {
      // 429 and 503 may say when to come back (Retry-After): the stream waits at least that long.
      const wait = res.status === 429 || res.status === 503 ? retryAfterMs(res.headers.get('retry-after'), this.deps.clock()) : undefined;
      throw Object.assign(new Error(`HTTP ${res.status}${text ? `: ${text.slice(0, 200)}` : ''}`), wait === undefined ? {} : { retryAfterMs: wait });
    }
    return { status: res.status, text };
  }

  async send(o: Outbound, signal: AbortSignal): Promise<void> {
    const c = this.config;
    const json = o.format !== 'cef';
    if (c.type === 'splunk_hec') {
      const base = c.url.replace(/\/+$/, '');
      const headers = { authorization: `Splunk ${this.secret ?? ''}`, 'x-splunk-request-channel': o.streamId, 'content-type': 'application/json' };
      const time = (this.deps.clock() / 1000).toFixed(3);
      const meta = `"time":${time},"host":${JSON.stringify(HOSTNAME)},"source":"audit-ledger","sourcetype":${JSON.stringify(c.sourcetype ?? (json ? '_json' : 'cef'))}${c.index ? `,"index":${JSON.stringify(c.index)}` : ''}`;
      const body = o.lines.map((l) => `{${meta},"event":${json ? l : JSON.stringify(l)}}`).join('\n');
      const answer = await this.post(`${base}/services/collector/event`, headers, body, signal);
      const ackId = (() => {
        try {
          return (JSON.parse(answer.text) as { ackId?: unknown }).ackId;
        } catch {
          return undefined;
        }
      })();
      if (typeof ackId !== 'number') return; // the channel has no indexer acknowledgement: 200 is receipt
      // Indexer acknowledgement: received means indexed; not acknowledged in time means send again.
      for (let wait = 100; ; wait = Math.min(wait * 2, 1000)) {
        const acks = await this.post(`${base}/services/collector/ack?channel=${encodeURIComponent(o.streamId)}`, headers, JSON.stringify({ acks: [ackId] }), signal);
        let done = false;
        try {
          done = (JSON.parse(acks.text) as { acks?: Record<string, boolean> }).acks?.[String(ackId)] === true;
        } catch {
          done = false;
        }
        if (done) return;
        await new Promise<void>((resolve, reject) => {
          const t = setTimeout(resolve, wait);
          signal.addEventListener('abort', () => (clearTimeout(t), reject(new Error(`Splunk did not acknowledge ackId ${ackId} in time`))), { once: true });
        });
      }
    }
    if (c.type === 'datadog') {
      const item = (l: string) => `{"ddsource":"audit-ledger","service":${JSON.stringify(c.service ?? 'audit-ledger')},"hostname":${JSON.stringify(HOSTNAME)}${c.tags ? `,"ddtags":${JSON.stringify(c.tags)}` : ''},"message":${JSON.stringify(l)}}`;
      await this.post(c.url, { 'dd-api-key': this.secret ?? '', 'content-type': 'application/json' }, `[${o.lines.map(item).join(',')}]`, signal);
      return;
    }
    // Generic HTTPS: NDJSON, signed like a webhook (Standard Webhooks), the batch id to deduplicate by.
    const body = `${o.lines.join('\n')}\n`;
    const ts = Math.floor(this.deps.clock() / 1000);
    await this.post(
      c.url,
      {
        'content-type': 'application/x-ndjson',
        'idempotency-key': o.batchId,
        'webhook-id': o.batchId,
        'webhook-timestamp': String(ts),
        'webhook-signature': signWebhook(this.secret ?? '', o.batchId, ts, body),
      },
      body,
      signal,
    );
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/** Sealed segments: one file per batch, written aside, fsynced, then renamed into place and never changed. */
class DirectoryDestination implements Destination {
  private narrowed = false;
  constructor(private readonly dir: string) {}

  async send(o: Outbound): Promise<void> {
    const h = o.header;
    const name = `${String(h.from_seq).padStart(20, '0')}-${String(h.to_seq).padStart(20, '0')}-${o.batchId}.${o.format === 'cef' ? 'cef' : 'ndjson'}`;
    const final = path.join(this.dir, name);
    // Private like the rest of the data directory: the folder (and any parent it makes) 0700,
    // each segment 0600; a folder an earlier version made 0755 is narrowed.
    await fs.promises.mkdir(this.dir, { recursive: true, mode: 0o700 });
    if (!this.narrowed) {
      await fs.promises.chmod(this.dir, 0o700);
      this.narrowed = true;
    }
    const body = `${o.lines.join('\n')}\n`;
    let target = name;
    if (fs.existsSync(final)) {
      // Sealed: the same batch sent again (a retry) is there already. A segment of the same name
      // with other contents is another history for the same entries (the ledger was rolled back
      // or forked): never overwritten, the new batch is kept beside it, so the copy holds both and
      // its verifier fails (stream_fork) instead of the archive quietly missing one history.
      const existing = await fs.promises.readFile(final, 'utf8');
      if (existing === body) return;
      const digest = createHash('sha256').update(body).digest('hex').slice(0, 16);
      target = name.replace(/\.(cef|ndjson)$/, `.fork-${digest}.$1`);
      if (fs.existsSync(path.join(this.dir, target))) return;
    }
    const tmp = path.join(this.dir, `.${target}.tmp`);
    const fh = await fs.promises.open(tmp, 'w', 0o600);
    try {
      await fh.writeFile(body);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fs.promises.rename(tmp, path.join(this.dir, target));
    const d = await fs.promises.open(this.dir, 'r');
    try {
      await d.sync();
    } finally {
      await d.close();
    }
  }

  async close(): Promise<void> {}
}
