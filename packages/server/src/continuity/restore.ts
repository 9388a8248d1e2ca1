// `audit-ledger restore`: a ledger from a backup (or, when the database is gone, from complete
// JSON Lines exports), never behind a checkpoint the outside world has seen. Per company it
// verifies the entries it would restore (the backup's, then any supplied from exports) as an
// auditor verifies an export (core's ExportVerifier: hashes, chain, signatures, key periods, and
// the tree's root against each signed checkpoint), compares their count with every checkpoint
// seen outside (files the operator gives, the witnesses), and refuses, writing nothing, when one
// is behind or disagrees, naming exactly the entries missing. Only then is anything written.
import fs from 'node:fs';
import path from 'node:path';
import { canonicalJson, checkCheckpointNote, entryLeafHash, type Json, ExportVerifier, followTransitions, GENESIS_PREV_HASH, KEY_ROTATION_EVENT_TYPE, type KeyTransition, layeredReader, parseCheckpointText, parseNote, readEdge, SIGNATURE_ALGORITHM, toHex, TreeEdge, type TrustedKey } from '@audit-ledger/core';
import type { Config } from '../kernel/config.js';
import type { LogEntryRow } from '../store/chain.js';
import { openStore } from '../store/open.js';
import type { Store } from '../store/store.js';
import { growTree } from '../ledger/tree-rows.js';
import type { ServiceRows } from '../store/continuity.js';
import { type Backup, backupCheckpoints, linesOf, openBackup, RestoreInputError, rowOfLine, serviceRowsFromKeys, suppliedEntries } from './sources.js';
import { type SeenCheckpoint, seenInFile, witnessSize } from './seen.js';
import { operatorFetch } from '../egress/address-policy.js';
import { MARKS_FILE, readMarks } from './marks.js';
import { readTarget, sqliteTarget, trustAnchor } from './target.js';
import { openSqliteStore } from '../store/sqlite.js';
import { removeSearchFile } from '../store/sqlite-search-file.js';
import SQLite from 'better-sqlite3';
import { entriesOf } from '../exports/formats.js';
import { LOG_ENTRY_COLUMNS } from '../store/columns.js';

/** The source of the holds a PostgreSQL restore takes while it writes (lifted when it completes). */
export const RESTORE_HOLD = 'restore in progress (audit-ledger restore): run it again to complete it';

export interface RestoreOptions {
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'ledgerOrigin' | 'witnesses' | 'witnessAllowPrivate' | 'signingKeyFile'>;
  /** A backup directory (audit-ledger backup --to). */
  from?: string;
  /** Complete JSON Lines exports (from seq 0), one company each: the base when there is no backup. */
  exports?: string[];
  /** Exports that supply entries the base does not have (any range; only those after the base are used). */
  entries?: string[];
  /** Checkpoint files: what auditors, clients or a monitor have seen. */
  checkpoints?: string[];
  /** The service's published keys (GET /integrity/keys), needed when there is no backup. */
  keysFile?: string;
  /** SQLite: replace an existing ledger.db (kept beside it as ledger.db.replaced-<time>). */
  force?: boolean;
  say?: (line: string) => void;
}

export interface CompanyVerdict {
  company_id: string;
  /** Entries the restored ledger has: the base's, then the supplied ones. */
  size: number;
  base: number;
  supplied: number;
  root_hash: string;
  /** Why it cannot be restored as it is; empty when it can. */
  problems: string[];
}

export interface RestoreResult {
  ok: boolean;
  companies: CompanyVerdict[];
}

/** One company's base: a backup's company file or a complete export, and its size by the manifest (if any). */
export interface Base {
  companyId: string;
  name: string;
  file: string;
  manifest?: { tree_size: number; root_hash: string };
}

/** A signed note's tree size and root (hex); undefined when it is not a checkpoint note (judged by the verifier). */
function sizeAndRoot(note: string): { size: number; root: string } | undefined {
  try {
    const c = parseCheckpointText(parseNote(note).text);
    return { size: c.treeSize, root: toHex(c.rootHash) };
  } catch {
    return undefined;
  }
}

/**
 * Verifies a company's base and supplied entries, and compares them with what was seen. The
 * newest signed checkpoint among them gets the full check of an export (every entry's hash and
 * signature, the chain, key periods, the root); each other one is checked for its signature and
 * its root at its size, so the signatures are verified once, however many checkpoints were seen.
 */
