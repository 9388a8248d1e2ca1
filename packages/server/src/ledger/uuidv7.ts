// RFC 9562 UUIDv7: 48-bit Unix milliseconds, a 12-bit counter (RFC 9562 §6.2 method 1,
// so ids made by one process strictly increase even within a millisecond), then random
// bits. Time-ordered ids keep the (company_id, log_id) index append-friendly. Not part of the hash rules: a log_id
// is just a string to the verifier.
import { randomFillSync } from 'node:crypto';

const pool = Buffer.alloc(16 * 256);
let offset = pool.length;

let lastMs = -1;
let counter = 0;

export function uuidv7(ms: number): string {
  if (offset >= pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const b = Buffer.from(pool.subarray(offset, offset + 16));
  offset += 16;
  const now = Math.max(0, Math.floor(ms)) % 2 ** 48;
  if (now > lastMs) {
    lastMs = now;
    counter = (b[7] as number) & 0x7f; // a random start, leaving room to count up
  } else if (++counter > 0xfff) {
    lastMs++; // borrow the next millisecond rather than repeat an id
    counter = 0;
  }
  b.writeUIntBE(lastMs, 0, 6);
  b[6] = 0x70 | (counter >> 8); // version 7
  b[7] = counter & 0xff;
  b[8] = 0x80 | ((b[8] as number) & 0x3f); // variant 10
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
