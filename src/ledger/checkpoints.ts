// Signing and checking a company's checkpoints. The note's key name is LEDGER_ORIGIN (one
// name for the service); the origin line adds the company, so a checkpoint can never be
// passed off as another company's.
import type { KeyObject } from 'node:crypto';
import { type Checkpoint, checkpointText, noteSignedBy, parseCheckpointText, parseNote, signNote } from '../core/checkpoint.js';
import { rawPublicKey } from '../core/signature.js';
import type { CheckpointRow } from '../store/chain.js';
import { iso } from '../time.js';
import type { SigningKey } from './keyring.js';

export function companyOrigin(keyName: string, companyId: string): string {
  return `${keyName}/${companyId}`;
}

export class CheckpointSigner {
  private readonly raws = new Map<string, Buffer>();

  constructor(readonly keyName: string) {}

  /** Signs with `key`: the active key the caller read once for the whole append group. */
  sign(key: SigningKey, companyId: string, treeSize: number, root: Buffer, nowMs: number): CheckpointRow {
    let raw = this.raws.get(key.keyId);
    if (!raw) this.raws.set(key.keyId, (raw = rawPublicKey(key.publicKey)));
    const timestamp = iso(nowMs);
    const text = checkpointText({ origin: companyOrigin(this.keyName, companyId), treeSize, rootHash: root, timestamp });
    return {
      company_id: companyId,
      tree_size: treeSize,
      root_hash: root.toString('hex'),
      timestamp,
      key_id: key.keyId,
      note: signNote(text, this.keyName, key.privateKey, raw),
    };
  }
}

/**
 * What is wrong with a stored checkpoint: its note must be signed by the key it names,
 * for this company's origin, and say what its columns say. Empty when it holds.
 */
export function checkpointProblems(row: CheckpointRow, keyName: string, publicKey: KeyObject | undefined): string[] {
  if (!publicKey) return [`checkpoint at tree size ${row.tree_size} names unknown key ${row.key_id}`];
  if (!noteSignedBy(row.note, keyName, publicKey, rawPublicKey(publicKey))) {
    return [`checkpoint at tree size ${row.tree_size}: the note signature does not verify with key ${row.key_id}`];
  }
  let c: Checkpoint;
  try {
    c = parseCheckpointText(parseNote(row.note).text);
  } catch (err) {
    return [`checkpoint at tree size ${row.tree_size}: ${(err as Error).message}`];
  }
  const problems: string[] = [];
  if (c.origin !== companyOrigin(keyName, row.company_id)) problems.push(`checkpoint at tree size ${row.tree_size} is for origin "${c.origin}"`);
  if (c.treeSize !== row.tree_size) problems.push(`checkpoint stored at tree size ${row.tree_size} signs tree size ${c.treeSize}`);
  if (c.rootHash.toString('hex') !== row.root_hash) problems.push(`checkpoint at tree size ${row.tree_size}: stored root ${row.root_hash} differs from the signed root ${c.rootHash.toString('hex')}`);
  return problems;
}
