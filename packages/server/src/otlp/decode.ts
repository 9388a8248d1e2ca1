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
import { ProtobufError, ProtoReader, I32, I64, LEN, VARINT } from './protobuf.js';

export class OtlpDecodeError extends Error {
  constructor(
    message: string,
    /** JSON Pointer into a JSON body, when known. */
    readonly pointer = '',
  ) {
    super(message);
    this.name = 'OtlpDecodeError';
  }
}

/** An OTLP AnyValue: int64 as bigint, double as number, bytes as Uint8Array; tagged arrays and key-value lists. */
export type AnyValue = null | string | boolean | bigint | number | Uint8Array | { array: AnyValue[] } | { kvlist: KeyValue[] };
export interface KeyValue {
  key: string;
  value: AnyValue;
}

export interface Scope {
  name: string;
  version: string;
  attributes: KeyValue[];
}

export interface SpanEvent {
  timeUnixNano: bigint;
  name: string;
  attributes: KeyValue[];
}

export interface SpanLink {
  traceId: string;
  spanId: string;
  traceState: string;
  attributes: KeyValue[];
}

/** Ids are lowercase hex of the bytes sent ("" when absent); they are checked by the mapping. */
export interface Span {
  traceId: string;
  spanId: string;
  traceState: string;
  parentSpanId: string;
  flags: number;
  name: string;
  /** SpanKind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  startTimeUnixNano: bigint;
  endTimeUnixNano: bigint;
  attributes: KeyValue[];
  droppedAttributesCount: number;
  events: SpanEvent[];
  droppedEventsCount: number;
  links: SpanLink[];
  droppedLinksCount: number;
  /** StatusCode: 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
}

export interface LogRecord {
  timeUnixNano: bigint;
  observedTimeUnixNano: bigint;
  severityNumber: number;
  severityText: string;
  body: AnyValue;
  attributes: KeyValue[];
  droppedAttributesCount: number;
  flags: number;
  traceId: string;
  spanId: string;
  eventName: string;
}

/** One resource's items, grouped by instrumentation scope, as OTLP sends them. */
export interface ResourceGroup<T> {
  resource: KeyValue[];
  schemaUrl: string;
  scopes: Array<{ scope: Scope; schemaUrl: string; items: T[] }>;
}

export type Signal = 'traces' | 'logs';

const hex = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

// ---------------------------------------------------------------------------------------------
// Binary protobuf

function wrap<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof ProtobufError) throw new OtlpDecodeError(`The protobuf body is malformed: ${err.message}`);
    throw err;
  }
}

function pbAnyValue(r: ProtoReader, depth: number): AnyValue {
  if (depth > 64) throw new ProtobufError('an AnyValue nests deeper than 64 levels');
  let v: AnyValue = null;
  r.each((f, w) => {
    switch (f) {
      case 1:
        r.expect(w, LEN, 'AnyValue.string_value');
        v = r.string();
        return true;
      case 2:
        r.expect(w, VARINT, 'AnyValue.bool_value');
        v = r.varint() !== 0n;
        return true;
      case 3:
        r.expect(w, VARINT, 'AnyValue.int_value');
        v = r.int64();
        return true;
      case 4:
        r.expect(w, I64, 'AnyValue.double_value');
        v = r.double();
        return true;
      case 5: {
        r.expect(w, LEN, 'AnyValue.array_value');
        const values: AnyValue[] = [];
        const m = r.message();
        m.each((ff, ww) => (ff === 1 ? (m.expect(ww, LEN, 'ArrayValue.values'), values.push(pbAnyValue(m.message(), depth + 1)), true) : false));
        v = { array: values };
        return true;
      }
      case 6: {
        r.expect(w, LEN, 'AnyValue.kvlist_value');
        const values: KeyValue[] = [];
        const m = r.message();
        m.each((ff, ww) => (ff === 1 ? (m.expect(ww, LEN, 'KeyValueList.values'), values.push(pbKeyValue(m.message(), depth + 1)), true) : false));
        v = { kvlist: values };
        return true;
      }
      case 7:
        r.expect(w, LEN, 'AnyValue.bytes_value');
        v = r.bytes().slice();
        return true;
      default:
        return false;
    }
  });
  return v;
}

