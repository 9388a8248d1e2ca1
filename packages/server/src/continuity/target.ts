// What a restore trusts, and what the ledger it would replace already proves (issue 42, 12–13).
// A backup cannot vouch for itself: its manifest is signed by a key its own service.json lists,
// so an attacker who adds a key there can change any file, fix the digests and sign again. A
// restore therefore verifies against keys pinned from outside the backup, in this order:
//   1. --keys FILE: the public keys the operator kept (GET /api/v1/integrity/keys saved apart);
//   2. the target's own signing key (LEDGER_SIGNING_KEY_FILE, or signing-key.pem in the data
//      directory): the key this service signs with, which a backup never carries;
//   3. the keys of the ledger the restore would replace, when it holds entries.
// With none of them, it refuses. Keys a pinned key endorsed in a signed transition are trusted too
// (transitions are self-authenticating: signed by the old key and the new one).
// The ledger being replaced is also evidence: its newest signed checkpoint per company is a
// checkpoint the world may have seen, so a restore behind it is refused like one behind a witness
// (a rollback with the marks file deleted is caught here).
import fs from 'node:fs';
import path from 'node:path';
import { type KeyTransition, parseTrustedKeys, type TrustedKey, trustedKey } from '@audit-ledger/core';
import type { Config } from '../kernel/config.js';
import { loadOrCreateKeyFile, signingKeyPath } from '../ledger/keyring.js';
import { openStore } from '../store/open.js';
import type { ServiceRows } from '../store/continuity.js';
import { openSqliteStore } from '../store/sqlite.js';
import type { Store } from '../store/store.js';
import { RestoreInputError, trustOf } from './sources.js';
import type { SeenCheckpoint } from './seen.js';

export interface TrustAnchor {
  keys: TrustedKey[];
  transitions: KeyTransition[];
  /** Where the keys came from, said to the operator. */
  source: string;
}

/** What the target already holds: its keys, and per company its size and newest signed checkpoint. */
export interface TargetLedger {
  service: ServiceRows;
  sizes: Map<string, number>;
  checkpoints: SeenCheckpoint[];
}

/** The ledger.db a SQLite restore writes into. */
export const sqliteTarget = (config: Pick<Config, 'dataDir'>) => path.join(config.dataDir, 'ledger.db');

/** Reads what the target holds (nothing when it has no ledger yet, or it holds no entry). */
export async function readTarget(config: Pick<Config, 'databaseUrl' | 'dataDir' | 'ledgerOrigin'>): Promise<TargetLedger | undefined> {
  let store: Store;
  if (config.databaseUrl) store = openStore(config);
  else if (fs.existsSync(sqliteTarget(config))) store = openSqliteStore(sqliteTarget(config));
  else return undefined;
  try {
    let sizes: Map<string, number>;
    try {
      sizes = await store.continuityStore.sizes();
    } catch {
      return undefined; // a database the service never migrated: nothing in it
    }
    if (![...sizes.values()].some((n) => n > 0)) return undefined;
    const service = await store.continuityStore.serviceRows();
    const checkpoints: SeenCheckpoint[] = [];
    for (const companyId of sizes.keys()) {
      const cp = await store.ledger.latestCheckpoint(companyId);
      if (cp) checkpoints.push({ companyId, size: Number(cp.tree_size), note: cp.note, source: `the newest checkpoint of the ledger being replaced (${config.databaseUrl ? 'the target database' : sqliteTarget(config)})` });
    }
    return { service, sizes, checkpoints };
  } finally {
    await store.close();
  }
}

/** The keys a restore verifies against, pinned from outside the backup; refuses when there are none. */
export function trustAnchor(config: Pick<Config, 'signingKeyFile' | 'dataDir'>, keysFile: string | undefined, target: TargetLedger | undefined): TrustAnchor {
  if (keysFile) {
    const text = fs.readFileSync(keysFile, 'utf8');
    let transitions: KeyTransition[] = [];
    try {
      transitions = (JSON.parse(text) as { transitions?: KeyTransition[] }).transitions ?? [];
    } catch {
      // a PEM or verifier key file: no transitions
    }
    return { keys: parseTrustedKeys(text), transitions, source: `--keys ${keysFile}` };
  }
  const own = signingKeyPath(config);
  if (fs.existsSync(own)) {
    const key = loadOrCreateKeyFile(own, false);
    return { keys: [trustedKey(key.raw)], transitions: [], source: `this service's own signing key (${own})` };
  }
  if (target) {
    const own = trustOf(target.service);
    return { keys: own.pinned, transitions: own.transitions, source: 'the keys of the ledger being replaced' };
  }
  throw new RestoreInputError(
    'nothing outside the backup to verify it against: a backup cannot vouch for itself. Give --keys with the public keys you kept ' +
      '(GET /api/v1/integrity/keys saved apart from the backups), or configure this service\'s own signing key (LEDGER_SIGNING_KEY_FILE)',
  );
}
