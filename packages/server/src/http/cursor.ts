// Opaque pagination cursors: base64url JSON of the last item's position. Clients must
// treat them as opaque; a cursor we did not issue is a 400 invalid_cursor.
import { ApiError } from './problems.js';

export function encodeCursor(position: Record<string, string | number>): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

/** Decodes a cursor holding one field of the given kind. */
export function decodeCursor(cursor: string, field: string, kind: 'seq' | 'id'): number | string {
  try {
    const v = (JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Record<string, unknown>)[field];
    if (kind === 'seq' && typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return v;
    if (kind === 'id' && typeof v === 'string' && /^[0-9a-f-]{36}$/.test(v)) return v;
  } catch {
    // fall through
  }
  throw new ApiError(400, 'invalid_cursor', 'cursor is not a next_cursor this API returned');
}
