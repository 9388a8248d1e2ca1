// Migration 0019 (issue 34): the stored tree of ledgers written before the tree existed. Schema
// 0002 kept entries and no Merkle hashes; 0003 added the table but filled it only for new appends,
// so a ledger with entries from then could not be proven or appended to after an upgrade (found
// by the upgrade tests: test/migrations.test.ts). This builds, for each company whose chain has
// entries and whose tree has none, the stored levels from the entries' hashes, exactly as appends
// write them. Never edit a migration once released.
import { entryLeafHash, type Hash, storedHashIndex, toHex, TREE_STRIDE, TreeEdge } from '@audit-ledger/core';
import type { Kysely, Migration } from 'kysely';

const PAGE = 5000;

type Tables = {
  chain_heads: { company_id: string; last_seq: number };
  merkle_hashes: { company_id: string; idx: number; hash: string };
  log_entries: { company_id: string; seq: number; hash: string };
};

export const migration: Migration = {
  async up(db0: Kysely<unknown>) {
    const db = db0 as Kysely<Tables>;
    for (const head of await db.selectFrom('chain_heads').select(['company_id', 'last_seq']).execute()) {
      const size = Number(head.last_seq) + 1;
      // A tree of fewer than 2^TREE_STRIDE leaves stores nothing: its hashes are read from the entries.
      if (size < 2 ** TREE_STRIDE) continue;
      const any = await db.selectFrom('merkle_hashes').select('idx').where('company_id', '=', head.company_id).limit(1).executeTakeFirst();
      if (any) continue;
      const edge = TreeEdge.empty();
      for (let from = 0; from < size; from += PAGE) {
        const rows = await db.selectFrom('log_entries').select(['seq', 'hash']).where('company_id', '=', head.company_id).where('seq', '>=', from).where('seq', '<', from + PAGE).orderBy('seq').execute();
        const values: Array<{ company_id: string; idx: number; hash: string }> = [];
        let first = storedHashIndex(0, edge.size);
        for (const r of rows) {
          const completed = edge.append(entryLeafHash(r.hash));
          for (let level = TREE_STRIDE; level < completed.length; level += TREE_STRIDE) values.push({ company_id: head.company_id, idx: first + level, hash: toHex(completed[level] as Hash) });
          first += completed.length;
        }
        for (let i = 0; i < values.length; i += 1000) await db.insertInto('merkle_hashes').values(values.slice(i, i + 1000)).execute();
      }
    }
  },
};
