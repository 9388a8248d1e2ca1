// A standalone transparency-log witness (C2SP tlog-witness, cosignatures as C2SP tlog-cosignature
// Ed25519 cosignature/v1): it follows a list of logs (here: audit-ledger companies, one origin
// each), keeps the latest checkpoint it cosigned per origin in its own SQLite file, and cosigns a
// new checkpoint only when a consistency proof shows it extends that one. A log that rewrote its
// history behind the witness's back is refused (409 or 422), so a split view cannot get a quorum.
// Run by `audit-ledger witness serve`, on another machine than the service it watches.
import { type KeyObject, sign } from 'node:crypto';
import { fromBase64, fromHex, followTransitions, keyIdOf as keyIdOfRaw, type KeyPeriod, keyNotActive, type KeyTransition, noteSignedBy, splitVerifierKey, parseCheckpointText, parseNote, toHex, verifyConsistency, cosignatureLine, cosignedMessage, type Hash } from '@audit-ledger/core';
import Database from 'better-sqlite3';
import { rawPublicKey } from '../../crypto/signing.js';

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

/** A log's note key: its name, raw key, and the period it may sign in (from the transitions followed). */
type LogKey = { name: string; raw: Uint8Array; keyId?: string; period?: KeyPeriod };

const pinnedKeys = (keys: LogKey[]) => keys.map((k) => ({ keyId: keyIdOfRaw(k.raw), raw: k.raw }));

export class Witness {
  private readonly db: Database.Database;
  private readonly logs: Array<FollowedLog & { pinned: LogKey[]; keys: LogKey[] }>;
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
    this.db = new Database(statePath);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.exec(`CREATE TABLE IF NOT EXISTS cosigned (origin TEXT PRIMARY KEY, tree_size INTEGER NOT NULL, root_hash TEXT NOT NULL, note TEXT NOT NULL, cosigned_at TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS refusals (origin TEXT NOT NULL, at TEXT NOT NULL, status INTEGER NOT NULL, reason TEXT NOT NULL, request TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS key_transitions (statement TEXT PRIMARY KEY, transition TEXT NOT NULL, added_at TEXT NOT NULL)`);
    this.logs = logs.map((l) => {
      const pinned = l.verifier_keys.map(parseLogKey);
      return { ...l, pinned, keys: pinned };
    });
    this.followStored();
  }

  /** Every log's keys: its configured ones, and those their signed transitions endorse, each with its period. */
  private followStored(): void {
    const transitions = (this.db.prepare('SELECT transition FROM key_transitions ORDER BY rowid').all() as Array<{ transition: string }>).map((r) => JSON.parse(r.transition) as KeyTransition);
    for (const log of this.logs) {
      const followed = followTransitions(pinnedKeys(log.pinned), transitions);
      // A key a transition endorses signs notes under the name of the key that endorsed it (one LEDGER_ORIGIN).
      const name = log.pinned[0]?.name ?? '';
      log.keys = followed.keys.map((k) => ({ name: log.pinned.find((p) => keyIdOfRaw(p.raw) === k.keyId)?.name ?? name, raw: k.raw, keyId: k.keyId, ...(k.period ? { period: k.period } : {}) }));
    }
  }

  /**
   * POST /add-key-transitions (an extension of this witness, not of C2SP tlog-witness): the log's
   * signed key transitions (the JSON of its GET /api/v1/integrity/keys, or the array). Each is
   * followed only from a key this witness already trusts, with the old key's and the new key's
   * signatures checked and the period rules of docs/ledger-format.md §12, and kept: so after a
   * rotation the witness cosigns the new key's checkpoints without its operator, and refuses a
   * retired key's. Anyone may send them; nothing is trusted that the trusted keys did not sign.
   */
  addKeyTransitions(body: string): WitnessAnswer {
    const text = (status: number, message: string): WitnessAnswer => ({ status, contentType: 'text/plain; charset=utf-8', body: `${message}\n` });
    let list: unknown;
    try {
      const json = JSON.parse(body) as unknown;
      list = Array.isArray(json) ? json : (json as { transitions?: unknown }).transitions;
    } catch {
      return text(400, 'expected JSON: an array of key transitions, or {"transitions": [...]}');
    }
    if (!Array.isArray(list) || list.length > 1000) return text(400, 'expected at most 1000 key transitions');
    const known = new Set(this.logs.flatMap((l) => l.keys.map((k) => k.keyId)));
    const stored = (this.db.prepare('SELECT transition FROM key_transitions ORDER BY rowid').all() as Array<{ transition: string }>).map((r) => JSON.parse(r.transition) as KeyTransition);
    const candidates = [...stored, ...(list as KeyTransition[]).filter((t) => typeof t?.statement === 'string')];
    const taken: KeyTransition[] = [];
    for (const log of this.logs) {
      // Followed: the key it introduced is trusted now, with its period starting at its time.
      const { keys } = followTransitions(pinnedKeys(log.pinned), candidates);
      for (const t of candidates) if (!taken.includes(t) && keys.some((k) => k.keyId === t.new_key_id && k.period?.fromText === t.created_at)) taken.push(t);
    }
    const insert = this.db.prepare('INSERT INTO key_transitions (statement, transition, added_at) VALUES (?, ?, ?) ON CONFLICT (statement) DO NOTHING');
    for (const t of taken) insert.run(t.statement, JSON.stringify(t), new Date(this.clock()).toISOString());
    this.followStored();
    const added = this.logs.flatMap((l) => l.keys.map((k) => k.keyId)).filter((k) => !known.has(k));
    return text(200, `followed ${taken.length} transition${taken.length === 1 ? '' : 's'} from the keys this witness trusts; ${added.length} new key${added.length === 1 ? '' : 's'} trusted`);
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
    const signers = log.keys.filter((k) => noteSignedBy(note, k.name, k.raw));
    if (signers.length === 0) return text(403, 'no signature by a key this witness trusts for the log (after a key rotation: POST the log\'s transitions to /add-key-transitions)');
    // A retired key signs nothing more: only a key inside its period at the checkpoint's time counts.
    if (!signers.some((k) => keyNotActive(k.keyId ?? '', k.period, checkpoint.timestamp, 'a checkpoint timestamped') === null)) {
      const why = keyNotActive(signers[0]?.keyId ?? '', signers[0]?.period, checkpoint.timestamp, 'a checkpoint timestamped') as string;
      this.db.prepare('INSERT INTO refusals (origin, at, status, reason, request) VALUES (?, ?, ?, ?, ?)').run(origin, new Date(this.clock()).toISOString(), 403, why, body);
      return text(403, `key_not_active: ${why}`);
    }
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
