// The service's own record, outside its database, of the newest checkpoint it committed for each
// company: <LEDGER_DATA_DIR>/checkpoint-marks.json. When the database comes back behind it (a
// failover to a replica that had not received the last commits, a restored copy), the start-up
// check (guard.ts) finds the company's ledger behind a checkpoint this service signed and may have
// published. Written after the checkpoint commits, at most every MARK_FLUSH_MS (a crash loses at
// most that much: the witnesses cover the rest), merged with what other processes on the same data
// directory wrote, and replaced atomically (written beside it, fsynced, renamed).
import fs from 'node:fs';
import path from 'node:path';
import type { CheckpointRow } from '../store/chain.js';

export const MARKS_FILE = 'checkpoint-marks.json';
export const MARK_FLUSH_MS = 200;

export interface Mark {
  tree_size: number;
  root_hash: string;
  note: string;
}

export interface MarksFile {
  origin: string;
  companies: Record<string, Mark>;
}

/** The marks as written; undefined for none, or a torn file from a crash (the witnesses still speak). */
function parseMarks(text: string): MarksFile | undefined {
  try {
    const json = JSON.parse(text) as MarksFile;
    return json && typeof json.companies === 'object' ? json : undefined;
  } catch {
    return undefined;
  }
}

export function readMarks(file: string): MarksFile | undefined {
  return fs.existsSync(file) ? parseMarks(fs.readFileSync(file, 'utf8')) : undefined;
}

async function readMarksAsync(file: string): Promise<MarksFile | undefined> {
  try {
    return parseMarks(await fs.promises.readFile(file, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

export class CheckpointMarks {
  private readonly pending = new Map<string, Mark>();
  private timer: NodeJS.Timeout | undefined;
  /** The write running now (writes go one at a time). */
  private writing: Promise<void> = Promise.resolve();

  constructor(
    readonly file: string,
    private readonly origin: string,
    /** A write that failed (a full or read-only disk): told, never thrown from the timer. */
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  static inDataDir(dataDir: string, origin: string, onError?: (err: unknown) => void): CheckpointMarks {
    return new CheckpointMarks(path.join(dataDir, MARKS_FILE), origin, onError);
  }

  /** A checkpoint that has committed. */
  committed(row: Pick<CheckpointRow, 'company_id' | 'tree_size' | 'root_hash' | 'note'>): void {
    const before = this.pending.get(row.company_id);
    if (before && before.tree_size >= row.tree_size) return;
    this.pending.set(row.company_id, { tree_size: row.tree_size, root_hash: row.root_hash, note: row.note });
    this.timer ??= setTimeout(() => void this.flush(), MARK_FLUSH_MS).unref();
  }

  /**
   * Writes what is pending, after any write still running (one at a time). The file work (read,
   * write, fsync, rename) runs on libuv's threads, never on the request thread. A failure is told
   * to onError, never thrown.
   */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.writing = this.writing.then(() => this.write()).catch((err: unknown) => this.onError(err));
    return this.writing;
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const taken = [...this.pending];
    this.pending.clear();
    const marks = (await readMarksAsync(this.file)) ?? { origin: this.origin, companies: {} };
    for (const [id, m] of taken) if ((marks.companies[id]?.tree_size ?? -1) < m.tree_size) marks.companies[id] = m;
    const tmp = `${this.file}.${process.pid}.tmp`;
    const fd = await fs.promises.open(tmp, 'w', 0o600);
    try {
      await fd.writeFile(`${JSON.stringify(marks)}\n`);
      await fd.sync();
    } finally {
      await fd.close();
    }
    await fs.promises.rename(tmp, this.file);
  }
}
