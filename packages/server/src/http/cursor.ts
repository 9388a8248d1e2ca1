// Opaque pagination cursors: base64url JSON of the last item's position. Clients must
// treat them as opaque; a cursor we did not issue is a 400 invalid_cursor.
import { ApiError } from './problems.js';

/** The seq a page continues from (a seq cursor), or undefined for the first page. */
export const seqCursor = (cursor: string | undefined): number | undefined => (cursor === undefined ? undefined : (decodeCursor(cursor, 'seq', 'seq') as number));

/** The id a page continues from (an id cursor), or undefined for the first page. */
export const idCursor = (cursor: string | undefined): string | undefined => (cursor === undefined ? undefined : (decodeCursor(cursor, 'id', 'id') as string));

/**
 * A page's answer: its items, and the cursor of the next page, made from the last row's position;
 * null when the page is not full (the last page). Every paginated route answers through this.
 */
export function page<R, T>(rows: R[], limit: number, position: (last: R) => Record<string, string | number>, view: (row: R) => T): { items: T[]; next_cursor: string | null } {
  const last = rows.at(-1);
  return { items: rows.map(view), next_cursor: rows.length === limit && last !== undefined ? encodeCursor(position(last)) : null };
}

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
