// RFC 9562 UUIDv7: 48-bit Unix milliseconds, then random bits. Time-ordered ids keep
// the (company_id, log_id) index append-friendly. Not part of the hash rules: a log_id
// is just a string to the verifier.
import { randomFillSync } from 'node:crypto';

const pool = Buffer.alloc(16 * 256);
let offset = pool.length;

export function uuidv7(ms: number): string {
  if (offset >= pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const b = Buffer.from(pool.subarray(offset, offset + 16));
  offset += 16;
  b.writeUIntBE(Math.max(0, Math.floor(ms)) % 2 ** 48, 0, 6);
  b[6] = 0x70 | ((b[6] as number) & 0x0f); // version 7
  b[8] = 0x80 | ((b[8] as number) & 0x3f); // variant 10
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
