// The index of words inside events that GET /logs/search reads, kept after the commit (issue 44):
// an append is acknowledged when its entry is committed, and its words are indexed afterwards, in
// batches, off the request thread, from a durable position, so a restart resumes from it and
// nothing is indexed twice or skipped. Search answers say how far it got (`indexed_seq`) and may
// wait for a seq (`wait_for_seq`). An erasure never answers while the index still holds the
// erased content. SQLite: a file of its own beside the ledger and a thread of its own
// (sqlite-indexer.ts). PostgreSQL: the tables log_search and search_positions, filled company by
// company by every process in turn (postgres-search-index.ts).
//
// SEARCH_INDEX (kernel/config-table.ts) is applied at start: `off` removes the index (on SQLite its
// file, so no word of any content stays there) and stops keeping it; appends never paid for it
// anyway. `on` again rebuilds it from what is stored, so erased content (NULL data) stays out.
// Every process of one database must be started with the same setting.

export interface SearchIndex {
  /** Starts keeping the index (rebuilding it when missing or not this ledger's); whether it starts from nothing. */
  start(): Promise<{ rebuilt: boolean }>;
  /** SEARCH_INDEX=off: removes every word the index holds; whether there was an index. */
  remove(): Promise<boolean>;
  /** The last seq of this company the index covers (-1: none yet). */
  indexedSeq(companyId: string): Promise<number>;
  /** Waits until the index covers this company's entries up to `seq`, at most `timeoutMs`; answers indexedSeq then. */
  waitFor(companyId: string, seq: number, timeoutMs: number): Promise<number>;
  /**
   * Before these entries' content is erased: removes their words and keeps them out of the
   * index. SQLite only (its index is another file); PostgreSQL does it in the erasure's own
   * transaction (store/compliance.ts).
   */
  forget?(companyId: string, logIds: string[]): Promise<void>;
  /**
   * After erasures (SQLite): removes what the index file still keeps of erased words beside its
   * live entries (FTS5 keeps a word with no entries left until its segment is rewritten).
   */
  purge?(): Promise<void>;
  /** Whether this process keeps the index. */
  readonly running: boolean;
  /** Why its last batch failed, while it fails (it is tried again); undefined while it works. */
  readonly problem: string | undefined;
  close(): Promise<void>;
}

/** How long a search may wait for the index to reach `wait_for_seq`. */
export const MAX_SEARCH_WAIT_MS = 10_000;
