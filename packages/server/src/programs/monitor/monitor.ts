// `audit-ledger monitor` (docs/transparency.md, "Monitoring"): follows company logs through their
// C2SP tlog-tiles API and raises an alarm when one misbehaves. For each log it keeps, on disk, the
// last checkpoint it accepted and the right edge of that tree; on each run it checks the new
// checkpoint's signature (and the signing key's period, when the key transitions are given), the
// witnesses' quorum, and that the new tree extends the accepted one: it appends the new leaves,
// read from the level 0 tiles, to the accepted edge and compares the root. A smaller tree is a
// rollback; a root that does not follow is a fork (a restored backup that went on appending, or a
// split view). Optionally each new entry bundle is checked against its leaves. A log whose tree has
// not grown for longer than the stall limit is reported too. Nothing here trusts the service.
import fs from 'node:fs';
import path from 'node:path';
import {
  cosignedBy,
  decodeEntryBundle,
  followTransitions,
  fromBase64,
  fromHex,
  type Hash,
  keyNotActive,
  type KeyTransition,
  leafHash,
  noteSignedBy,
  parseCheckpointText,
  parseWitnessKey,
  toHex,
  TILE_WIDTH,
  tilePath,
  tileWidthAt,
  TreeEdge,
  type TrustedKey,
  type WitnessKey,
} from '@audit-ledger/core';

export type AlertKind = 'fork' | 'rollback' | 'bad_signature' | 'retired_key' | 'witness_quorum' | 'stalled' | 'bad_tiles' | 'unreachable';

export interface Alert {
  kind: AlertKind;
  /** The tlog prefix it was read from. */
  log: string;
  /** The checkpoint origin (the company's log), once known. */
  origin: string | null;
  detail: string;
  at: string;
}

/** What the monitor keeps per log origin, on disk. */
export interface LogState {
  origin: string;
  tree_size: number;
  /** Lowercase hex. */
  root_hash: string;
  /** The accepted tree's right edge (core's TreeEdge), lowercase hex. */
  edge: string[];
  note: string;
  accepted_at: string;
  /** When the tree last grew (or was first seen). */
  advanced_at: string;
}

export interface MonitorOptions {
  /** tlog-tiles prefixes (…/api/v1/tlog, or …/api/v1/public/tlog/<company_id>). */
  logs: string[];
  /** Sent with every request (an `x-api-key` for the private prefix). */
  headers: Record<string, string>;
  /** The log's keys, pinned (what audit-ledger-verify's --public-key takes). */
  keys: TrustedKey[];
  /** GET /api/v1/integrity/keys of the service: its signed key transitions are followed from the pinned keys, and each key's period enforced. */
  keysUrl?: string;
  witnesses: string[];
  quorum: number;
  /** Alarm when a log's tree has not grown for longer than this (0: never). */
  stallSeconds: number;
  /** Also fetch each new entry bundle and check it against its leaves. */
  checkEntries: boolean;
  statePath: string;
  fetch?: typeof fetch;
  now?: () => number;
}

/** The most a monitor reads of any answer: a checkpoint is small, a tile at most 8 KB, a bundle at most 256 × 34 bytes. */
const MAX_ANSWER = 256 * 1024;

export interface RunResult {
  alerts: Alert[];
  logs: Array<{ log: string; origin: string | null; tree_size: number | null; advanced: boolean }>;
}

class LogProblem extends Error {
  constructor(
    readonly kind: AlertKind,
    message: string,
  ) {
    super(message);
  }
}

export class Monitor {
  private readonly fetch: typeof fetch;
  private readonly now: () => number;
  private readonly witnesses: WitnessKey[];

  constructor(private readonly opts: MonitorOptions) {
    this.fetch = opts.fetch ?? fetch;
    this.now = opts.now ?? Date.now;
    this.witnesses = opts.witnesses.map(parseWitnessKey);
    if (opts.quorum > this.witnesses.length) throw new Error(`a quorum of ${opts.quorum} needs at least that many --witness keys (${this.witnesses.length} given)`);
  }

  private readState(): Record<string, LogState> {
    if (!fs.existsSync(this.opts.statePath)) return {};
    return (JSON.parse(fs.readFileSync(this.opts.statePath, 'utf8')) as { logs: Record<string, LogState> }).logs;
  }

