// OTLP/HTTP binary bodies: ExportTraceServiceRequest and ExportLogsServiceRequest read with the
// wire reader (protobuf.ts) into the model (model.ts). Field numbers follow
// opentelemetry/proto/{common,resource,trace,logs}/v1/*.proto; a field sent with the wrong wire
// type is malformed (400), an unknown field is skipped.
import { type AnyValue, type KeyValue, type LogRecord, OtlpDecodeError, type ResourceGroup, type Scope, type Span, type SpanEvent, type SpanLink } from './model.js';
import { I32, I64, LEN, ProtobufError, ProtoReader, VARINT } from './protobuf.js';

const hex = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
// ---------------------------------------------------------------------------------------------

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

export function pbSpan(r: ProtoReader): Span {
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

export function pbLogRecord(r: ProtoReader): LogRecord {
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
export function pbRequest<T>(bytes: Uint8Array, item: (r: ProtoReader) => T, what: string): Array<ResourceGroup<T>> {
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
