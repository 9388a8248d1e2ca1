// The one model both OTLP encodings decode into (decode.ts), so the mapping to ledger events
// (map.ts) is written once: opentelemetry-proto v1's messages, ids as lowercase hex, 64-bit
// times as bigint.

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
