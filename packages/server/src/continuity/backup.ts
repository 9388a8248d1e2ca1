// `audit-ledger backup --to DIR`: a consistent online backup while the service ingests.
// SQLite: VACUUM INTO copies the database from one read snapshot (the writer goes on; erased
// content is not carried over, since the copy is built from the live rows, not from free pages).
// Both stores: per company, a JSON Lines export of every entry up to its chain head as read at the
// start (entries below a head never change, except that an erasure may blank content) and its
// signed checkpoints; the service-wide rows (companies, signing keys, key transitions); and a
// manifest with each company's tree size and root, signed by the service key.
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { entryLeafHash, GENESIS_PREV_HASH, toHex, TreeEdge } from '@audit-ledger/core';
import { VERSION } from '../kernel/version.js';
import { entriesOf, jsonLines } from '../exports/formats.js';
import type { Store } from '../store/store.js';
import { openSqliteStore } from '../store/sqlite.js';
import { BACKUP_FORMAT, fileDigest, type Manifest, type ManifestCompany, signManifest } from './manifest.js';

export interface BackupOptions {
  /** The service's store (the live database). */
  store: Store;
  /** The directory to create; it must not exist or be empty. */
  dir: string;
  /** LEDGER_ORIGIN. */
  origin: string;
  /** The service's active signing key (it signs the manifest). */
  key: { raw: Uint8Array; sign(message: Uint8Array): Uint8Array };
  clock?: () => number;
  say?: (line: string) => void;
}

export class BackupTargetError extends Error {
  override readonly name = 'BackupTargetError';
}

/** Writes the company's entries below `size` as JSON Lines; returns the root and head hash they make. */
async function exportCompany(source: Store, companyId: string, size: number, file: string): Promise<{ root: string; lastHash: string }> {
  const edge = TreeEdge.empty();
  let lastHash = GENESIS_PREV_HASH;
  const out = fs.createWriteStream(file, { mode: 0o600 });
  const rows = (async function* () {
    for await (const row of entriesOf(source.ledger, companyId, { seqBelow: size })) {
      edge.append(entryLeafHash(row.hash));
      lastHash = row.hash;
      yield row;
    }
  })();
  for await (const chunk of jsonLines(rows)) if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  if (edge.size !== size) throw new Error(`company ${companyId}: read ${edge.size} entries below its head ${size}`);
  return { root: toHex(edge.root()), lastHash };
}

export async function takeBackup(opts: BackupOptions): Promise<Manifest> {
  const { store, dir } = opts;
  const say = opts.say ?? (() => {});
  const clock = opts.clock ?? Date.now;
  if (fs.existsSync(dir) && fs.readdirSync(dir).length > 0) throw new BackupTargetError(`${dir} exists and is not empty: give a new directory for each backup`);
  fs.mkdirSync(path.join(dir, 'companies'), { recursive: true, mode: 0o700 });
  const createdAt = new Date(clock()).toISOString();

  // The source every file is read from: on SQLite, the snapshot VACUUM INTO made, so the database
  // file and the exports agree exactly; on PostgreSQL, the live database (heads read first).
  let source = store;
  if (store.kind === 'sqlite') {
    const file = path.resolve(dir, 'ledger.db');
    await sql`VACUUM INTO ${file}`.execute(store.db);
    fs.chmodSync(file, 0o600);
    source = openSqliteStore(file);
  }
  try {
    const schema = (await source.migrationState()).current;
    const sizes = await source.continuityStore.sizes();
    const service = await source.continuityStore.serviceRows();
    fs.writeFileSync(path.join(dir, 'service.json'), `${JSON.stringify(service, null, 2)}\n`, { mode: 0o600 });
    const companies: ManifestCompany[] = [];
    for (const c of service.companies) {
      const size = sizes.get(c.company_id) ?? 0;
      const entriesFile = `companies/${c.company_id}.jsonl`;
      const checkpointsFile = `companies/${c.company_id}.checkpoints.json`;
      const { root, lastHash } = await exportCompany(source, c.company_id, size, path.join(dir, entriesFile));
      const kept = await source.continuityStore.checkpointsUpTo(c.company_id, size);
      fs.writeFileSync(path.join(dir, checkpointsFile), `${JSON.stringify(kept, null, 2)}\n`, { mode: 0o600 });
      const newest = kept.checkpoints.at(-1);
      companies.push({
        company_id: c.company_id,
        name: c.name,
        tree_size: size,
        root_hash: root,
        last_hash: lastHash,
        entries_file: entriesFile,
        checkpoints_file: checkpointsFile,
        checkpoint: newest ? { tree_size: newest.tree_size, root_hash: newest.root_hash, note: newest.note } : null,
      });
      say(`company ${c.company_id} (${c.name}): ${size} entries, root ${root}${newest ? `, newest checkpoint at size ${newest.tree_size}` : ''}`);
    }
    const files: Manifest['files'] = [];
    for (const f of ['ledger.db', 'service.json', ...companies.flatMap((c) => [c.entries_file, c.checkpoints_file])]) {
      if (fs.existsSync(path.join(dir, f))) files.push({ path: f, ...(await fileDigest(path.join(dir, f))) });
    }
    const manifest: Manifest = { format: BACKUP_FORMAT, created_at: createdAt, audit_ledger_version: VERSION, store: store.kind, schema, origin: opts.origin, companies, files };
    const bytes = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
    fs.writeFileSync(path.join(dir, 'manifest.json'), bytes, { mode: 0o600 });
    fs.writeFileSync(path.join(dir, 'manifest.sig'), `${JSON.stringify(signManifest(bytes, opts.key), null, 2)}\n`, { mode: 0o600 });
    return manifest;
  } finally {
    if (source !== store) await source.close();
    for (const f of ['ledger.db-wal', 'ledger.db-shm']) fs.rmSync(path.join(dir, f), { force: true });
  }
}
