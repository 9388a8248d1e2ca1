// Log streams (docs/integrations.md "Log streams"): an admin sends the company's ledger, as it is
// appended, to syslog, Splunk, Datadog, an HTTPS receiver or a directory, every batch verifiable.
// Tokens and keys are write-only; an HTTPS stream's signing secret is shown once.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { principalOf } from '../auth/authenticate.js';
import { ADMIN } from '../auth/rules.js';
import { actorOf } from '../auth/authenticate.js';
import { page, seqCursor } from '../http/cursor.js';
import { problemResponses } from '../http/problems.js';
import { component, ServiceId, Uuid } from '../kernel/shapes.js';
import type { Services } from '../services.js';
import type { DestinationConfig } from '../streams/destinations.js';
import { STREAM_FORMATS } from '../streams/formats.js';
import type { LogStreams, StreamRow } from '../streams/service.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
const Ca = Type.Optional(Type.String({ minLength: 1, maxLength: 20_000, description: 'PEM CA certificate(s) the destination\'s TLS certificate must chain to (default: the system\'s CAs)' }));
const Url = Type.String({ minLength: 1, maxLength: 2000 });
const Name = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.:-]+$' });

const DestinationIn = Type.Union(
  [
    Type.Object(
      {
        type: Type.Literal('syslog'),
        host: Type.String({ minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9.:_-]+$' }),
        port: Type.Integer({ minimum: 1, maximum: 65535 }),
        server_name: Type.Optional(Type.String({ minLength: 1, maxLength: 253, description: 'Name the TLS certificate must carry (default: host)' })),
        ca: Ca,
        app_name: Type.Optional(Type.String({ minLength: 1, maxLength: 48, pattern: '^[\\x21-\\x7e]+$', description: 'RFC 5424 APP-NAME (default audit-ledger)' })),
      },
      { additionalProperties: false, description: 'RFC 5424 messages over TLS (RFC 5425), octet-counted framing' },
    ),
    Type.Object(
      {
        type: Type.Literal('splunk_hec'),
        url: Type.String({ ...Url, description: 'Base URL of the HTTP Event Collector, e.g. https://splunk.example:8088' }),
        token: Type.String({ minLength: 1, maxLength: 200, description: 'HEC token (write-only: kept encrypted, never shown)' }),
        index: Type.Optional(Name),
        sourcetype: Type.Optional(Name),
        ca: Ca,
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        type: Type.Literal('datadog'),
        url: Type.String({ ...Url, default: 'https://http-intake.logs.datadoghq.com/api/v2/logs', description: 'Logs intake URL of your Datadog site' }),
        api_key: Type.String({ minLength: 1, maxLength: 200, description: 'Datadog API key (write-only: kept encrypted, never shown)' }),
        service: Type.Optional(Name),
        tags: Type.Optional(Type.String({ maxLength: 500, description: 'ddtags, e.g. env:prod,team:soc' })),
      },
      { additionalProperties: false },
    ),
    Type.Object({ type: Type.Literal('https'), url: Url, ca: Ca }, { additionalProperties: false, description: 'NDJSON POSTs signed like webhooks; the signing secret is in the answer once' }),
    Type.Object({ type: Type.Literal('directory'), folder: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$', description: 'Folder under STREAM_DIRECTORY/<company_id>' }) }, { additionalProperties: false }),
  ],
  { description: 'Where the stream sends, by type', ...component('StreamDestination') },
);

const Filter = Type.Object(
  {
    event_types: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 100, description: 'Only these event types' })),
    sources: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 100, description: 'Only these sources' })),
    agent_ids: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 100, description: 'Only these agents' })),
  },
  { additionalProperties: false, description: 'Which entries the stream sends (every list given must match; none: every entry)', ...component('StreamFilter') },
);

const Format = Type.Union(
  STREAM_FORMATS.map((f) => Type.Literal(f)),
  { description: 'ledger: the ledger\'s own JSON; ocsf: OCSF API Activity events; cef: CEF lines (syslog and directory only). Every format carries the proofs.' },
);

