// What a restore reads: a backup directory (its manifest checked against its signature and every
// file against the manifest's digests) and JSON Lines exports (GET /exports?format=jsonl, or a
// backup's own company files) that supply entries a backup does not have.
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { canonicalJson, type JsonObject, type KeyTransition, rawKeyFromBase64, type TrustedKey, trustedKey } from '@audit-ledger/core';
import type { CheckpointRow, LogEntryRow } from '../store/chain.js';
import { LOG_ENTRY_COLUMNS } from '../store/columns.js';
import type { CosignatureRow, ServiceRows } from '../store/continuity.js';
import { BACKUP_FORMAT, fileDigest, type Manifest, type ManifestSignature, manifestSignatureHolds } from './manifest.js';

/** The backup or an export is not what it must be; nothing was written. */
export class RestoreInputError extends Error {
  override readonly name = 'RestoreInputError';
}

export interface Backup {
  dir: string;
  manifest: Manifest;
  signature: ManifestSignature;
  service: ServiceRows;
}

const readJson = <T>(file: string, what: string): T => {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch (err) {
    throw new RestoreInputError(`${what} ${file}: ${(err as Error).message}`);
  }
};

/**
 * Opens a backup: the manifest's signature must hold, by a key the backup's own signing keys
 * list (an operator compares its key_id with the key they pin), and every file must have the
 * digest the manifest gives.
 */
export async function openBackup(dir: string): Promise<Backup> {
  const manifestFile = path.join(dir, 'manifest.json');
  if (!fs.existsSync(manifestFile)) throw new RestoreInputError(`${dir} holds no manifest.json: not a backup made by audit-ledger backup`);
  const bytes = fs.readFileSync(manifestFile);
  const manifest = readJson<Manifest>(manifestFile, 'manifest');
  if (manifest.format !== BACKUP_FORMAT) throw new RestoreInputError(`${manifestFile}: format ${JSON.stringify(manifest.format)}, not ${BACKUP_FORMAT}`);
  const signature = readJson<ManifestSignature>(path.join(dir, 'manifest.sig'), 'manifest signature');
  if (!manifestSignatureHolds(bytes, signature)) throw new RestoreInputError(`${dir}: the manifest's signature does not hold: the manifest was changed after the backup, or manifest.sig is not its signature`);
  for (const f of manifest.files) {
    const file = path.join(dir, f.path);
    if (!fs.existsSync(file)) throw new RestoreInputError(`${dir}: ${f.path} is missing`);
    const d = await fileDigest(file);
    if (d.sha256 !== f.sha256 || d.bytes !== f.bytes) throw new RestoreInputError(`${dir}: ${f.path} is not the file the manifest lists (sha256 ${d.sha256}, ${d.bytes} bytes; the manifest says ${f.sha256}, ${f.bytes} bytes)`);
  }
  const service = readJson<ServiceRows>(path.join(dir, 'service.json'), 'service rows');
  if (!service.signing_keys.some((k) => k.key_id === signature.key_id)) throw new RestoreInputError(`${dir}: the manifest is signed by key ${signature.key_id}, which is not one of the backup's signing keys`);
  return { dir, manifest, signature, service };
}

/** The checkpoints and cosignatures a backup kept of a company. */
export function backupCheckpoints(backup: Backup, companyId: string): { checkpoints: CheckpointRow[]; cosignatures: CosignatureRow[] } {
  const c = backup.manifest.companies.find((x) => x.company_id === companyId);
  if (!c) return { checkpoints: [], cosignatures: [] };
  return readJson(path.join(backup.dir, c.checkpoints_file), 'checkpoints');
}

/** The keys a ledger's own rows vouch for: its original keys (not introduced by a transition), and the transitions that follow from them. */
export function trustOf(service: Pick<ServiceRows, 'signing_keys' | 'key_transitions'>): { pinned: TrustedKey[]; transitions: KeyTransition[] } {
  const introduced = new Set(service.key_transitions.map((t) => t.new_key_id));
  return { pinned: service.signing_keys.filter((k) => !introduced.has(k.key_id)).map((k) => trustedKey(rawKeyFromBase64(k.public_key))), transitions: [...service.key_transitions] };
}

/** The lines of a JSON Lines file, one at a time. */
export async function* linesOf(file: string): AsyncGenerator<string> {
  const rl = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
  for await (const line of rl) if (line.trim() !== '') yield line;
}

/** A stored row from an export line: every column, data, extra and links back to their canonical text (what was hashed). */
export function rowOfLine(line: string): LogEntryRow {
  const e = JSON.parse(line) as Record<string, unknown>;
  const row: Record<string, unknown> = {};
  for (const c of LOG_ENTRY_COLUMNS) {
    const v = e[c] ?? null;
    row[c] = (c === 'data' || c === 'extra' || c === 'links') && v !== null ? canonicalJson(v as JsonObject) : v;
  }
  return row as unknown as LogEntryRow;
}

/**
 * Entries supplied from exports, per company and seq (the last line read for a seq wins only if
 * it is the same line: two different entries at one seq are two histories, refused). Only lines at
 * or after `from(company)` are kept (what the base lacks), so memory holds the missing range, not
 * a whole export.
 */
export async function suppliedEntries(files: string[], from: (companyId: string) => number = () => 0): Promise<Map<string, Map<number, string>>> {
  const by = new Map<string, Map<number, string>>();
  for (const file of files) {
    if (!fs.existsSync(file)) throw new RestoreInputError(`export ${file} does not exist`);
    let n = 0;
    for await (const line of linesOf(file)) {
      n++;
      let e: { company_id?: unknown; seq?: unknown; hash?: unknown };
      try {
        e = JSON.parse(line) as typeof e;
      } catch {
        throw new RestoreInputError(`export ${file}, line ${n}: not JSON`);
      }
      if (typeof e.company_id !== 'string' || !Number.isSafeInteger(e.seq) || typeof e.hash !== 'string') throw new RestoreInputError(`export ${file}, line ${n}: not a ledger entry (company_id, seq and hash are required)`);
      const seq = e.seq as number;
      if (seq < from(e.company_id)) continue;
      const company = by.get(e.company_id) ?? new Map<number, string>();
      by.set(e.company_id, company);
      const before = company.get(seq);
      if (before !== undefined && (JSON.parse(before) as { hash: string }).hash !== e.hash) {
        throw new RestoreInputError(`export ${file}, line ${n}: company ${e.company_id} seq ${seq} differs from the same seq in another export: two histories`);
      }
      company.set(seq, line);
    }
  }
  return by;
}

/** The service rows a rebuild from exports alone records: the signing keys and transitions of GET /integrity/keys (public halves only). */
export function serviceRowsFromKeys(keysFile: string): ServiceRows {
  const json = readJson<{ items?: Array<{ key_id: string; algorithm?: string; public_key: string; active_from?: string; active_to?: string | null }>; transitions?: KeyTransition[] }>(keysFile, 'keys');
  if (!Array.isArray(json.items)) throw new RestoreInputError(`keys ${keysFile}: not the JSON of GET /api/v1/integrity/keys (no items)`);
  return {
    companies: [],
    signing_keys: json.items.map((k) => ({ key_id: k.key_id, algorithm: k.algorithm ?? 'Ed25519', public_key: k.public_key, active_from: k.active_from ?? new Date(0).toISOString(), active_to: k.active_to ?? null, private_key_encrypted: null, custody: null })),
    key_transitions: json.transitions ?? [],
  };
}
