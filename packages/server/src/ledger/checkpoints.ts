// Signing a company's checkpoints. The note's key name is LEDGER_ORIGIN (one name for the
// service); the origin line adds the company (core's companyOrigin), so a checkpoint can never
// be passed off as another company's. Checking them is the core's checkpointProblems.
import { checkpointText, companyOrigin, toHex } from '@audit-ledger/core';
import type { CheckpointRow } from '../store/chain.js';
import { iso } from '../kernel/time.js';
import type { SigningKey } from './keyring.js';
import { signNote } from '../crypto/signing.js';

export class CheckpointSigner {
  constructor(readonly keyName: string) {}

  /** Signs with `key`: the active key the caller read once for the whole append group. */
  sign(key: SigningKey, companyId: string, treeSize: number, root: Uint8Array, nowMs: number): CheckpointRow {
    // Never before the key's period began (a clock behind the rotation's time): ledger-format.md §12.
    const timestamp = iso(Math.max(nowMs, key.activeFrom));
    const text = checkpointText({ origin: companyOrigin(this.keyName, companyId), treeSize, rootHash: root, timestamp });
    return {
      company_id: companyId,
      tree_size: treeSize,
      root_hash: toHex(root),
      timestamp,
      key_id: key.keyId,
      note: signNote(text, this.keyName, key.custody, key.raw),
    };
  }
}
