// Protobuf by hand for the OTLP suite: reading an export response's partial success, and
// writing length-delimited fields (to build requests the exporters would never send).
import { expect } from 'vitest';

/** Protobuf for ExportXServiceResponse: partial_success(1) { rejected(1) varint, error_message(2) string }. */
export function readPartialSuccess(buf: Buffer): { rejected: number; message: string } | null {
  if (buf.length === 0) return null;
  let i = 0;
  const varint = () => {
    let r = 0;
    let s = 0;
    for (;;) {
      const b = buf[i++] as number;
      r += (b & 0x7f) * 2 ** s;
      s += 7;
      if ((b & 0x80) === 0) return r;
    }
  };
  expect(buf[i++]).toBe(0x0a);
  const end = varint() + i;
  let rejected = 0;
  let message = '';
  while (i < end) {
    const tag = buf[i++];
    if (tag === 0x08) rejected = varint();
    else if (tag === 0x12) {
      const n = varint();
      message = buf.subarray(i, i + n).toString('utf8');
      i += n;
    } else throw new Error(`unexpected tag ${tag}`);
  }
  return { rejected, message };
}

function varintBytes(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return out;
}

export function lenField(field: number, payload: Buffer): Buffer {
  return Buffer.concat([Buffer.from([(field << 3) | 2, ...varintBytes(payload.length)]), payload]);
}