const Stream = Type.Object({
  id: Uuid,
  name: Type.String(),
  destination: Type.Object({ type: Type.String() }, { additionalProperties: true, description: 'The destination without its token or key' }),
  has_secret: Type.Boolean({ description: 'Whether a token, key or signing secret is kept (encrypted) for the destination' }),
  format: Type.String(),
  filter: Filter,
  status: Type.String({ description: 'active, paused (by an admin) or failed (nothing delivered for its whole retry window)' }),
  status_reason: Nullable(Type.String()),
  cursor_seq: Type.Integer({ description: 'The first seq no delivered batch covers yet' }),
  lag: Type.Object({ entries: Type.Integer({ description: 'Entries appended after the cursor' }), seconds: Type.Integer({ description: 'Age of the oldest of them' }) }),
  attempts: Type.Integer({ description: 'Failed attempts in a row' }),
  failing_since: Nullable(Type.String({ format: 'date-time' })),
  last_error: Nullable(Type.String()),
  next_attempt_at: Type.String({ format: 'date-time' }),
  retry_window_seconds: Type.Integer(),
  delivered_batches: Type.Integer(),
  delivered_entries: Type.Integer(),
  last_delivered_at: Nullable(Type.String({ format: 'date-time' })),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
}, component('Stream'));
const StreamWithSecret = Type.Object({ ...Stream.properties, secret: Type.Optional(Type.String({ description: 'An https stream\'s signing secret (whsec_…, Standard Webhooks). Shown only now: store it.' })) }, component('StreamWithSecret'));

const RetryWindow = Type.Integer({ minimum: 60, maximum: 30 * 86_400, description: 'How long a stream keeps retrying before it is marked failed (default 86400)' });

async function view(streams: LogStreams, s: StreamRow) {
  return {
    id: s.stream_id,
    name: s.name,
    destination: JSON.parse(s.destination) as DestinationConfig,
    has_secret: s.secret_encrypted !== null,
    format: s.format,
    filter: JSON.parse(s.filter) as Record<string, string[]>,
    status: s.status,
    status_reason: s.status_reason,
    cursor_seq: s.cursor_seq,
    lag: await streams.lag(s),
    attempts: s.attempts,
    failing_since: s.failing_since,
    last_error: s.last_error,
    next_attempt_at: s.next_attempt_at,
    retry_window_seconds: s.retry_window_seconds,
    delivered_batches: s.delivered_batches,
    delivered_entries: s.delivered_entries,
    last_delivered_at: s.last_delivered_at,
    created_at: s.created_at,
    updated_at: s.updated_at,
  };
}

export type StreamServices = Pick<Services, 'streams'>;

