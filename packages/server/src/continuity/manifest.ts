// A backup's manifest: what it holds (per company, the tree size and root its entries make, and
// the newest checkpoint at or below that size), every file's SHA-256, and the service key's
// signature over the manifest's exact bytes. docs/operations.md, "Backups", specifies it.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { fromBase64, keyIdOf, rawKeyFromBase64, toBase64, utf8, verifyEd25519 } from '@audit-ledger/core';

export const BACKUP_FORMAT = 'audit-ledger-backup/1';
/** Signed bytes: this line, then the manifest file's bytes (so a signature can never be taken for another statement's). */
export const MANIFEST_SIGNATURE_CONTEXT = 'audit-ledger backup manifest v1\n';

export interface ManifestCompany {
  company_id: string;
  name: string;
  /** Entries in the backup: seq 0 to tree_size - 1. */
  tree_size: number;
  /** RFC 6962 root of those entries (lowercase hex; the empty tree's root for none). */
  root_hash: string;
  /** The hash of entry tree_size - 1 (the chain head), or 64 zeros for none. */
  last_hash: string;
  /** The company's JSON Lines export in the backup (every entry, as GET /exports?format=jsonl gives it). */
  entries_file: string;
  /** Its signed checkpoints up to tree_size, and the witnesses' cosignatures of them. */
  checkpoints_file: string;
  /** The newest of them, or null when none was signed yet. */
  checkpoint: { tree_size: number; root_hash: string; note: string } | null;
}

export interface Manifest {
  format: typeof BACKUP_FORMAT;
  created_at: string;
  audit_ledger_version: string;
  store: 'sqlite' | 'postgres';
  /** The schema migration the backed-up database was at. */
  schema: string | null;
  /** LEDGER_ORIGIN: the key name in every checkpoint note. */
  origin: string;
  companies: ManifestCompany[];
  files: Array<{ path: string; sha256: string; bytes: number }>;
}

export interface ManifestSignature {
  key_id: string;
  /** Raw Ed25519 public key, base64. */
  public_key: string;
  /** Ed25519 over MANIFEST_SIGNATURE_CONTEXT + the manifest file's bytes, base64. */
  signature: string;
}

export async function fileDigest(file: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of fs.createReadStream(file)) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

export function manifestMessage(manifestBytes: Uint8Array): Uint8Array {
  const context = utf8(MANIFEST_SIGNATURE_CONTEXT);
  const out = new Uint8Array(context.length + manifestBytes.length);
  out.set(context);
  out.set(manifestBytes, context.length);
  return out;
}

export function signManifest(manifestBytes: Uint8Array, key: { raw: Uint8Array; sign(message: Uint8Array): Uint8Array }): ManifestSignature {
  return { key_id: keyIdOf(key.raw), public_key: toBase64(key.raw), signature: toBase64(key.sign(manifestMessage(manifestBytes))) };
}

/** Whether the signature holds, by the key it names, over these manifest bytes. */
export function manifestSignatureHolds(manifestBytes: Uint8Array, sig: ManifestSignature): boolean {
  try {
    const raw = rawKeyFromBase64(sig.public_key);
    return keyIdOf(raw) === sig.key_id && verifyEd25519(raw, manifestMessage(manifestBytes), fromBase64(sig.signature));
  } catch {
    return false;
  }
}
