// Scratch space for the bench's parts, removed only once the whole run is over: deleting a
// part's files (the million-entry ledger alone is over a gigabyte, and this disk is mounted
// with discard) keeps the disk busy and slows the commits of the part measured next.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const cleanups: Array<() => void | Promise<void>> = [];

/** A new temporary directory, removed by cleanUp(). */
export function scratchDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs `fn` in cleanUp(), after everything measured. */
export function atEnd(fn: () => void | Promise<void>): void {
  cleanups.push(fn);
}

/** Removes every scratch directory and runs every atEnd task, newest first. */
export async function cleanUp(): Promise<void> {
  for (const fn of cleanups.splice(0).reverse()) await fn();
}
