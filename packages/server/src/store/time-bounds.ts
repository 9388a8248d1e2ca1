// A time range over a company's chain as a range of seqs, found on the primary key. created_at
// never decreases along a chain (docs/ledger-format.md §10, which the verifier checks) and seqs
// run from 0 with no gap (entries are never deleted; erasure blanks content, the row stays), so
// the entries at or after an instant are exactly those from one seq on. Searching for that seq
// costs a few primary-key lookups instead of a created_at index that every append would maintain
// (issue 33's index diet, migration 0018; docs/performance.md, "Indexes").
import type { DbHandle } from './handle.js';

/** Seqs probed per round trip: 16 points narrow ten million entries to one in six round trips. */
const FANOUT = 16;

/**
 * The first seq whose created_at is at or after `instant` (an ISO 8601 time), or the chain's
 * length when every entry is older. Compared as instants, never as text. An entry appended while
 * this runs is newer than every one it read, so the bound stays right for what was read.
 */
export async function firstSeqAtOrAfter(h: DbHandle, companyId: string, instant: string): Promise<number> {
  const at = Date.parse(instant);
  if (Number.isNaN(at)) throw new Error(`not an instant: ${instant}`);
  const head = await h.db.selectFrom('chain_heads').select('last_seq').where('company_id', '=', companyId).executeTakeFirst();
  // The answer lies in [lo, hi]: every seq below lo is older than the instant, hi is not.
  let lo = 0;
  let hi = head && head.last_seq >= 0 ? Number(head.last_seq) + 1 : 0;
  while (lo < hi) {
    const step = Math.max(1, Math.ceil((hi - lo) / FANOUT));
    const probes: number[] = [];
    for (let s = lo; s < hi; s += step) probes.push(s);
    const rows = await h.db.selectFrom('log_entries').select(['seq', 'created_at']).where('company_id', '=', companyId).where('seq', 'in', probes).orderBy('seq').execute();
    const times = new Map(rows.map((r) => [Number(r.seq), Date.parse(r.created_at)]));
    let nextLo = lo;
    let nextHi = hi;
    for (const s of probes) {
      const t = times.get(s);
      // A probe past the chain's end (never expected; a head read before a restore) bounds it.
      if (t === undefined || t >= at) {
        nextHi = s;
        break;
      }
      nextLo = s + 1;
    }
    lo = nextLo;
    hi = nextHi;
  }
  return lo;
}

/** The seq bounds of a [from, to) time range: seq >= first and seq < end (either absent when the range has none). */
export async function seqBoundsOf(h: DbHandle, companyId: string, from: string | undefined, to: string | undefined): Promise<{ first?: number; end?: number }> {
  const [first, end] = await Promise.all([from === undefined ? undefined : firstSeqAtOrAfter(h, companyId, from), to === undefined ? undefined : firstSeqAtOrAfter(h, companyId, to)]);
  return { first, end };
}
