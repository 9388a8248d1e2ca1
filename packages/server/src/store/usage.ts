// Usage counters per company, UTC day and API key, added to by the in-memory aggregator.
import { sql } from 'kysely';
import type { UsageDailyTable } from './schema.js';
import type { DbHandle } from './handle.js';

export type UsageRow = UsageDailyTable;

export class UsageStore {
  constructor(private readonly store: DbHandle) {}

  /** Adds each row's counts to what is stored, in one transaction. */
  async add(rows: UsageRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.store.db.transaction().execute(async (trx) => {
      for (let i = 0; i < rows.length; i += 500) {
        await trx
          .insertInto('usage_daily')
          .values(rows.slice(i, i + 500))
          .onConflict((oc) =>
            oc.columns(['company_id', 'day', 'key_id']).doUpdateSet({
              requests: sql`usage_daily.requests + excluded.requests`,
              events: sql`usage_daily.events + excluded.events`,
              rate_limited: sql`usage_daily.rate_limited + excluded.rate_limited`,
              bytes: sql`usage_daily.bytes + excluded.bytes`,
            }),
          )
          .execute();
      }
    });
  }

  /** Rows of one company with day in [from, to] (inclusive), by day then key. */
  list(companyId: string, from: string, to: string): Promise<UsageRow[]> {
    return this.store.db
      .selectFrom('usage_daily')
      .selectAll()
      .where('company_id', '=', companyId)
      .where('day', '>=', from)
      .where('day', '<=', to)
      .orderBy('day')
      .orderBy('key_id')
      .execute();
  }

  /** Bytes of event data the company has stored, over all time. */
  async storedBytes(companyId: string): Promise<number> {
    const r = await this.store.db
      .selectFrom('usage_daily')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('bytes'), eb.lit(0)).as('b'))
      .where('company_id', '=', companyId)
      .executeTakeFirstOrThrow();
    return Number(r.b);
  }
}
