// OpenTelemetry ingestion: OTLP/HTTP 1.x (https://opentelemetry.io/docs/specs/otlp/#otlphttp)
// at /api/v1/otlp/v1/traces and /api/v1/otlp/v1/logs, so an exporter pointed at
// OTEL_EXPORTER_OTLP_ENDPOINT=<base>/api/v1/otlp sends here. Binary protobuf
// (application/x-protobuf) and JSON (application/json) bodies, gzip or not; the answer has the
// request's encoding: an empty ExportXServiceResponse when every item was committed, or its
// partial_success (how many were refused, and why). Failures of the whole request are problem+json
// like every error of this API (OTel exporters read only the status: 400 is final, 429 and 503
// are retried after Retry-After). Authenticated with the company's API key (X-API-Key, or
// Authorization: Bearer, which OTEL_EXPORTER_OTLP_HEADERS can set).
import { checkCharset } from '../http/body.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { principalOf } from '../auth/authenticate.js';
import { INGEST } from '../auth/rules.js';
import { appendFailure } from '../http/ledger-problems.js';
import { ApiError, problemResponses } from '../http/problems.js';
import { decodeLogs, decodeTraces, OtlpDecodeError, parseOtlpJson } from '../otlp/decode.js';
import type { OtlpResult } from '../otlp/ingest.js';
import type { Services } from '../services.js';

const PROTOBUF = 'application/x-protobuf';
const utf8 = new TextDecoder('utf-8', { fatal: true });

const PartialSuccess = (countName: string) =>
  Type.Object(
    {
      partialSuccess: Type.Optional(
        Type.Object({
          [countName]: Type.String({ description: 'Items refused (int64, as a decimal string per the proto3 JSON mapping)' }),
          errorMessage: Type.String({ description: 'Why, for the first few refused items' }),
        }),
      ),
    },
    { description: 'Export response (JSON encoding). Empty when every item was committed. A protobuf request gets the same message in protobuf.' },
  );

const OtlpBody = Type.Unsafe<unknown>({
  description:
    'An OTLP export request (ExportTraceServiceRequest or ExportLogsServiceRequest), in protobuf or in OTLP/JSON (lowerCamelCase fields, hex trace and span ids). Content-Encoding gzip is accepted.',
});

/** Encodes ExportXServiceResponse { partial_success = 1 { int64 rejected = 1; string error_message = 2 } }. */
function protobufResponse(r: OtlpResult): Buffer {
  if (r.rejected === 0) return Buffer.alloc(0);
  const varint = (n: number) => {
    const out: number[] = [];
    let v = BigInt(n);
    do {
      let b = Number(v & 0x7fn);
      v >>= 7n;
      if (v > 0n) b |= 0x80;
      out.push(b);
    } while (v > 0n);
    return Buffer.from(out);
  };
  const msg = Buffer.from(r.errorMessage, 'utf8');
  const inner = Buffer.concat([Buffer.from([0x08]), varint(r.rejected), Buffer.from([0x12]), varint(msg.length), msg]);
  return Buffer.concat([Buffer.from([0x0a]), varint(inner.length), inner]);
}

export type OtlpServices = Pick<Services, 'otlp'>;

export function otlpRoutes(ctx: OtlpServices): FastifyPluginAsyncTypebox {
  return async (app) => {
    // OTLP bodies have their own JSON rules (64-bit integers as strings or numbers, kept exact),
    // so this plugin replaces the strict JSON parser for its routes only.
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
      try {
        checkCharset(request); // the same rule as every JSON body: UTF-8 or 415, never reinterpreted
      } catch (err) {
        return done(err as Error, undefined);
      }
      try {
        const text = utf8.decode(body as Buffer);
        done(null, { json: parseOtlpJson(text) });
      } catch (err) {
        done(err instanceof OtlpDecodeError ? decodeProblem(err) : new ApiError(400, 'invalid_text', 'The body is not valid UTF-8'), undefined);
      }
    });
    app.addContentTypeParser(PROTOBUF, { parseAs: 'buffer' }, (_request, body, done) => done(null, { protobuf: new Uint8Array(body as Buffer) }));

    const answer = (request: FastifyRequest, reply: FastifyReply, result: OtlpResult, countName: string) => {
      if (request.headers['content-type']?.toLowerCase().startsWith(PROTOBUF)) return reply.type(PROTOBUF).send(protobufResponse(result));
      return result.rejected === 0 ? {} : { partialSuccess: { [countName]: String(result.rejected), errorMessage: result.errorMessage } };
    };
    const bodyOf = (request: FastifyRequest) => {
      const body = request.body as { protobuf: Uint8Array } | { json: unknown } | undefined;
      if (body === undefined) throw new ApiError(400, 'malformed_otlp', 'The body is empty; send an OTLP export request');
      return body;
    };
    const keyOf = (request: FastifyRequest) => {
      const p = principalOf(request);
      return { companyId: p.companyId, keyId: p.kind === 'api_key' ? p.keyId : null };
    };

    app.post(
      '/otlp/v1/traces',
      {
        config: INGEST,
        schema: {
          tags: ['otlp'],
          operationId: 'exportOtlpTraces',
          summary: 'OTLP/HTTP trace export: each span becomes a ledger entry',
          description:
            'Point an OpenTelemetry OTLP/HTTP exporter here (OTEL_EXPORTER_OTLP_ENDPOINT=<base>/api/v1/otlp). GenAI semantic-convention spans map to the event vocabulary (docs/integrations.md). A 200 means every accepted span is committed; refused spans are counted in partialSuccess.',
          consumes: [PROTOBUF, 'application/json'],
          body: OtlpBody,
          response: { 200: PartialSuccess('rejectedSpans'), ...problemResponses(400, 401, 403, 413, 415, 429, 503) },
        },
      },
      async (request, reply) => {
        const { companyId, keyId } = keyOf(request);
        const groups = decodeOr400(() => decodeTraces(bodyOf(request)));
        const result = await ctx.otlp.traces(companyId, keyId, groups).catch((err: unknown) => appendFailure(err, (i) => `/body/span/${i}`));
        return answer(request, reply, result, 'rejectedSpans');
      },
    );

    app.post(
      '/otlp/v1/logs',
      {
        config: INGEST,
        schema: {
          tags: ['otlp'],
          operationId: 'exportOtlpLogs',
          summary: 'OTLP/HTTP log export: each log record becomes a ledger entry',
          description:
            'Point an OpenTelemetry OTLP/HTTP log exporter here. A record names its span (span_id becomes the entry\'s parent_span_id); its event name, or the attribute audit_ledger.event_type, becomes the event type. Refused records are counted in partialSuccess.',
          consumes: [PROTOBUF, 'application/json'],
          body: OtlpBody,
          response: { 200: PartialSuccess('rejectedLogRecords'), ...problemResponses(400, 401, 403, 413, 415, 429, 503) },
        },
      },
      async (request, reply) => {
        const { companyId, keyId } = keyOf(request);
        const groups = decodeOr400(() => decodeLogs(bodyOf(request)));
        const result = await ctx.otlp.logs(companyId, keyId, groups).catch((err: unknown) => appendFailure(err, (i) => `/body/log_record/${i}`));
        return answer(request, reply, result, 'rejectedLogRecords');
      },
    );
  };
}

function decodeProblem(err: OtlpDecodeError): ApiError {
  return new ApiError(400, 'malformed_otlp', err.message, { errors: [{ field: `/body${err.pointer}`, message: err.message }] });
}

function decodeOr400<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof OtlpDecodeError) throw decodeProblem(err);
    throw err;
  }
}
