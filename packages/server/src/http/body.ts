// How request bodies are read: JSON only, UTF-8 only, optionally compressed.
//
// - Content-Type must be application/json; a charset other than UTF-8 is answered 415
//   (RFC 8259 §8.1: JSON exchanged between systems is UTF-8), never reinterpreted.
// - Content-Encoding gzip, deflate or br is decoded (agents behind proxies send it);
//   MAX_BODY_BYTES counts the decoded size, so a small compressed bomb gets 413. Any other
//   encoding, or more than one, is answered 415: a body is never read in an encoding it is not.
// - The bytes are parsed by json-body.ts, which refuses anything that could not be stored
//   exactly as sent. An empty body is "no body" (many clients send Content-Type: application/json
//   on every request, DELETE included); routes that need one answer 400.
import type { Readable } from 'node:stream';
import { Transform } from 'node:stream';
import zlib from 'node:zlib';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { JsonBodyError, parseJsonBody } from './json-body.js';
import { ApiError } from './problems.js';

// A Map, not an object: the coding is the client's text, and "constructor" must find nothing.
const DECODERS = new Map<string, () => zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress>([
  ['gzip', () => zlib.createGunzip()],
  ['x-gzip', () => zlib.createGunzip()],
  ['deflate', () => zlib.createInflate()],
  ['br', () => zlib.createBrotliDecompress()],
]);

/** The 400 a refused body gets, naming the place in it. */
function bodyProblem(err: JsonBodyError): ApiError {
  return new ApiError(400, err.code, err.message, { errors: [{ field: `/body${err.pointer}`, message: err.message }] });
}

/** 415 for a JSON body declared in another charset than UTF-8 (every JSON route, OTLP included). */
export function checkCharset(request: FastifyRequest): void {
  const type = request.headers['content-type'] ?? '';
  const m = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(type);
  if (m && !/^utf-?8$/i.test(m[1] as string)) {
    throw new ApiError(415, 'unsupported_media_type', `charset=${m[1]} is not supported; send the JSON body as UTF-8 (charset=utf-8 or no charset)`);
  }
}

function decodeStream(request: FastifyRequest, payload: Readable): Readable {
  const header = request.headers['content-encoding'];
  if (header === undefined) return payload;
  const codings = header
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0) return payload;
  const make = codings.length === 1 ? DECODERS.get(codings[0] as string) : undefined;
  if (!make) {
    throw new ApiError(415, 'unsupported_media_type', `Content-Encoding ${header} is not supported; send identity, gzip, deflate or br (one of them)`);
  }
  // The decoded size is counted here, not only by Fastify: when Fastify's limit is hit it stops
  // listening and drains what is left, which would pull the whole bomb through the decoder (a
  // 1.6 KB brotli body of 1 GiB of zeros kept a core busy for a minute after its 413). Past the
  // limit, or as soon as anyone destroys the output, the decoder and the socket's stream stop.
  const limit = request.routeOptions.bodyLimit ?? Number.POSITIVE_INFINITY;
  const decoder = make();
  let decoded = 0;
  let encoded = 0;
  const out = new Transform({
    transform(chunk: Buffer, _enc, callback) {
      decoded += chunk.length;
      if (decoded > limit) return callback(new ApiError(413, 'payload_too_large', `The decoded body is larger than ${limit} bytes (MAX_BODY_BYTES counts decoded bytes)`));
      callback(null, chunk);
    },
  }) as Transform & { receivedEncodedLength?: number };
  const stop = () => {
    payload.unpipe(decoder);
    decoder.unpipe(out);
    decoder.destroy();
  };
  out.on('close', stop);
  out.on('error', stop);
  // Fastify compares Content-Length with what arrived on the wire, not with the decoded size.
  payload.on('data', (chunk: Buffer) => {
    encoded += chunk.length;
    out.receivedEncodedLength = encoded;
  });
  decoder.on('error', (err) => out.destroy(new ApiError(400, 'malformed_json', `The ${codings[0]} body could not be decoded: ${err.message}`)));
  payload.on('error', (err) => out.destroy(err));
  payload.pipe(decoder).pipe(out);
  return out;
}

export function registerJsonBodies(app: FastifyInstance): void {
  // JSON only: any other body type is answered 415 rather than parsed as a string.
  app.removeContentTypeParser(['text/plain', 'application/json']);
  app.addHook('preParsing', (request, _reply, payload, done) => {
    try {
      done(null, decodeStream(request, payload));
    } catch (err) {
      done(err as Error);
    }
  });
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    try {
      checkCharset(request);
      const bytes = body as Buffer;
      if (bytes.length === 0) return done(null, undefined);
      done(null, parseJsonBody(bytes));
    } catch (err) {
      done(err instanceof JsonBodyError ? bodyProblem(err) : (err as Error), undefined);
    }
  });
}
