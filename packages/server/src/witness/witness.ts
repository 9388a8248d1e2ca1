// A standalone transparency-log witness (C2SP tlog-witness, cosignatures as C2SP tlog-cosignature
// Ed25519 cosignature/v1): it follows a list of logs (here: audit-ledger companies, one origin
// each), keeps the latest checkpoint it cosigned per origin in its own SQLite file, and cosigns a
// new checkpoint only when a consistency proof shows it extends that one. A log that rewrote its
// history behind the witness's back is refused (409 or 422), so a split view cannot get a quorum.
// Run by `audit-ledger witness serve`, on another machine than the service it watches.
import { type KeyObject, sign } from 'node:crypto';
import { fromBase64, fromHex, noteSignedBy, splitVerifierKey, parseCheckpointText, parseNote, toHex, verifyConsistency, cosignatureLine, cosignedMessage, type Hash } from '@audit-ledger/core';
import Database from 'better-sqlite3';
import { rawPublicKey } from '../ledger/signing.js';

/** The logs a witness follows: an exact origin, or every origin under a prefix (one per company), with the note keys that sign them. */
export interface FollowedLog {
  origin?: string;
  origin_prefix?: string;
  /** C2SP note verifier keys (name+keyid+base64(0x01 ‖ key)) of the log. */
  verifier_keys: string[];
}

export interface WitnessAnswer {
  status: number;
  contentType: string;
  body: string;
}

const MAX_PROOF_LINES = 63;

function parseLogKey(vkey: string): { name: string; raw: Uint8Array } {
  const parts = splitVerifierKey(vkey.trim());
  const bytes = parts ? fromBase64(parts.b64) : new Uint8Array(0);
  if (!parts || bytes.length !== 33 || bytes[0] !== 0x01) throw new Error(`not an Ed25519 note verifier key: ${vkey}`);
  return { name: parts.name, raw: bytes.slice(1) };
}

export class Witness {
  private readonly db: Database.Database;
  private readonly logs: Array<FollowedLog & { keys: Array<{ name: string; raw: Uint8Array }> }>;
  private readonly raw: Uint8Array;

  constructor(
    readonly name: string,
    private readonly privateKey: KeyObject,
    publicKey: KeyObject,
    logs: FollowedLog[],
    statePath: string,
    private readonly clock: () => number = Date.now,
  ) {
    this.raw = rawPublicKey(publicKey);
    this.logs = logs.map((l) => ({ ...l, keys: l.verifier_keys.map(parseLogKey) }));
    this.db = new Database(statePath);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.exec(`CREATE TABLE IF NOT EXISTS cosigned (origin TEXT PRIMARY KEY, tree_size INTEGER NOT NULL, root_hash TEXT NOT NULL, note TEXT NOT NULL, cosigned_at TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS refusals (origin TEXT NOT NULL, at TEXT NOT NULL, status INTEGER NOT NULL, reason TEXT NOT NULL, request TEXT NOT NULL)`);
  }

  get publicKey(): Uint8Array {
    return this.raw;
  }

  close(): void {
    this.db.close();
  }

  /** The latest checkpoint cosigned for an origin. */
  latest(origin: string): { tree_size: number; root_hash: string } | undefined {
    return this.db.prepare('SELECT tree_size, root_hash FROM cosigned WHERE origin = ?').get(origin) as { tree_size: number; root_hash: string } | undefined;
  }

  refusals(): Array<{ origin: string; status: number; reason: string }> {
    return this.db.prepare('SELECT origin, status, reason FROM refusals ORDER BY rowid').all() as Array<{ origin: string; status: number; reason: string }>;
  }

  /** POST /add-checkpoint, as the protocol defines it. */
  addCheckpoint(body: string): WitnessAnswer {
    const text = (status: number, message: string): WitnessAnswer => ({ status, contentType: 'text/plain; charset=utf-8', body: `${message}\n` });
    const blank = body.indexOf('\n\n');
    if (blank < 0) return text(400, 'expected an old size line, proof lines, an empty line and a checkpoint');
    const head = body.slice(0, blank).split('\n');
    const note = body.slice(blank + 2);
    const old = /^old (0|[1-9][0-9]*)$/.exec(head[0] ?? '');
    if (!old) return text(400, 'the first line must be "old <size>"');
    const oldSize = Number(old[1]);
    const proofLines = head.slice(1);
    if (proofLines.length > MAX_PROOF_LINES) return text(400, `at most ${MAX_PROOF_LINES} proof lines`);
    let proof: Hash[];
    let checkpoint;
    let noteText: string;
    try {
      proof = proofLines.map((l) => {
        const h = fromBase64(l);
        if (h.length !== 32) throw new Error('a proof line is not a 32-byte hash');
        return h;
      });
      noteText = parseNote(note).text;
      checkpoint = parseCheckpointText(noteText);
    } catch (err) {
      return text(400, `malformed request: ${(err as Error).message}`);
    }
    const { origin, treeSize, rootHash } = checkpoint;
    const log = this.logs.find((l) => l.origin === origin || (l.origin_prefix !== undefined && origin.startsWith(l.origin_prefix)));
    if (!log) return text(404, `unknown log origin ${origin}`);
    if (!log.keys.some((k) => noteSignedBy(note, k.name, k.raw))) return text(403, 'no signature by a key this witness trusts for the log');
    if (oldSize > treeSize) return text(400, `old size ${oldSize} is above the checkpoint size ${treeSize}`);
    if (oldSize === 0 && proof.length > 0) return text(400, 'the proof must be empty when the old size is 0');
    const refuse = (status: number, reason: string, answer: WitnessAnswer): WitnessAnswer => {
      this.db.prepare('INSERT INTO refusals (origin, at, status, reason, request) VALUES (?, ?, ?, ?, ?)').run(origin, new Date(this.clock()).toISOString(), status, reason, body);
      return answer;
    };
    // Check and update in one transaction: two requests never roll the recorded size back.
    return this.db.transaction((): WitnessAnswer => {
      const latest = this.latest(origin);
      const size = latest?.tree_size ?? 0;
      const conflict = (): WitnessAnswer => ({ status: 409, contentType: 'text/x.tlog.size', body: `${size}\n` });
      if (oldSize !== size) return conflict();
      const root = toHex(rootHash);
      if (latest && oldSize === treeSize && latest.root_hash !== root) {
        return refuse(409, `same size ${treeSize}, different root: ${root} after ${latest.root_hash}`, conflict());
      }
      if (latest && oldSize > 0 && oldSize < treeSize && !verifyConsistency(oldSize, treeSize, proof, fromHex(latest.root_hash), rootHash)) {
        return refuse(422, `no consistency from ${oldSize} (root ${latest.root_hash}) to ${treeSize} (root ${root})`, text(422, 'the consistency proof does not verify against the checkpoint this witness cosigned'));
      }
      this.db
        .prepare('INSERT INTO cosigned (origin, tree_size, root_hash, note, cosigned_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (origin) DO UPDATE SET tree_size = excluded.tree_size, root_hash = excluded.root_hash, note = excluded.note, cosigned_at = excluded.cosigned_at')
        .run(origin, treeSize, root, note, new Date(this.clock()).toISOString());
      const timestamp = Math.floor(this.clock() / 1000);
      const signature = sign(null, Buffer.from(cosignedMessage(noteText, timestamp), 'utf8'), this.privateKey);
      return { status: 200, contentType: 'text/plain; charset=utf-8', body: cosignatureLine(this.name, this.raw, timestamp, signature) };
    })();
  }
}