export function streamRoutes(ctx: StreamServices): FastifyPluginAsyncTypebox {
  return async (app) => {
    const params = Type.Object({ id: ServiceId });
    const answers = { 200: Stream, ...problemResponses(400, 401, 403, 404, 429) };

    app.post(
      '/streams',
      {
        config: ADMIN,
        schema: {
          tags: ['streams'],
          operationId: 'createStream',
          summary: 'Stream the ledger to a SIEM, a syslog server or a directory, every batch verifiable',
          description:
            'Sends each entry the filter selects, in seq order, in batches proven against a signed checkpoint (docs/integrations.md "Log streams"). Delivery is at least once; batch ids are stable, so a receiver can deduplicate. Destinations must be public addresses unless STREAM_ALLOW_PRIVATE=true. Recorded in the administrators\' trail.',
          body: Type.Object(
            {
              name: Type.String({ minLength: 1, maxLength: 200 }),
              destination: DestinationIn,
              format: Format,
              filter: Type.Optional(Filter),
              start: Type.Optional(
                Type.Union([Type.Literal('now'), Type.Literal('beginning'), Type.Object({ from_seq: Type.Integer({ minimum: 0 }) }, { additionalProperties: false })], {
                  description: 'now (default): entries appended from now on; beginning: the whole ledger; {from_seq}: backfill from that seq',
                }),
              ),
              retry_window_seconds: Type.Optional(RetryWindow),
            },
            { additionalProperties: false },
          ),
          response: { 201: StreamWithSecret, ...problemResponses(400, 401, 403, 429) },
        },
      },
      async (request, reply) => {
        const p = principalOf(request);
        const { row, secret } = await ctx.streams.create(p.companyId, request.body, actorOf(p));
        return reply
          .code(201)
          .header('location', `/api/v1/streams/${row.stream_id}`)
          .send({ ...(await view(ctx.streams, row)), ...(secret ? { secret } : {}) });
      },
    );

    app.get(
      '/streams',
      { config: ADMIN, schema: { tags: ['streams'], operationId: 'listStreams', summary: "The company's log streams with their state and lag", description: 'Every stream with its destination (never its token or key), cursor, lag, failures and counts.', response: { 200: Type.Object({ items: Type.Array(Stream) }), ...problemResponses(401, 403, 429) } } },
      async (request) => ({ items: await Promise.all((await ctx.streams.list(principalOf(request).companyId)).map((s) => view(ctx.streams, s))) }),
    );

    app.get(
      '/streams/:id',
      { config: ADMIN, schema: { tags: ['streams'], operationId: 'getStream', summary: 'One log stream', description: 'The stream with its cursor, lag and last error.', params, response: answers } },
      async (request) => view(ctx.streams, await ctx.streams.get(principalOf(request).companyId, request.params.id)),
    );

    app.patch(
      '/streams/:id',
      {
        config: ADMIN,
        schema: {
          tags: ['streams'],
          operationId: 'updateStream',
          summary: 'Change a stream: name, destination, format, filter or retry window',
          description: 'The cursor stays: nothing is sent twice or skipped because of the change. A new destination replaces the old one with its token or key (an https destination gets a new signing secret, in the answer once).',
          params,
          body: Type.Object(
            { name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), destination: Type.Optional(DestinationIn), format: Type.Optional(Format), filter: Type.Optional(Filter), retry_window_seconds: Type.Optional(RetryWindow) },
            { additionalProperties: false, minProperties: 1 },
          ),
          response: { 200: StreamWithSecret, ...problemResponses(400, 401, 403, 404, 429) },
        },
      },
      async (request) => {
        const p = principalOf(request);
        const { row, secret } = await ctx.streams.update(p.companyId, request.params.id, request.body, actorOf(p));
        return { ...(await view(ctx.streams, row)), ...(secret ? { secret } : {}) };
      },
    );

    app.post(
      '/streams/:id/pause',
      { config: ADMIN, schema: { tags: ['streams'], operationId: 'pauseStream', summary: 'Stop sending; the cursor stays', description: 'A paused stream sends nothing until resumed, then continues from its cursor.', params, response: answers } },
      async (request) => {
        const p = principalOf(request);
        return view(ctx.streams, await ctx.streams.pause(p.companyId, request.params.id, actorOf(p)));
      },
    );

    app.post(
      '/streams/:id/resume',
      { config: ADMIN, schema: { tags: ['streams'], operationId: 'resumeStream', summary: 'Send again from the cursor (a paused or failed stream)', description: 'Starts at once, with a new retry window.', params, response: answers } },
      async (request) => {
        const p = principalOf(request);
        return view(ctx.streams, await ctx.streams.resume(p.companyId, request.params.id, actorOf(p)));
      },
    );

    app.delete(
      '/streams/:id',
      { config: ADMIN, schema: { tags: ['streams'], operationId: 'deleteStream', summary: 'Delete a stream', description: 'Stops it and forgets its cursor and batches. What it delivered stays at the destination.', params, response: { 204: Type.Null(), ...problemResponses(400, 401, 403, 404, 429) } } },
      async (request, reply) => {
        const p = principalOf(request);
        await ctx.streams.remove(p.companyId, request.params.id, actorOf(p));
        return reply.code(204).send(null);
      },
    );

    app.get(
      '/streams/:id/batches',
      {
        config: ADMIN,
        schema: {
          tags: ['streams'],
          operationId: 'listStreamBatches',
          summary: 'Batches a stream delivered, newest first',
          description: 'Each delivered batch: its id (what the destination received), seq range, entry count, the checkpoint it was proven against and how many attempts it took.',
          params,
          querystring: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }), cursor: Type.Optional(Type.String({ maxLength: 200 })) }, { additionalProperties: false }),
          response: {
            200: Type.Object({
              items: Type.Array(
                Type.Object({
                  batch_id: Uuid,
                  from_seq: Type.Integer(),
                  to_seq: Type.Integer(),
                  entry_count: Type.Integer(),
                  checkpoint_size: Type.Integer(),
                  attempts: Type.Integer(),
                  delivered_at: Type.String({ format: 'date-time' }),
                }),
              ),
              next_cursor: Nullable(Type.String()),
            }),
            ...problemResponses(400, 401, 403, 404, 429),
          },
        },
      },
      async (request) => {
        const q = request.query;
        const rows = await ctx.streams.batches(principalOf(request).companyId, request.params.id, { beforeFrom: seqCursor(q.cursor), limit: q.limit });
        return page(
          rows,
          q.limit,
          (b) => ({ seq: b.from_seq }),
          (b) => ({ batch_id: b.batch_id, from_seq: b.from_seq, to_seq: b.to_seq, entry_count: b.entry_count, checkpoint_size: b.checkpoint_size, attempts: b.attempts, delivered_at: b.delivered_at }),
        );
      },
    );
  };
}
