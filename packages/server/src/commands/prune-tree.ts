// `audit-ledger tree prune`: removes the tree hash rows a database written before the tree was
// thinned still holds (levels other than 4, 8, 12, …: core's isStoredLevel). Nothing reads or
// checks those rows any more, so removing them changes no proof, root or verification; it frees
// their space (two rows per entry) and spares a full verification from reading them. Safe while
// the service runs: appends only ever write kept levels, and each delete is one statement over
// one window of indexes.
import { storedHashCount, storedLevelIndexes } from '@audit-ledger/core';
import type { LedgerStore } from '../store/ledger.js';

/** Indexes per delete statement: about 2,200 kept ones in each, as its NOT IN list. */
const WINDOW = 32_768;

export async function pruneTree(ledger: Pick<LedgerStore, 'chainSizes' | 'deleteTreeHashesExcept'>, report: (line: string) => void): Promise<{ companies: number; removed: number }> {
  let removed = 0;
  const chains = await ledger.chainSizes();
  for (const { company_id, size } of chains) {
    let mine = 0;
    const end = storedHashCount(size);
    for (let from = 0; from < end; from += WINDOW) {
      const to = Math.min(end, from + WINDOW);
      mine += await ledger.deleteTreeHashesExcept(company_id, from, to, storedLevelIndexes(from, to));
    }
    if (mine > 0) report(`company ${company_id}: ${mine} tree hash rows removed (${size} entries)`);
    removed += mine;
  }
  report(`${removed} tree hash rows removed in all, ${chains.length} companies checked`);
  return { companies: chains.length, removed };
}