  /** Written whole to a temporary file, fsynced, then renamed into place: a crash leaves the old state or the new, never half. */
  private writeState(logs: Record<string, LogState>): void {
    fs.mkdirSync(path.dirname(path.resolve(this.opts.statePath)), { recursive: true });
    const tmp = `${this.opts.statePath}.tmp`;
    const fd = fs.openSync(tmp, 'w', 0o600);
    try {
      fs.writeSync(fd, `${JSON.stringify({ logs }, null, 2)}\n`);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, this.opts.statePath);
  }

  private async get(url: string): Promise<Uint8Array> {
    let res: Response;
    try {
      res = await this.fetch(url, { headers: this.opts.headers, signal: AbortSignal.timeout(30_000) });
    } catch (err) {
      throw new LogProblem('unreachable', `GET ${url}: ${(err as Error).message}`);
    }
    if (res.status !== 200) throw new LogProblem(res.status === 404 ? 'bad_tiles' : 'unreachable', `GET ${url}: HTTP ${res.status}`);
    const declared = Number(res.headers.get('content-length') ?? '0');
    if (declared > MAX_ANSWER) throw new LogProblem('bad_tiles', `GET ${url}: ${declared} bytes, more than a tlog resource holds`);
    const body = new Uint8Array(await res.arrayBuffer());
    if (body.length > MAX_ANSWER) throw new LogProblem('bad_tiles', `GET ${url}: ${body.length} bytes, more than a tlog resource holds`);
    return body;
  }

  /** The pinned keys, and those their signed transitions endorse, each with its period. */
  private async trustedKeys(): Promise<TrustedKey[]> {
    if (!this.opts.keysUrl) return this.opts.keys;
    const published = JSON.parse(new TextDecoder().decode(await this.get(this.opts.keysUrl))) as { transitions?: KeyTransition[] };
    return followTransitions(this.opts.keys, published.transitions ?? []).keys;
  }

  /** The checkpoint's text, size and root, once a trusted key's signature (within its period) and the witnesses' quorum hold. */
  private checkNote(note: string, keys: TrustedKey[]): { origin: string; size: number; root: Hash; text: string } {
    const split = note.indexOf('\n\n');
    if (split < 0 || !note.endsWith('\n')) throw new LogProblem('bad_signature', 'the checkpoint is not a signed note');
    const text = note.slice(0, split + 1);
    const lines = note.slice(split + 2, -1).split('\n');
    let c;
    try {
      c = parseCheckpointText(text);
    } catch (err) {
      throw new LogProblem('bad_signature', `the checkpoint's body is malformed: ${(err as Error).message}`);
    }
    // Note signatures (68 bytes after the name) by a trusted key; the name comes from the line (docs/ledger-format.md §8).
    let signer: TrustedKey | null = null;
    for (const line of lines) {
      const m = /^\u2014 (\S+) (\S+)$/.exec(line);
      if (!m) continue;
      let raw: Uint8Array;
      try {
        raw = fromBase64(m[2] as string);
      } catch {
        continue;
      }
      if (raw.length !== 68) continue; // a witness's cosignature
      const key = keys.find((k) => noteSignedBy(`${text}\n${line}\n`, m[1] as string, k.raw));
      if (key) {
        signer = key;
        break;
      }
    }
    if (!signer) throw new LogProblem('bad_signature', `checkpoint ${c.origin} at tree size ${c.treeSize} carries no valid signature by a trusted key`);
    const late = keyNotActive(signer.keyId, signer.period, c.timestamp, `checkpoint ${c.treeSize}, dated`);
    if (late) throw new LogProblem('retired_key', late);
    if (this.opts.quorum > 0) {
      const by = cosignedBy(text, lines.map((l) => `${l}\n`), this.witnesses);
      if (by.length < this.opts.quorum) throw new LogProblem('witness_quorum', `checkpoint ${c.origin} at tree size ${c.treeSize} is cosigned by ${by.length} of the named witnesses, fewer than the quorum of ${this.opts.quorum}`);
    }
    return { origin: c.origin, size: c.treeSize, root: c.rootHash, text };
  }