export async function verifyCompany(base: Base & { lines?: AsyncIterable<string> }, supplied: Map<number, string> | undefined, seen: SeenCheckpoint[], trust: { pinned: TrustedKey[]; transitions: KeyTransition[] }, ownNotes: string[]): Promise<CompanyVerdict> {
  const problems: string[] = [];
  const edge = TreeEdge.empty();
  let prevHash = GENESIS_PREV_HASH;
  let baseSize = 0;
  let rootAtManifest: string | undefined;
  const notes = [...new Set([...ownNotes, ...seen.flatMap((s) => (s.note ? [s.note] : []))])].map((note) => ({ note, at: sizeAndRoot(note) }));
  const main = notes.reduce<(typeof notes)[number] | undefined>((a, n) => (a && (a.at?.size ?? -1) >= (n.at?.size ?? -1) ? a : n), undefined);
  const verifier = main ? new ExportVerifier(trust.pinned, main.note, base.companyId, {}, trust.transitions) : undefined;
  const rootsAt = new Map<number, string>(notes.filter((n) => n !== main && n.at).map((n) => [(n.at as { size: number }).size, '']));
  const readTransitions: string[] = [];
  /** Takes the next entry; returns its seq. */
  const add = (line: string): number => {
    const e = JSON.parse(line) as { seq: number; hash: string; prev_hash: string; event_type?: string };
    verifier?.addLine(line);
    if (e.prev_hash !== prevHash && problems.length === 0) problems.push(`entry seq ${e.seq} does not follow entry ${e.seq - 1} (prev_hash)`);
    prevHash = e.hash;
    if (e.event_type === KEY_ROTATION_EVENT_TYPE) readTransitions.push(line);
    edge.append(entryLeafHash(e.hash));
    if (base.manifest && edge.size === base.manifest.tree_size) rootAtManifest = toHex(edge.root());
    if (rootsAt.has(edge.size)) rootsAt.set(edge.size, toHex(edge.root()));
    return e.seq;
  };
  for await (const line of base.lines ?? linesOf(base.file)) {
    if (add(line) !== baseSize) throw new RestoreInputError(`${base.file}: line ${baseSize + 1} is not seq ${baseSize}: a base must be a complete export from seq 0`);
    baseSize++;
  }
  if (base.manifest) {
    if (baseSize !== base.manifest.tree_size) problems.push(`the backup's file holds ${baseSize} entries, the manifest says ${base.manifest.tree_size}`);
    else if ((rootAtManifest ?? toHex(TreeEdge.empty().root())) !== base.manifest.root_hash) problems.push(`the backup's entries make root ${rootAtManifest}, the manifest says ${base.manifest.root_hash}`);
  }
  let n = 0;
  for (let seq = baseSize; supplied?.has(seq); seq++, n++) add(supplied.get(seq) as string);
  const size = baseSize + n;
  const newest = seen.reduce<SeenCheckpoint | undefined>((a, s) => (a && a.size >= s.size ? a : s), undefined);
  if (newest && newest.size > size) {
    problems.push(
      `behind: the restored ledger would end at seq ${size - 1} (${size} entries), and ${newest.source} has seen a checkpoint of size ${newest.size}: ` +
        `entries seq ${size} to ${newest.size - 1} (${newest.size - size}) are missing. Supply them with --entries <a JSON Lines export that holds them> ` +
        `(GET /api/v1/exports?format=jsonl from a copy that has them, a log stream's copy, or an older backup's export)`,
    );
  }
  for (const s of seen) if (s.conflict) problems.push(`${s.source}: ${s.conflict}`);
  const where = (note: string) => seen.find((s) => s.note === note)?.source ?? 'the backup';
  if (main && verifier && (main.at?.size ?? 0) <= size) {
    const report = verifier.finish();
    const failed = report.checks.filter((c) => c.status === 'fail').slice(0, 3).map((c) => c.message);
    if (!report.ok) problems.push(`does not verify against the checkpoint of size ${main.at?.size ?? '?'} from ${where(main.note)}: ${failed.join('; ')}`);
  }
  const keys = followTransitions(trust.pinned, [...trust.transitions, ...rotationsIn(readTransitions)]).keys;
  for (const { note, at } of notes) {
    if (note === main?.note || !at || at.size > size) continue;
    const signed = checkCheckpointNote(note, keys, base.companyId);
    if (!signed.checkpoint) problems.push(`the checkpoint of size ${at.size} from ${where(note)}: ${signed.failure}`);
    else if (rootsAt.get(at.size) !== at.root && !(at.size === 0 && at.root === toHex(TreeEdge.empty().root()))) {
      problems.push(`does not verify against the checkpoint of size ${at.size} from ${where(note)}: the entries make another root at that size (another history)`);
    }
  }
  return { company_id: base.companyId, size, base: baseSize, supplied: n, root_hash: toHex(edge.root()), problems };
}

