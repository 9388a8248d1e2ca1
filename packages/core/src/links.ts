// Version 3 entries: the causal skeleton. The references an event's content names (its own event
// id, the decision or source it is about, the events and sources it used) are copied, by the rule
// below, into the hashed `links` field, beside the hashed envelope (event_id, span ids, parent and
// root event ids). Erasure removes the content and keeps them, so a replay of an erased trace keeps
// its edges. Specified in docs/ledger-format.md §16; the copy is checked against the content while
// the content is there.
import { canonicalJson, type Json, type JsonObject } from './json.js';

/** The members of data whose scalar value is copied as it is. */
export const LINK_IDS = ['event_id', 'decision_id', 'source_id'] as const;
/** The members of data that list references (a list, or one reference). */
export const LINK_LISTS = ['derived_from', 'inputs'] as const;
/** The members of an object reference that are kept. */
export const REF_MEMBERS = ['event_id', 'log_id', 'source_id'] as const;

const isId = (v: Json | undefined): v is string | number => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));

/**
 * The links of an event's data: each of LINK_IDS that is a string or a number; each of LINK_LISTS
 * as a list (one value is a list of one) of its strings and numbers, and of its objects reduced to
 * their REF_MEMBERS that are strings or numbers (an object with none, and anything else, is left
 * out; an empty list is left out). null when nothing is left.
 */
export function skeletonLinks(data: JsonObject): JsonObject | null {
  const out: JsonObject = {};
  for (const k of LINK_IDS) {
    const v = data[k];
    if (isId(v)) out[k] = v;
  }
  for (const k of LINK_LISTS) {
    const v = data[k];
    const list = Array.isArray(v) ? v : v === undefined || v === null ? [] : [v];
    const refs: Json[] = [];
    for (const item of list) {
      if (isId(item)) refs.push(item);
      else if (item !== null && typeof item === 'object' && !Array.isArray(item)) {
        const ref: JsonObject = {};
        for (const m of REF_MEMBERS) if (isId(item[m])) ref[m] = item[m] as string | number;
        if (Object.keys(ref).length > 0) refs.push(ref);
      }
    }
    if (refs.length > 0) out[k] = refs;
  }
  return Object.keys(out).length > 0 ? out : null;
}

/** The canonical JSON of skeletonLinks(data) ('null' when there are none). */
export function skeletonLinksText(data: JsonObject): string {
  const links = skeletonLinks(data);
  return links === null ? 'null' : canonicalJson(links);
}

/** Any of the member names, quoted as in JSON text: one pass over the text. */
const NAMED = new RegExp(`"(?:${[...LINK_IDS, ...LINK_LISTS].join('|')})"`);

/**
 * The links a stored data text gives, parsing it only when it names one of the members (a data
 * text without any of them has none).
 */
export function linksTextOfDataText(dataJson: string): string {
  if (!NAMED.test(dataJson)) return 'null';
  return skeletonLinksText(JSON.parse(dataJson) as JsonObject);
}
