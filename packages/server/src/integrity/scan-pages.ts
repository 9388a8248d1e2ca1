// Reads one page of a company's ledger as the scan needs it (core's ScanPage): its entries, the
// stored tree hashes they complete, the checkpoints inside it and the erasure records its erased
// entries name. The verifier reads pages on its own thread; scan workers read theirs.
import { type ScanPage, treeHashRange } from '@audit-ledger/core';
import type { IntegrityStore } from '../store/integrity.js';
import type { LedgerStore } from '../store/ledger.js';

export interface PageReader {
  ledger: LedgerStore;
  integrityStore: IntegrityStore;
}

/** Seqs [from, to); with `withPrevious`, also the stored hash of entry from − 1 (null when it is missing). */
export async function readScanPage(s: PageReader, companyId: string, from: number, to: number, withPrevious = false): Promise<{ page: ScanPage; previousHash: string | null }> {
  const [hs, he] = treeHashRange(from, to);
  const [rows, treeHashes, checkpoints] = await Promise.all([
    s.integrityStore.entriesInRange(companyId, withPrevious && from > 0 ? from - 1 : from, to),
    s.integrityStore.treeHashes(companyId, hs, he),
    s.ledger.listCheckpoints(companyId, from, to),
  ]);
  let previousHash: string | null = null;
  if (withPrevious && from > 0 && rows[0]?.seq === from - 1) previousHash = (rows.shift() as (typeof rows)[number]).hash;
  const [erasureRecords, firstOfKeys] = await Promise.all([s.integrityStore.erasureRecordsFor(companyId, rows), s.integrityStore.firstOfMarkedKeys(companyId, rows)]);
  return { page: { from, to, entries: rows, treeHashes, checkpoints, erasureRecords, firstOfKeys }, previousHash };
}
