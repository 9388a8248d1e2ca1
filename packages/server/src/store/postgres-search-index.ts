// The PostgreSQL search index (search-index.ts), kept after the commit: log_search holds each
// entry's to_tsvector('simple', data) by (company_id, seq), under a GIN index, and
// search_positions each company's last indexed seq (migration 0024). Every process runs this
// indexer; a company is indexed by one process at a time (its position row locked FOR UPDATE SKIP
// LOCKED), a batch of BATCH entries per transaction, words and position together. Entries up to
// the chain head read before the batch are all committed (appends are gap-free and move the head
// in their own transaction), so the position never passes an entry that is not yet there.
// An erasure locks the same position row (store/compliance.ts): it waits for a batch in flight,
// then removes the words of what it erases in its own transaction, so no batch can bring them back.
import { type Kysely, sql } from 'kysely';
import type { Database } from './schema.js';
import type { SearchIndex } from './search-index.js';

const BATCH = 2000;
/** How often an idle indexer looks for companies behind, in milliseconds. */
const POLL_MS = 100;
/** Companies looked at per pass. */
const COMPANIES_PER_PASS = 100;

export class PostgresSearchIndex implements SearchIndex {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private busy: Promise<void> | undefined;
  private stopped = true;
  private again = false;
  private lastError: string | undefined;

  constructor(private readonly db: Kysely<Database>) {}

  get running(): boolean {
    return !this.stopped;
  }

  async start(): Promise<{ rebuilt: boolean }> {
    const r = await sql<{ n: string }>`SELECT count(*) AS n FROM search_positions`.execute(this.db);
    this.stopped = false;
    this.kick();
    return { rebuilt: Number(r.rows[0]?.n ?? 0) === 0 };
  }

  async remove(): Promise<boolean> {
    const r = await sql<{ n: string }>`SELECT count(*) AS n FROM search_positions`.execute(this.db);
    await this.db.transaction().execute(async (trx) => {
      await sql`DELETE FROM log_search`.execute(trx);
      await sql`DELETE FROM search_positions`.execute(trx);
    });
    return Number(r.rows[0]?.n ?? 0) > 0;
  }

  /** Runs a pass now (or right after the one running). */
  kick(): void {
    if (this.stopped) return;
    if (this.busy) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.busy = this.pass()
      .then(() => {
        this.lastError = undefined;
      })
      .catch((err: unknown) => {
        this.lastError = (err as Error).message;
      })
      .finally(() => {
        this.busy = undefined;
        if (this.stopped) return;
        const soon = this.again;
        this.again = false;
        this.timer = setTimeout(() => this.kick(), soon ? 0 : POLL_MS);
        this.timer.unref();
      });
  }

  /** One pass: a batch for each company behind; another pass at once while any was full. */
  private async pass(): Promise<void> {
    const behind = await sql<{ company_id: string; last_seq: string }>`
      SELECT h.company_id, h.last_seq FROM chain_heads h LEFT JOIN search_positions p ON p.company_id = h.company_id
      WHERE h.last_seq > coalesce(p.indexed_seq, -1) LIMIT ${COMPANIES_PER_PASS}`.execute(this.db);
    let full = false;
    for (const c of behind.rows) {
      if (this.stopped) return;
      if (await this.indexCompany(c.company_id, Number(c.last_seq))) full = true;
    }
    if (full || behind.rows.length === COMPANIES_PER_PASS) this.again = true;
  }

  /** One batch of one company, unless another process holds it; whether more remain. */
  private async indexCompany(companyId: string, head: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await sql`INSERT INTO search_positions (company_id, indexed_seq) VALUES (${companyId}, -1) ON CONFLICT (company_id) DO NOTHING`.execute(trx);
      const held = await sql<{ indexed_seq: string }>`SELECT indexed_seq FROM search_positions WHERE company_id = ${companyId} FOR UPDATE SKIP LOCKED`.execute(trx);
      const row = held.rows[0];
      if (!row) return false;
      const from = Number(row.indexed_seq);
      const to = Math.min(head, from + BATCH);
      if (to <= from) return false;
      await sql`INSERT INTO log_search (company_id, seq, tsv)
        SELECT company_id, seq, to_tsvector('simple', data) FROM log_entries
        WHERE company_id = ${companyId} AND seq > ${from} AND seq <= ${to} AND data IS NOT NULL
        ON CONFLICT (company_id, seq) DO NOTHING`.execute(trx);
      await sql`UPDATE search_positions SET indexed_seq = ${to} WHERE company_id = ${companyId}`.execute(trx);
      return to < head;
    });
  }

  async indexedSeq(companyId: string): Promise<number> {
    const r = await sql<{ indexed_seq: string }>`SELECT indexed_seq FROM search_positions WHERE company_id = ${companyId}`.execute(this.db);
    return r.rows[0] ? Number(r.rows[0].indexed_seq) : -1;
  }

  async waitFor(companyId: string, seq: number, timeoutMs: number): Promise<number> {
    const until = Date.now() + timeoutMs;
    let at = await this.indexedSeq(companyId);
    while (at < seq && !this.stopped && Date.now() < until) {
      this.kick();
      await new Promise((r) => setTimeout(r, 20));
      at = await this.indexedSeq(companyId);
    }
    return at;
  }

  get problem(): string | undefined {
    return this.lastError;
  }

  async close(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.busy;
  }
}