  /** The leaf hashes [from, to) of a tree of `size`, from its level 0 tiles (checked against the entry bundles when asked). */
  private async leaves(prefix: string, from: number, to: number, size: number): Promise<Hash[]> {
    const out: Hash[] = [];
    for (let n = Math.floor(from / TILE_WIDTH); n * TILE_WIDTH < to; n++) {
      const width = tileWidthAt(0, n, size);
      const tile = await this.get(`${prefix}/${tilePath({ level: 0, index: n, width })}`);
      if (tile.length !== width * 32) throw new LogProblem('bad_tiles', `${tilePath({ level: 0, index: n, width })} has ${tile.length} bytes, not ${width * 32}`);
      const hashes = Array.from({ length: width }, (_, i) => tile.slice(i * 32, i * 32 + 32));
      if (this.opts.checkEntries) {
        const bundle = decodeEntryBundle(await this.get(`${prefix}/${tilePath({ level: 'entries', index: n, width })}`));
        if (bundle.length !== width || bundle.some((e, i) => toHex(leafHash(e)) !== toHex(hashes[i] as Hash)))
          throw new LogProblem('bad_tiles', `entry bundle ${n} does not hash to the leaves of tile 0/${n}`);
      }
      for (let i = 0; i < width; i++) {
        const seq = n * TILE_WIDTH + i;
        if (seq >= from && seq < to) out.push(hashes[i] as Hash);
      }
    }
    return out;
  }

  /** One pass over every log: new checkpoints checked and accepted, alerts for what failed. */
  async runOnce(): Promise<RunResult> {
    const state = this.readState();
    const at = new Date(this.now()).toISOString();
    const alerts: Alert[] = [];
    const logs: RunResult['logs'] = [];
    let keys: TrustedKey[] | null = null;
    for (const raw of this.opts.logs) {
      const prefix = raw.replace(/\/+$/, '');
      let origin: string | null = null;
      try {
        keys ??= await this.trustedKeys();
        const note = new TextDecoder().decode(await this.get(`${prefix}/checkpoint`));
        const c = this.checkNote(note, keys);
        origin = c.origin;
        const before = state[c.origin];
        let advanced = false;
        if (before && c.size < before.tree_size) {
          throw new LogProblem('rollback', `${c.origin} went back from tree size ${before.tree_size} (accepted ${before.accepted_at}) to ${c.size}: its history was rolled back`);
        }
        if (before && c.size === before.tree_size) {
          if (toHex(c.root) !== before.root_hash) throw new LogProblem('fork', `${c.origin} signed two different trees of size ${c.size}: root ${before.root_hash} (accepted ${before.accepted_at}) and ${toHex(c.root)}`);
        } else {
          const edge = before ? TreeEdge.of(before.tree_size, before.edge.map(fromHex)) : TreeEdge.empty();
          for (const leaf of await this.leaves(prefix, edge.size, c.size, c.size)) edge.append(leaf);
          if (toHex(edge.root()) !== toHex(c.root))
            throw new LogProblem(
              before ? 'fork' : 'bad_tiles',
              before
                ? `${c.origin} at tree size ${c.size} does not extend the tree of size ${before.tree_size} accepted ${before.accepted_at}: the log forked (a restored backup that appended again, or a split view)`
                : `${c.origin}: the tiles do not rebuild the checkpoint's root at tree size ${c.size}`,
            );
          state[c.origin] = { origin: c.origin, tree_size: c.size, root_hash: toHex(c.root), edge: edge.hashes().map(toHex), note, accepted_at: at, advanced_at: at };
          advanced = true;
        }
        const current = state[c.origin] as LogState;
        const idle = (this.now() - Date.parse(current.advanced_at)) / 1000;
        if (!advanced && this.opts.stallSeconds > 0 && idle > this.opts.stallSeconds)
          alerts.push({ kind: 'stalled', log: prefix, origin, detail: `${c.origin} has stayed at tree size ${c.size} for ${Math.round(idle)} s (limit ${this.opts.stallSeconds} s)`, at });
        logs.push({ log: prefix, origin, tree_size: c.size, advanced });
      } catch (err) {
        const kind = err instanceof LogProblem ? err.kind : 'bad_tiles';
        alerts.push({ kind, log: prefix, origin, detail: (err as Error).message, at });
        logs.push({ log: prefix, origin, tree_size: null, advanced: false });
      }
    }
    this.writeState(state);
    return { alerts, logs };
  }
}