/** Where each company's base comes from: the backup's files, then complete exports for companies it does not have. */
async function basesOf(backup: Backup | undefined, exports: string[]): Promise<Base[]> {
  const bases: Base[] = (backup?.manifest.companies ?? []).map((c) => ({
    companyId: c.company_id,
    name: c.name,
    file: path.join((backup as Backup).dir, c.entries_file),
    manifest: { tree_size: c.tree_size, root_hash: c.root_hash },
  }));
  for (const file of exports) {
    let companyId: string | undefined;
    for await (const line of linesOf(file)) {
      companyId = (JSON.parse(line) as { company_id?: string }).company_id;
      break;
    }
    if (!companyId) throw new RestoreInputError(`export ${file} holds no entry`);
    if (bases.some((b) => b.companyId === companyId)) throw new RestoreInputError(`export ${file}: company ${companyId} has a base already (the backup, or another --export); give extra entries with --entries`);
    bases.push({ companyId, name: companyId, file });
  }
  return bases;
}

/** Checks everything, then (only if every company passes) writes the restored ledger. */
export async function restore(opts: RestoreOptions): Promise<RestoreResult> {
  const say = opts.say ?? (() => {});
  const backup = opts.from ? await openBackup(opts.from) : undefined;
  if (!backup && !(opts.exports?.length)) throw new RestoreInputError('give a backup (--from DIR) or complete exports (--export FILE)');
  if (!backup && !opts.keysFile) throw new RestoreInputError('without a backup, give the service keys the exports were signed with (--keys: GET /api/v1/integrity/keys saved as JSON)');
  if (backup && backup.manifest.origin !== opts.config.ledgerOrigin) throw new RestoreInputError(`the backup is of origin ${backup.manifest.origin}; this service's LEDGER_ORIGIN is ${opts.config.ledgerOrigin}`);
  const service: ServiceRows = backup?.service ?? serviceRowsFromKeys(opts.keysFile as string);
  // Trust comes from outside the backup (target.ts): the keys pinned, and those they endorsed.
  const target = await readTarget(opts.config);
  const anchor = trustAnchor(opts.config, opts.keysFile, target);
  if (anchor.keys.length === 0) throw new RestoreInputError(`no signing key to verify the entries with in ${anchor.source}`);
  const trust = { pinned: anchor.keys, transitions: [...anchor.transitions, ...service.key_transitions.filter((t) => !anchor.transitions.some((a) => a.statement === t.statement))] };
  const vouched = new Set(followTransitions(trust.pinned, trust.transitions).keys.map((k) => k.keyId));
  if (backup && !vouched.has(backup.signature.key_id)) throw new RestoreInputError(`the backup's manifest is signed by key ${backup.signature.key_id}, which neither ${anchor.source} nor a signed transition from it vouches for: the backup is not this service's, or it was forged`);
  for (const k of service.signing_keys) if (!vouched.has(k.key_id)) throw new RestoreInputError(`${backup ? "the backup's service.json" : 'the keys'} holds signing key ${k.key_id}, which neither ${anchor.source} nor a signed transition from it vouches for: refused (a key added to a backup could sign anything)`);
  say(`trusting key${vouched.size === 1 ? '' : 's'} ${[...vouched].join(', ')} (${anchor.source}${vouched.size > anchor.keys.length ? ', and the keys it endorsed in signed transitions' : ''})`);
  const bases = await basesOf(backup, opts.exports ?? []);
  const supplied = await suppliedEntries(opts.entries ?? [], (id) => bases.find((b) => b.companyId === id)?.manifest?.tree_size ?? 0);
  for (const id of supplied.keys()) if (!bases.some((b) => b.companyId === id)) throw new RestoreInputError(`--entries supplies company ${id}, which neither the backup nor an --export has`);

  // What the outside world has seen: the operator's files, then each witness, asked with the base's newest checkpoint.
  const seen: SeenCheckpoint[] = (opts.checkpoints ?? []).flatMap((f) => seenInFile(f, opts.config.ledgerOrigin));
  // The service's own marks in the target data directory: checkpoints it committed there before.
  const marksFile = path.join(opts.config.dataDir, MARKS_FILE);
  const marks = readMarks(marksFile);
  if (marks?.origin === opts.config.ledgerOrigin) {
    for (const [companyId, m] of Object.entries(marks.companies)) seen.push({ companyId, size: m.tree_size, note: m.note, source: `a checkpoint this service signed (${marksFile})` });
  }
  // The ledger this restore replaces is evidence too: its newest signed checkpoints.
  seen.push(...(target?.checkpoints ?? []));
  for (const s of seen) if (!bases.some((b) => b.companyId === s.companyId)) throw new RestoreInputError(`${s.source}: a checkpoint of company ${s.companyId}, which this restore does not have (a log the outside world saw cannot be left out)`);
  const kept = new Map(bases.map((b) => [b.companyId, backup ? backupCheckpoints(backup, b.companyId) : { checkpoints: [], cosignatures: [] }]));
  // A witness that does not answer is asked no more (said once): a witness down never costs a timeout per company.
  const down = new Set<string>();
  const send = operatorFetch(opts.config.witnessAllowPrivate);
  for (const b of bases) {
    const own = kept.get(b.companyId)?.checkpoints.at(-1);
    if (!own) continue;
    for (const w of opts.config.witnesses.filter((x) => !down.has(x.name))) {
      const answer = await witnessSize(send, w, own);
      if (answer.size !== undefined) seen.push({ companyId: b.companyId, size: answer.size, source: `witness ${w.name}`, ...(answer.conflict ? { conflict: answer.conflict } : {}) });
      else {
        if (answer.problem?.startsWith('no answer')) down.add(w.name);
        say(`company ${b.companyId}: witness ${w.name} did not say what it has cosigned (${answer.problem}); its view is not compared`);
      }
    }
  }

  const verdicts: CompanyVerdict[] = [];
  for (const b of bases) {
    const own = (kept.get(b.companyId)?.checkpoints ?? []).map((c) => c.note).slice(-1);
    const v = await verifyCompany(b, supplied.get(b.companyId), seen.filter((s) => s.companyId === b.companyId), trust, own);
    verdicts.push(v);
    const sources = seen.filter((s) => s.companyId === b.companyId).map((s) => `${s.source}: ${s.size}`);
    say(`company ${b.companyId} (${b.name}): ${v.size} entries (${v.base} from the ${backup ? 'backup' : 'export'}${v.supplied ? `, ${v.supplied} supplied` : ''}), root ${v.root_hash}; seen outside: ${sources.length ? sources.join(', ') : 'nothing'}`);
    for (const p of v.problems) say(`  refused: ${p}`);
  }
  if (verdicts.some((v) => v.problems.length > 0)) return { ok: false, companies: verdicts };

  await write(opts, backup, service, bases, verdicts, supplied, kept, say);
  return { ok: true, companies: verdicts };
}