function pbKeyValue(r: ProtoReader, depth = 0): KeyValue {
  const kv: KeyValue = { key: '', value: null };
  r.each((f, w) => {
    if (f === 1) return r.expect(w, LEN, 'KeyValue.key'), (kv.key = r.string()), true;
    if (f === 2) return r.expect(w, LEN, 'KeyValue.value'), (kv.value = pbAnyValue(r.message(), depth)), true;
    return false;
  });
  return kv;
}

function pbScope(r: ProtoReader): Scope {
  const s: Scope = { name: '', version: '', attributes: [] };
  r.each((f, w) => {
    if (f === 1) return r.expect(w, LEN, 'InstrumentationScope.name'), (s.name = r.string()), true;
    if (f === 2) return r.expect(w, LEN, 'InstrumentationScope.version'), (s.version = r.string()), true;
    if (f === 3) return r.expect(w, LEN, 'InstrumentationScope.attributes'), s.attributes.push(pbKeyValue(r.message())), true;
    return false;
  });
  return s;
}

function pbResource(r: ProtoReader): KeyValue[] {
  const attrs: KeyValue[] = [];
  r.each((f, w) => (f === 1 ? (r.expect(w, LEN, 'Resource.attributes'), attrs.push(pbKeyValue(r.message())), true) : false));
  return attrs;
}

function pbStatus(r: ProtoReader): Span['status'] {
  const s = { code: 0, message: '' };
  r.each((f, w) => {
    if (f === 2) return r.expect(w, LEN, 'Status.message'), (s.message = r.string()), true;
    if (f === 3) return r.expect(w, VARINT, 'Status.code'), (s.code = r.uint()), true;
    return false;
  });
  return s;
}

function pbSpanEvent(r: ProtoReader): SpanEvent {
  const e: SpanEvent = { timeUnixNano: 0n, name: '', attributes: [] };
  r.each((f, w) => {
    if (f === 1) return r.expect(w, I64, 'Span.Event.time_unix_nano'), (e.timeUnixNano = r.fixed64()), true;
    if (f === 2) return r.expect(w, LEN, 'Span.Event.name'), (e.name = r.string()), true;
    if (f === 3) return r.expect(w, LEN, 'Span.Event.attributes'), e.attributes.push(pbKeyValue(r.message())), true;
    return false;
  });
  return e;
}

function pbSpanLink(r: ProtoReader): SpanLink {
  const l: SpanLink = { traceId: '', spanId: '', traceState: '', attributes: [] };
  r.each((f, w) => {
    if (f === 1) return r.expect(w, LEN, 'Span.Link.trace_id'), (l.traceId = hex(r.bytes())), true;
    if (f === 2) return r.expect(w, LEN, 'Span.Link.span_id'), (l.spanId = hex(r.bytes())), true;
    if (f === 3) return r.expect(w, LEN, 'Span.Link.trace_state'), (l.traceState = r.string()), true;
    if (f === 4) return r.expect(w, LEN, 'Span.Link.attributes'), l.attributes.push(pbKeyValue(r.message())), true;
    return false;
  });
  return l;
}

function pbSpan(r: ProtoReader): Span {
  const s = emptySpan();
  r.each((f, w) => {
    switch (f) {
      case 1: return r.expect(w, LEN, 'Span.trace_id'), (s.traceId = hex(r.bytes())), true;
      case 2: return r.expect(w, LEN, 'Span.span_id'), (s.spanId = hex(r.bytes())), true;
      case 3: return r.expect(w, LEN, 'Span.trace_state'), (s.traceState = r.string()), true;
      case 4: return r.expect(w, LEN, 'Span.parent_span_id'), (s.parentSpanId = hex(r.bytes())), true;
      case 5: return r.expect(w, LEN, 'Span.name'), (s.name = r.string()), true;
      case 6: return r.expect(w, VARINT, 'Span.kind'), (s.kind = r.uint()), true;
      case 7: return r.expect(w, I64, 'Span.start_time_unix_nano'), (s.startTimeUnixNano = r.fixed64()), true;
      case 8: return r.expect(w, I64, 'Span.end_time_unix_nano'), (s.endTimeUnixNano = r.fixed64()), true;
      case 9: return r.expect(w, LEN, 'Span.attributes'), s.attributes.push(pbKeyValue(r.message())), true;
      case 10: return r.expect(w, VARINT, 'Span.dropped_attributes_count'), (s.droppedAttributesCount = r.uint()), true;
      case 11: return r.expect(w, LEN, 'Span.events'), s.events.push(pbSpanEvent(r.message())), true;
      case 12: return r.expect(w, VARINT, 'Span.dropped_events_count'), (s.droppedEventsCount = r.uint()), true;
      case 13: return r.expect(w, LEN, 'Span.links'), s.links.push(pbSpanLink(r.message())), true;
      case 14: return r.expect(w, VARINT, 'Span.dropped_links_count'), (s.droppedLinksCount = r.uint()), true;
      case 15: return r.expect(w, LEN, 'Span.status'), (s.status = pbStatus(r.message())), true;
      case 16: return r.expect(w, I32, 'Span.flags'), (s.flags = r.fixed32()), true;
      default: return false;
    }
  });
  return s;
}

