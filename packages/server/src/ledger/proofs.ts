// What the proof, checkpoint and evidence endpoints answer, in the JSON shapes of
// docs/ledger-format.md: hashes as lowercase hex, the note exactly as signed.
import { consistencyProof, type Hash, type HashReader, inclusionProofs, layeredReader, parseCheckpointText, parseNote, readRoot, toHex } from '@audit-ledger/core';
import type { CheckpointRow } from '../store/chain.js';
import type { CheckpointView } from '../kernel/shapes.js';
import type { LedgerStore } from '../store/ledger.js';
import type { WitnessStore } from '../store/witnesses.js';

export type { CheckpointView, CosignatureView } from '../kernel/shapes.js';

export function checkpointView(row: CheckpointRow): CheckpointView {
  const origin = parseCheckpointText(parseNote(row.note).text).origin;
  return { origin, tree_size: row.tree_size, root_hash: row.root_hash, timestamp: row.timestamp, key_id: row.key_id, note: row.note };
}

/** The checkpoint with its witnesses' cosignatures: the view, and the note with their signature lines appended. */
export function cosignedCheckpointView(row: CheckpointRow, cosignatures: Array<{ witness: string; timestamp: number; line: string }>) {
  const cos = cosignatures.map((c) => ({ witness: c.witness, timestamp: Number(c.timestamp), line: c.line }));
  return { ...checkpointView(row), cosignatures: cos, cosigned_note: row.note + cos.map((c) => c.line).join('') };
}

export interface InclusionView {
  leaf_index: number;
  tree_size: number;
  root_hash: string;
  proof: string[];
}


/** Any subtree's hash, from the stored levels and the entries' hashes. */
export function treeReader(ledger: LedgerStore, companyId: string): HashReader {
  return layeredReader(
    (indexes) => ledger.readTreeHashes(companyId, indexes),
    (seqs) => ledger.readEntryHashes(companyId, seqs),
  );
}

/** Inclusion proofs of the entries at these seqs in the tree of `size` leaves. */
export async function inclusionViews(ledger: LedgerStore, companyId: string, seqs: number[], size: number): Promise<InclusionView[]> {
  const read = treeReader(ledger, companyId);
  const [proofs, root] = await Promise.all([inclusionProofs(read, seqs, size), readRoot(read, size)]);
  return seqs.map((seq, i) => ({ leaf_index: seq, tree_size: size, root_hash: toHex(root), proof: (proofs[i] as Hash[]).map(toHex) }));
}

export interface ConsistencyView {
  first: number;
  second: number;
  first_root: string;
  second_root: string;
  proof: string[];
}

export async function consistencyView(ledger: LedgerStore, companyId: string, first: number, second: number): Promise<ConsistencyView> {
  const read = treeReader(ledger, companyId);
  const [proof, r1, r2] = await Promise.all([consistencyProof(read, first, second), readRoot(read, first), readRoot(read, second)]);
  return { first, second, first_root: toHex(r1), second_root: toHex(r2), proof: proof.map(toHex) };
}

/** An RFC 3161 timestamp as bundles and reports carry it (docs/ledger-format.md §19). */
export interface TimestampView {
  tsa: string;
  tree_size: number;
  gen_time: string;
  checkpoint_note: string;
  token: string;
  consistency_proof: string[];
}

/** The newest timestamp of a checkpoint at or below `size`, its note, and the consistency proof from it to `size`. */
export async function timestampView(stores: { ledger: LedgerStore; witnessStore: Pick<WitnessStore, 'timestampAtOrBelow'> }, companyId: string, size: number): Promise<TimestampView | null> {
  const ts = await stores.witnessStore.timestampAtOrBelow(companyId, size);
  if (!ts) return null;
  const stamped = await stores.ledger.getCheckpoint(companyId, Number(ts.tree_size));
  if (!stamped) return null;
  const proof = Number(ts.tree_size) === size ? [] : (await consistencyView(stores.ledger, companyId, Number(ts.tree_size), size)).proof;
  return { tsa: ts.tsa, tree_size: Number(ts.tree_size), gen_time: ts.gen_time, checkpoint_note: stamped.note, token: ts.token, consistency_proof: proof };
}
