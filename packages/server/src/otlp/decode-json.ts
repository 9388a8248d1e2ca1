// OTLP/JSON bodies: the proto3 JSON mapping with lowerCamelCase names (snake_case accepted), trace
// and span ids as hex, enums as integers (names accepted), 64-bit integers as decimal strings or
// numbers read without rounding, into the model (model.ts). A wrong shape is answered 400 naming
// the place as a JSON Pointer.
import { type AnyValue, type KeyValue, type LogRecord, OtlpDecodeError, type ResourceGroup, type Signal, type Span } from './model.js';
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

export function jsonSpan(r: JsonReader, v: J, p: string): Span {
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

export function jsonLogRecord(r: JsonReader, v: J, p: string): LogRecord {
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

export function jsonRequest<T>(body: J, signal: Signal, item: (r: JsonReader, v: J, p: string) => T): Array<ResourceGroup<T>> {
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
