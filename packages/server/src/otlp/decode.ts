// OTLP/HTTP request bodies (OTLP specification 1.x, opentelemetry-proto v1): the binary protobuf
// encoding and the JSON encoding, both decoded into one model, so the mapping to ledger events
// (map.ts) is written once. Field numbers and names follow opentelemetry/proto/{common,resource,
// trace,logs}/v1/*.proto; the JSON encoding is the proto3 JSON mapping with lowerCamelCase names,
// trace and span ids as hex (not base64), enums as integers (names accepted too), and 64-bit
// integers as decimal strings or numbers, read here without rounding.
//
// Everything here is attacker-controlled. A body that is not an OTLP request at all (bad wire
// format, wrong JSON shape) throws OtlpDecodeError: the whole request is refused with a 400. What
// is wrong with one span or log record only (a bad id, a reserved key) is left to the mapping,
// which rejects that item alone (an OTLP partial success).
import { jsonLogRecord, jsonRequest, jsonSpan } from './decode-json.js';
import { pbLogRecord, pbRequest, pbSpan } from './decode-protobuf.js';
import type { LogRecord, ResourceGroup, Span } from './model.js';

export { parseOtlpJson } from './decode-json.js';
export * from './model.js';

export function decodeTraces(body: { protobuf: Uint8Array } | { json: unknown }): Array<ResourceGroup<Span>> {
  return 'protobuf' in body ? pbRequest(body.protobuf, pbSpan, 'spans') : jsonRequest(body.json, 'traces', jsonSpan);
}

export function decodeLogs(body: { protobuf: Uint8Array } | { json: unknown }): Array<ResourceGroup<LogRecord>> {
  return 'protobuf' in body ? pbRequest(body.protobuf, pbLogRecord, 'logs') : jsonRequest(body.json, 'logs', jsonLogRecord);
}