function pbLogRecord(r: ProtoReader): LogRecord {
  const l = emptyLogRecord();
  r.each((f, w) => {
    switch (f) {
      case 1: return r.expect(w, I64, 'LogRecord.time_unix_nano'), (l.timeUnixNano = r.fixed64()), true;
      case 2: return r.expect(w, VARINT, 'LogRecord.severity_number'), (l.severityNumber = r.uint()), true;
      case 3: return r.expect(w, LEN, 'LogRecord.severity_text'), (l.severityText = r.string()), true;
      case 5: return r.expect(w, LEN, 'LogRecord.body'), (l.body = pbAnyValue(r.message(), 0)), true;
      case 6: return r.expect(w, LEN, 'LogRecord.attributes'), l.attributes.push(pbKeyValue(r.message())), true;
      case 7: return r.expect(w, VARINT, 'LogRecord.dropped_attributes_count'), (l.droppedAttributesCount = r.uint()), true;
      case 8: return r.expect(w, I32, 'LogRecord.flags'), (l.flags = r.fixed32()), true;
      case 9: return r.expect(w, LEN, 'LogRecord.trace_id'), (l.traceId = hex(r.bytes())), true;
      case 10: return r.expect(w, LEN, 'LogRecord.span_id'), (l.spanId = hex(r.bytes())), true;
      case 11: return r.expect(w, I64, 'LogRecord.observed_time_unix_nano'), (l.observedTimeUnixNano = r.fixed64()), true;
      case 12: return r.expect(w, LEN, 'LogRecord.event_name'), (l.eventName = r.string()), true;
      default: return false;
    }
  });
  return l;
}

/**
 * ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1 } and
 * ExportLogsServiceRequest { repeated ResourceLogs resource_logs = 1 }; ResourceX { resource = 1,
 * scope_x = 2, schema_url = 3 }; ScopeX { scope = 1, items = 2, schema_url = 3 }.
 */
function pbRequest<T>(bytes: Uint8Array, item: (r: ProtoReader) => T, what: string): Array<ResourceGroup<T>> {
  return wrap(() => {
    const groups: Array<ResourceGroup<T>> = [];
    const top = new ProtoReader(bytes);
    top.each((f, w) => {
      if (f !== 1) return false;
      top.expect(w, LEN, `${what}.resource_${what}`);
      const g: ResourceGroup<T> = { resource: [], schemaUrl: '', scopes: [] };
      const rr = top.message();
      rr.each((ff, ww) => {
        if (ff === 1) return rr.expect(ww, LEN, 'resource'), (g.resource = pbResource(rr.message())), true;
        if (ff === 3) return rr.expect(ww, LEN, 'schema_url'), (g.schemaUrl = rr.string()), true;
        if (ff !== 2) return false;
        rr.expect(ww, LEN, `scope_${what}`);
        const sg = { scope: { name: '', version: '', attributes: [] } as Scope, schemaUrl: '', items: [] as T[] };
        const sr = rr.message();
        sr.each((fff, www) => {
          if (fff === 1) return sr.expect(www, LEN, 'scope'), (sg.scope = pbScope(sr.message())), true;
          if (fff === 2) return sr.expect(www, LEN, what), sg.items.push(item(sr.message())), true;
          if (fff === 3) return sr.expect(www, LEN, 'schema_url'), (sg.schemaUrl = sr.string()), true;
          return false;
        });
        g.scopes.push(sg);
        return true;
      });
      groups.push(g);
      return true;
    });
    return groups;
  });
}

