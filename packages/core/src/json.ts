// The ledger's JSON: the value types entries carry, and RFC 8785 (JCS) canonical JSON, the exact
// text an entry hash covers. `canonicalize` is pure JS, so this runs in browsers as it is.
import canonicalize from 'canonicalize';
import { CoreError } from './errors.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** RFC 8785 canonical JSON text. Throws CoreError not_canonicalizable on values JSON cannot represent. */
export function canonicalJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = canonicalize(value);
  } catch (err) {
    throw new CoreError('not_canonicalizable', `value has no canonical JSON form: ${(err as Error).message}`);
  }
  if (text === undefined) throw new CoreError('not_canonicalizable', 'value has no canonical JSON form');
  return text;
}
