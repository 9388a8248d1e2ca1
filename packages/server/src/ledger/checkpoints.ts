// Signing a company's checkpoints. The note's key name is LEDGER_ORIGIN (one name for the
// service); the origin line adds the company (core's companyOrigin), so a checkpoint can never
// be passed off as another company's. Checking them is the core's checkpointProblems.
import { checkpointText, companyOrigin, fromBase64, sha256Hex, toHex } from '@audit-ledger/core';
import type { CheckpointRow } from '../store/chain.js';
import { iso } from '../kernel/time.js';
import type { SigningKey } from './keyring.js';
import { signNote } from '../crypto/signing.js';

export class CheckpointSigner {
  /** Each company's newest RFC 3161 token this process knows of, named by the checkpoints it signs (docs/ledger-format.md §19). */
  private readonly tokens = new Map<string, { treeSize: number; sha256: string }>();

  constructor(readonly keyName: string) {}

  /**
   * A token over the company's checkpoint of treeSize (DER, base64): later checkpoints name it in
   * an extension line. The timestamper tells every process each pass (witness/timestamper.ts).
   */
  timestamped(companyId: string, treeSize: number, tokenB64: string): void {
    const known = this.tokens.get(companyId);
    if (known && known.treeSize >= treeSize) return;
    this.tokens.set(companyId, { treeSize, sha256: sha256Hex(fromBase64(tokenB64)) });
  }

  /** Signs with `key`: the active key the caller read once for the whole append group. */
  sign(key: SigningKey, companyId: string, treeSize: number, root: Uint8Array, nowMs: number): CheckpointRow {
    // Never before the key's period began (a clock behind the rotation's time): ledger-format.md §12.
    const timestamp = iso(Math.max(nowMs, key.activeFrom));
    const token = this.tokens.get(companyId);
    const text = checkpointText({ origin: companyOrigin(this.keyName, companyId), treeSize, rootHash: root, timestamp, ...(token && token.treeSize <= treeSize ? { timestampToken: token } : {}) });
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