// ---------------------------------------------------------------------------------------------
// JSON

type J = unknown;
const isObj = (v: J): v is Record<string, J> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Parses an OTLP/JSON body with every number kept as its source text (so 64-bit values are exact). */
export function parseOtlpJson(text: string): J {
  try {
    return JSON.parse(text, (_k, v, ctx?: { source?: string }) => (typeof v === 'number' && ctx?.source !== undefined ? { $num: ctx.source } : v));
  } catch (err) {
    throw new OtlpDecodeError(`The body is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Reads the proto3 JSON field `name`, or its snake_case original (both are allowed by the mapping). */
function field(o: Record<string, J>, name: string): J {
  if (Object.hasOwn(o, name)) return o[name];
  const snake = name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  return Object.hasOwn(o, snake) ? o[snake] : undefined;
}

class JsonReader {
  constructor(private readonly at: string) {}

  private fail(path: string, message: string): never {
    throw new OtlpDecodeError(`${this.at}${path} ${message}`, `${this.at}${path}`);
  }

  obj(v: J, path: string): Record<string, J> {
    if (v === undefined || v === null) return {};
    if (!isObj(v) || '$num' in v) this.fail(path, 'must be an object');
    return v;
  }

  arr(v: J, path: string): J[] {
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) this.fail(path, 'must be an array');
    return v;
  }

  str(v: J, path: string): string {
    if (v === undefined || v === null) return '';
    if (typeof v !== 'string') this.fail(path, 'must be a string');
    return v;
  }

  /** A 64-bit integer sent as a number or a decimal string. */
  big(v: J, path: string, signed = false): bigint {
    if (v === undefined || v === null) return 0n;
    const text = isObj(v) && typeof v.$num === 'string' ? v.$num : typeof v === 'string' ? v : null;
    if (text === null || !(signed ? /^-?\d+$/ : /^\d+$/).test(text)) this.fail(path, 'must be an integer (a number or a decimal string)');
    const n = BigInt(text);
    if (signed ? BigInt.asIntN(64, n) !== n : BigInt.asUintN(64, n) !== n) this.fail(path, 'is out of the 64-bit range');
    return n;
  }

  /** An enum or 32-bit count: a number, a decimal string, or (enums) one of `names`. */
  int(v: J, path: string, names: readonly string[] = []): number {
    if (v === undefined || v === null) return 0;
    if (typeof v === 'string' && names.includes(v)) return names.indexOf(v);
    const n = this.big(v, path);
    if (n > 0xffffffffn) this.fail(path, 'is out of the 32-bit range');
    return Number(n);
  }

  double(v: J, path: string): number {
    if (isObj(v) && typeof v.$num === 'string') return Number(v.$num);
    if (v === 'NaN' || v === 'Infinity' || v === '-Infinity') return Number(v);
    if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
    return this.fail(path, 'must be a number');
  }

  /** Trace and span ids: hex in OTLP/JSON (the one deviation from the proto3 mapping's base64). */
  id(v: J, path: string): string {
    const s = this.str(v, path);
    if (!/^(?:[0-9a-fA-F]{2})*$/.test(s)) this.fail(path, 'must be hex');
    return s.toLowerCase();
  }

  any(v: J, path: string, depth = 0): AnyValue {
    if (depth > 64) this.fail(path, 'nests deeper than 64 levels');
    const o = this.obj(v, path);
    const keys = Object.keys(o);
    if (keys.length === 0) return null;
    if (keys.length > 1) this.fail(path, `must hold one value, not ${keys.join(', ')}`);
    const k = keys[0] as string;
    const x = o[k];
    switch (k) {
      case 'stringValue':
      case 'string_value':
        return this.str(x, `${path}/${k}`);
      case 'boolValue':
      case 'bool_value':
        if (typeof x !== 'boolean') this.fail(`${path}/${k}`, 'must be a boolean');
        return x;
      case 'intValue':
      case 'int_value':
        return this.big(x, `${path}/${k}`, true);
      case 'doubleValue':
      case 'double_value':
        return this.double(x, `${path}/${k}`);
      case 'bytesValue':
      case 'bytes_value': {
        const s = this.str(x, `${path}/${k}`);
        if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(s)) this.fail(`${path}/${k}`, 'must be base64');
        return new Uint8Array(Buffer.from(s, 'base64'));
      }
      case 'arrayValue':
      case 'array_value':
        return { array: this.arr(this.obj(x, `${path}/${k}`).values, `${path}/${k}/values`).map((e, i) => this.any(e, `${path}/${k}/values/${i}`, depth + 1)) };
      case 'kvlistValue':
      case 'kvlist_value':
        return { kvlist: this.kvs(this.obj(x, `${path}/${k}`).values, `${path}/${k}/values`, depth + 1) };
      default:
        return this.fail(`${path}/${k}`, 'is not an AnyValue field');
    }
  }

  kvs(v: J, path: string, depth = 0): KeyValue[] {
    return this.arr(v, path).map((e, i) => {
      const o = this.obj(e, `${path}/${i}`);
      return { key: this.str(o.key, `${path}/${i}/key`), value: this.any(o.value, `${path}/${i}/value`, depth) };
    });
  }
}

const SPAN_KINDS = ['SPAN_KIND_UNSPECIFIED', 'SPAN_KIND_INTERNAL', 'SPAN_KIND_SERVER', 'SPAN_KIND_CLIENT', 'SPAN_KIND_PRODUCER', 'SPAN_KIND_CONSUMER'] as const;
const STATUS_CODES = ['STATUS_CODE_UNSET', 'STATUS_CODE_OK', 'STATUS_CODE_ERROR'] as const;
const SEVERITIES = [
  'SEVERITY_NUMBER_UNSPECIFIED',
  ...['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'].flatMap((s) => ['', '2', '3', '4'].map((n) => `SEVERITY_NUMBER_${s}${n}`)),
];

function jsonSpan(r: JsonReader, v: J, p: string): Span {
  const o = r.obj(v, p);
  const status = r.obj(field(o, 'status'), `${p}/status`);
  return {
    traceId: r.id(field(o, 'traceId'), `${p}/traceId`),
    spanId: r.id(field(o, 'spanId'), `${p}/spanId`),
    traceState: r.str(field(o, 'traceState'), `${p}/traceState`),
    parentSpanId: r.id(field(o, 'parentSpanId'), `${p}/parentSpanId`),
    flags: r.int(field(o, 'flags'), `${p}/flags`),
    name: r.str(field(o, 'name'), `${p}/name`),
    kind: r.int(field(o, 'kind'), `${p}/kind`, SPAN_KINDS),
    startTimeUnixNano: r.big(field(o, 'startTimeUnixNano'), `${p}/startTimeUnixNano`),
    endTimeUnixNano: r.big(field(o, 'endTimeUnixNano'), `${p}/endTimeUnixNano`),
    attributes: r.kvs(field(o, 'attributes'), `${p}/attributes`),
    droppedAttributesCount: r.int(field(o, 'droppedAttributesCount'), `${p}/droppedAttributesCount`),
    events: r.arr(field(o, 'events'), `${p}/events`).map((e, i) => {
      const eo = r.obj(e, `${p}/events/${i}`);
      return {
        timeUnixNano: r.big(field(eo, 'timeUnixNano'), `${p}/events/${i}/timeUnixNano`),
        name: r.str(field(eo, 'name'), `${p}/events/${i}/name`),
        attributes: r.kvs(field(eo, 'attributes'), `${p}/events/${i}/attributes`),
      };
    }),
    droppedEventsCount: r.int(field(o, 'droppedEventsCount'), `${p}/droppedEventsCount`),
    links: r.arr(field(o, 'links'), `${p}/links`).map((l, i) => {
      const lo = r.obj(l, `${p}/links/${i}`);
      return {
        traceId: r.id(field(lo, 'traceId'), `${p}/links/${i}/traceId`),
        spanId: r.id(field(lo, 'spanId'), `${p}/links/${i}/spanId`),
        traceState: r.str(field(lo, 'traceState'), `${p}/links/${i}/traceState`),
        attributes: r.kvs(field(lo, 'attributes'), `${p}/links/${i}/attributes`),
      };
    }),
    droppedLinksCount: r.int(field(o, 'droppedLinksCount'), `${p}/droppedLinksCount`),
    status: { code: r.int(field(status, 'code'), `${p}/status/code`, STATUS_CODES), message: r.str(field(status, 'message'), `${p}/status/message`) },
  };
}

function jsonLogRecord(r: JsonReader, v: J, p: string): LogRecord {
  const o = r.obj(v, p);
  const body = field(o, 'body');
  return {
    timeUnixNano: r.big(field(o, 'timeUnixNano'), `${p}/timeUnixNano`),
    observedTimeUnixNano: r.big(field(o, 'observedTimeUnixNano'), `${p}/observedTimeUnixNano`),
    severityNumber: r.int(field(o, 'severityNumber'), `${p}/severityNumber`, SEVERITIES),
    severityText: r.str(field(o, 'severityText'), `${p}/severityText`),
    body: body === undefined ? null : r.any(body, `${p}/body`),
    attributes: r.kvs(field(o, 'attributes'), `${p}/attributes`),
    droppedAttributesCount: r.int(field(o, 'droppedAttributesCount'), `${p}/droppedAttributesCount`),
    flags: r.int(field(o, 'flags'), `${p}/flags`),
    traceId: r.id(field(o, 'traceId'), `${p}/traceId`),
    spanId: r.id(field(o, 'spanId'), `${p}/spanId`),
    eventName: r.str(field(o, 'eventName'), `${p}/eventName`),
  };
}

function jsonRequest<T>(body: J, signal: Signal, item: (r: JsonReader, v: J, p: string) => T): Array<ResourceGroup<T>> {
  const r = new JsonReader('');
  const top = r.obj(body, '');
  const [groupsKey, scopesKey, itemsKey] = signal === 'traces' ? ['resourceSpans', 'scopeSpans', 'spans'] : ['resourceLogs', 'scopeLogs', 'logRecords'];
  return r.arr(field(top, groupsKey), `/${groupsKey}`).map((g, gi) => {
    const gp = `/${groupsKey}/${gi}`;
    const go = r.obj(g, gp);
    const res = r.obj(field(go, 'resource'), `${gp}/resource`);
    return {
      resource: r.kvs(field(res, 'attributes'), `${gp}/resource/attributes`),
      schemaUrl: r.str(field(go, 'schemaUrl'), `${gp}/schemaUrl`),
      scopes: r.arr(field(go, scopesKey), `${gp}/${scopesKey}`).map((s, si) => {
        const sp = `${gp}/${scopesKey}/${si}`;
        const so = r.obj(s, sp);
        const sc = r.obj(field(so, 'scope'), `${sp}/scope`);
        return {
          scope: { name: r.str(field(sc, 'name'), `${sp}/scope/name`), version: r.str(field(sc, 'version'), `${sp}/scope/version`), attributes: r.kvs(field(sc, 'attributes'), `${sp}/scope/attributes`) },
          schemaUrl: r.str(field(so, 'schemaUrl'), `${sp}/schemaUrl`),
          items: r.arr(field(so, itemsKey), `${sp}/${itemsKey}`).map((x, i) => item(r, x, `${sp}/${itemsKey}/${i}`)),
        };
      }),
    };
  });
}

// ---------------------------------------------------------------------------------------------

function emptySpan(): Span {
  return {
    traceId: '',
    spanId: '',
    traceState: '',
    parentSpanId: '',
    flags: 0,
    name: '',
    kind: 0,
    startTimeUnixNano: 0n,
    endTimeUnixNano: 0n,
    attributes: [],
    droppedAttributesCount: 0,
    events: [],
    droppedEventsCount: 0,
    links: [],
    droppedLinksCount: 0,
    status: { code: 0, message: '' },
  };
}

function emptyLogRecord(): LogRecord {
  return { timeUnixNano: 0n, observedTimeUnixNano: 0n, severityNumber: 0, severityText: '', body: null, attributes: [], droppedAttributesCount: 0, flags: 0, traceId: '', spanId: '', eventName: '' };
}

export function decodeTraces(body: { protobuf: Uint8Array } | { json: unknown }): Array<ResourceGroup<Span>> {
  return 'protobuf' in body ? pbRequest(body.protobuf, pbSpan, 'spans') : jsonRequest(body.json, 'traces', jsonSpan);
}

export function decodeLogs(body: { protobuf: Uint8Array } | { json: unknown }): Array<ResourceGroup<LogRecord>> {
  return 'protobuf' in body ? pbRequest(body.protobuf, pbLogRecord, 'logs') : jsonRequest(body.json, 'logs', jsonLogRecord);
}
