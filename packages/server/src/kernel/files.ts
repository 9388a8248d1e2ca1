// Local state (the SQLite ledger, the signing key, the secrets key) is readable by the
// service's user alone: the data directory is created 0700 and its files 0600.
import fs from 'node:fs';

/** Creates the directory (and its parents) with mode 0700 when it does not exist yet. */
export function ensurePrivateDir(dir: string): void {
  if (!fs.existsSync(dir)) fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/** Creates the file empty with mode 0600 when it does not exist yet (SQLite then keeps that mode for its -wal and -shm files). */
export function ensurePrivateFile(file: string): void {
  fs.closeSync(fs.openSync(file, 'a', 0o600));
}
