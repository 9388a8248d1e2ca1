// A protocol-buffers wire-format reader: just what OTLP/HTTP binary bodies need
// (https://protobuf.dev/programming-guides/encoding/). The body is attacker-controlled: every
// length is checked against the end of its enclosing message, varints stop at 10 bytes, and a
// malformed body throws ProtobufError (answered 400), never reads past the buffer or loops.
// Unknown fields are skipped, as the OTLP specification requires of receivers.

export class ProtobufError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtobufError';
  }
}

/** Wire types. */
export const VARINT = 0;
export const I64 = 1;
export const LEN = 2;
export const I32 = 5;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Reads one message: a range of the buffer. `fields` calls back once per field, in order. */
export class ProtoReader {
  private pos: number;

  constructor(
    private readonly buf: Uint8Array,
    start = 0,
    private readonly end = buf.length,
  ) {
    this.pos = start;
  }

  /** Calls `on(field, wireType)` for every field; the callback reads the value with one of the methods below, or returns false to have it skipped. */
  each(on: (field: number, wire: number) => boolean): void {
    while (this.pos < this.end) {
      const key = this.varint();
      const field = Number(key >> 3n);
      const wire = Number(key & 7n);
      if (field === 0) throw new ProtobufError(`field number 0 at byte ${this.pos}`);
      if (!on(field, wire)) this.skip(wire);
    }
    if (this.pos !== this.end) throw new ProtobufError('a field runs past the end of its message');
  }

  varint(): bigint {
    let result = 0n;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new ProtobufError('truncated varint');
      const b = this.buf[this.pos++] as number;
      result |= BigInt(b & 0x7f) << BigInt(7 * i);
      if ((b & 0x80) === 0) return result;
    }
    throw new ProtobufError('varint longer than 10 bytes');
  }

  /** A varint as a (non-negative, small) JavaScript number: enums, counts, bools. */
  uint(): number {
    return Number(BigInt.asUintN(32, this.varint()));
  }

  int64(): bigint {
    return BigInt.asIntN(64, this.varint());
  }

  fixed64(): bigint {
    const b = this.take(8);
    return new DataView(b.buffer, b.byteOffset, 8).getBigUint64(0, true);
  }

  fixed32(): number {
    const b = this.take(4);
    return new DataView(b.buffer, b.byteOffset, 4).getUint32(0, true);
  }

  double(): number {
    const b = this.take(8);
    return new DataView(b.buffer, b.byteOffset, 8).getFloat64(0, true);
  }

  bytes(): Uint8Array {
    const n = Number(this.varint());
    return this.take(n);
  }

  string(): string {
    try {
      return utf8.decode(this.bytes());
    } catch (err) {
      if (err instanceof ProtobufError) throw err;
      throw new ProtobufError('a string field is not valid UTF-8');
    }
  }

  /** An embedded message: a reader over its bytes. */
  message(): ProtoReader {
    const n = Number(this.varint());
    if (n > this.end - this.pos) throw new ProtobufError('an embedded message runs past the end of its parent');
    const r = new ProtoReader(this.buf, this.pos, this.pos + n);
    this.pos += n;
    return r;
  }

  /** Throws unless the field has the expected wire type (a field sent with another type is malformed). */
  expect(wire: number, want: number, what: string): void {
    if (wire !== want) throw new ProtobufError(`${what} has wire type ${wire}, expected ${want}`);
  }

  private take(n: number): Uint8Array {
    if (!Number.isSafeInteger(n) || n < 0 || n > this.end - this.pos) throw new ProtobufError('a length runs past the end of its message');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  private skip(wire: number): void {
    switch (wire) {
      case VARINT:
        this.varint();
        return;
      case I64:
        this.take(8);
        return;
      case LEN:
        this.bytes();
        return;
      case I32:
        this.take(4);
        return;
      default:
        throw new ProtobufError(`unsupported wire type ${wire}`);
    }
  }
}