/** The key transitions supplied entries record (signing_key.rotated: the data is the signed transition). */
export function rotationsIn(lines: string[]): KeyTransition[] {
  const out: KeyTransition[] = [];
  for (const line of lines) {
    const e = JSON.parse(line) as { event_type?: string; data?: Partial<KeyTransition> | null };
    const d = e.data;
    if (e.event_type !== KEY_ROTATION_EVENT_TYPE || !d || typeof d.statement !== 'string') continue;
    out.push({ old_key_id: String(d.old_key_id), old_public_key: String(d.old_public_key), new_key_id: String(d.new_key_id), new_public_key: String(d.new_public_key), created_at: String(d.created_at), statement: d.statement, old_signature: String(d.old_signature), new_signature: String(d.new_signature) });
  }
  return out;
}

/** Appends rows after the stored head of the company, in groups, growing the stored tree. */
export async function appendLines(store: Store, companyId: string, lines: AsyncIterable<string> | Iterable<string>): Promise<number> {
  const size = ((await store.ledger.getChainHead(companyId))?.lastSeq ?? -1) + 1;
  const edge = await readEdge(layeredReader((i) => store.ledger.readTreeHashes(companyId, i), (s) => store.ledger.readEntryHashes(companyId, s)), size);
  let group: LogEntryRow[] = [];
  let n = 0;
  const flush = async () => {
    if (group.length === 0) return;
    const tree = growTree(edge, group.map((r) => r.hash));
    const last = group.at(-1) as LogEntryRow;
    await store.continuityStore.appendRestored(companyId, group, tree, { lastSeq: last.seq, lastHash: last.hash, lastCreatedAt: last.created_at });
    n += group.length;
    group = [];
  };
  for await (const line of lines) {
    const row = rowOfLine(line);
    if (row.seq < size) continue;
    group.push(row);
    if (group.length >= 1000) await flush();
  }
  await flush();
  return n;
}

/**
 * Writes the verified ledger so that a restore stopped at any point (kill -9) leaves the old state
 * or the complete new one, never a partial ledger a service would append to:
 * - SQLite: the new ledger is built in ledger.db.restoring (from the verified entries, or the
 *   backup's database file once its entries and security rows are compared with what was
 *   verified, row by row), then renamed over ledger.db in one atomic rename; the replaced file is
 *   kept beside it (a hard link made before the rename).
 * - PostgreSQL: first, in one transaction, a hold per company (continuity_holds, source
 *   RESTORE_HOLD): every process of the service refuses that company's appends and checkpoints
 *   (503) until the restore completes and lifts them. A restore interrupted before that leaves its
 *   holds; running restore again removes the partial rows of the held companies and writes anew.
 */
async function write(opts: RestoreOptions, backup: Backup | undefined, service: ServiceRows, bases: Base[], verdicts: CompanyVerdict[], supplied: Map<string, Map<number, string>>, kept: Map<string, ReturnType<typeof backupCheckpoints>>, say: (line: string) => void): Promise<void> {
  const { config } = opts;
  const sqliteFile = sqliteTarget(config);
  const useFile = !config.databaseUrl && backup?.manifest.store === 'sqlite';
  if (!config.databaseUrl && fs.existsSync(sqliteFile) && !opts.force) throw new RestoreInputError(`${sqliteFile} exists: stop the service and give --force to replace it (it is kept as ledger.db.replaced-<time>)`);
  const building = `${sqliteFile}.restoring`;
  if (!config.databaseUrl) {
    fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
    for (const f of ['', '-wal', '-shm', '-journal']) fs.rmSync(building + f, { force: true });
    if (useFile) fs.copyFileSync(path.join((backup as Backup).dir, 'ledger.db'), building);
  }
  const store = config.databaseUrl ? openStore(config) : openSqliteStore(building);
  try {
    if (useFile) await compareServiceRows(store, service);
    await store.migrate();
    if (config.databaseUrl) await holdForRestore(store, bases, verdicts);
    else if (!useFile && [...(await store.continuityStore.sizes()).values()].some((n) => n > 0)) throw new RestoreInputError(`${building} already holds entries`);
    if (useFile) await compareEntries(store, bases);
    await store.continuityStore.addServiceRows({ ...service, companies: [...service.companies, ...bases.filter((b) => !service.companies.some((c) => c.company_id === b.companyId)).map((b) => ({ company_id: b.companyId, name: b.name, created_at: new Date().toISOString(), tlog_public: 0 }))] });
    for (const b of bases) {
      let written = 0;
      if (!useFile) written += await appendLines(store, b.companyId, linesOf(b.file));
      const more = supplied.get(b.companyId);
      if (more) {
        const lines = [...more.keys()].sort((x, y) => x - y).map((s) => more.get(s) as string);
        written += await appendLines(store, b.companyId, lines);
        for (const t of rotationsIn(lines)) await store.continuityStore.recordTransition(t, SIGNATURE_ALGORITHM);
      }
      const own = kept.get(b.companyId);
      if (!useFile && own) await store.continuityStore.addCheckpoints(own.checkpoints, own.cosignatures);
      say(`company ${b.companyId}: ${useFile ? 'database file restored (its entries and keys compared with the verified ones)' : 'rebuilt'}${written ? `, ${written} entries written` : ''}`);
    }
    if (config.databaseUrl) await store.continuityHolds.liftRestore(new Date().toISOString(), RESTORE_HOLD);
  } finally {
    await store.close();
  }
  if (!config.databaseUrl) {
    // One atomic step from the old ledger to the new one; the old one stays beside it.
    if (fs.existsSync(sqliteFile)) {
      const replaced = `${sqliteFile}.replaced-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      checkpointWal(sqliteFile);
      fs.linkSync(sqliteFile, replaced);
      say(`the ledger that was there is kept as ${replaced}`);
    }
    const fd = fs.openSync(building, 'r');
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fs.renameSync(building, sqliteFile);
    // The search index is of the ledger that was there: the service rebuilds it from this one.
    removeSearchFile(sqliteFile);
    const dir = fs.openSync(config.dataDir, 'r');
    fs.fsyncSync(dir);
    fs.closeSync(dir);
  }
}

/** Folds an existing ledger's write-ahead log into its file and removes it, so the file alone is the ledger (and no stale log meets the new file). */
function checkpointWal(file: string): void {
  const db = new SQLite(file);
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
  for (const f of ['-wal', '-shm']) fs.rmSync(file + f, { force: true });
}

/** PostgreSQL: holds every company of the restore first (one transaction); clears what an interrupted restore left. */
async function holdForRestore(store: Store, bases: Base[], verdicts: CompanyVerdict[]): Promise<void> {
  const sizes = await store.continuityStore.sizes();
  const held = new Set((await store.continuityHolds.open()).filter((h) => h.source === RESTORE_HOLD).map((h) => h.company_id));
  for (const [companyId, n] of sizes) if (n > 0 && !held.has(companyId)) throw new RestoreInputError('the target database already holds entries: restore into an empty database');
  const at = new Date().toISOString();
  await store.continuityHolds.holdForRestore(
    bases.map((b) => ({ company_id: b.companyId, seen_size: verdicts.find((v) => v.company_id === b.companyId)?.size ?? 0, stored_size: 0, source: RESTORE_HOLD, note: null, detected_at: at })),
    [...held],
  );
}

/**
 * Before a backup's database file is installed, it must hold exactly what was verified: the
 * security rows (companies, users, API keys, signing keys, transitions) equal to the signed
 * service.json's, compared at the backup's own schema (before migrating); and every entry, every
 * column, equal to the verified export's line at its seq (after migrating: columns a later
 * version added are null on both sides). A file that differs in any of them is refused.
 */
async function compareServiceRows(store: Store, service: ServiceRows): Promise<void> {
  const rows = await store.continuityStore.serviceRows();
  for (const table of ['companies', 'users', 'api_keys', 'signing_keys', 'key_transitions', 'sso_identities'] as const) {
    if (JSON.stringify(rows[table] ?? []) !== JSON.stringify(service[table] ?? [])) throw new RestoreInputError(`the backup's ledger.db differs from its signed service.json in table ${table}: the file was changed`);
  }
}

async function compareEntries(store: Store, bases: Base[]): Promise<void> {
  const parsed = (c: string, v: unknown) => ((c === 'data' || c === 'extra' || c === 'links') && typeof v === 'string' ? (JSON.parse(v) as unknown) : v);
  for (const b of bases) {
    const stored = entriesOf(store.ledger, b.companyId, {})[Symbol.asyncIterator]();
    let seq = 0;
    for await (const line of linesOf(b.file)) {
      const want = rowOfLine(line) as unknown as Record<string, unknown>;
      const got = (await stored.next()).value as Record<string, unknown> | undefined;
      const differs = !got || LOG_ENTRY_COLUMNS.some((c) => canonicalJson((parsed(c, got[c]) ?? null) as Json) !== canonicalJson((parsed(c, want[c]) ?? null) as Json));
      if (differs) throw new RestoreInputError(`the backup's ledger.db holds ${got ? 'another entry' : 'no entry'} at seq ${seq} of company ${b.companyId} than the verified export: the file was changed`);
      seq++;
    }
    if (!(await stored.next()).done) throw new RestoreInputError(`the backup's ledger.db holds entries of company ${b.companyId} after seq ${seq - 1}, which the verified export does not: the file was changed`);
  }
}
