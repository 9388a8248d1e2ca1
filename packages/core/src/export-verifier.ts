// Verification of a complete JSON Lines export against a checkpoint (docs/ledger-format.md §10):
// line by line, in memory bounded by the keys and idempotency keys seen, following the key
// rotations the chain itself records. The checks of one entry and of a checkpoint are bundle.ts's,
// shared with evidence bundles.
import { idempotencyMarkProblem } from './idempotency-mark.js';
import { bytesEqual, toHex } from '#crypto';
import { parseCheckpointText, parseNote } from './checkpoint.js';
import { ErasureLedger } from './bundle-erasures.js';
import { checkCheckpointNote, checkEntry, checkpointJsonDiffers, followTransitions, plural } from './bundle.js';
import type { Check, VerificationReport } from './checks.js';
import { checkEntrySignature } from './entry-check.js';
import { GENESIS_PREV_HASH } from './entry.js';
import type { KeyTransition } from './key-transition.js';
import { instantOf, keyNotActive } from './key-periods.js';
import type { TrustedKey } from './keys.js';
import { entryLeafHash, type Hash, TreeEdge } from './merkle.js';
import { type AgentKey, AgentSignatureTally, isAgentSigned } from './agent-signature.js';

/** An entry whose signing key is not trusted yet (ExportVerifier.pending). */
type PendingSignature = { seq: number; log_id: unknown; key_id: string; hash: string; signature: string; created_at: unknown };

/** The event type of the entry that records a key rotation in every company's chain (data: the signed transition). */
export const KEY_ROTATION_EVENT_TYPE = 'signing_key.rotated';

/**
 * Verifies a JSON Lines export against a checkpoint, line by line in constant memory.
 * The export must hold seq 0 onwards without gaps, so the tree can be rebuilt and its
 * root at the checkpoint's size compared with the signed one.
 *
 * Key rotations: starting from the pinned keys (and any transitions given), the verifier follows
 * each signed transition it reads in the export itself (the `signing_key.rotated` entries, whose
 * data is the transition: self-authenticating, so nothing else about the entry is trusted for
 * it). An entry is checked against the periods known when it is read; because an entry can come
 * before the record of the rotation that retires its key, the earliest and latest `created_at`
 * each key signed are checked again against the final periods, and the checkpoint is checked at
 * the end with every key followed.
 */
export class ExportVerifier {
  private readonly edge = TreeEdge.empty();
  private readonly transitions: KeyTransition[];
  private keys: TrustedKey[];
  private transitionChecks: Check[] = [];
  /** Per key: the earliest and latest created_at it signed (valid signatures only), with their seqs. */
  private readonly signedSpan = new Map<string, { min: number; minSeq: number; minAt: string; max: number; maxSeq: number; maxAt: string }>();
  private readonly inactiveSeqs = new Set<number>();
  /**
   * Entries signed by a key not (yet) trusted, kept until a transition read later endorses it:
   * with several processes, entries signed by the new key are appended before the rotation's own
   * record. What is left at the end is untrusted. Bounded by the entries between a rotation and
   * its record in the chain.
   */
  private pending: PendingSignature[] = [];
  /** The tree size the note claims, read before its signature can be judged (at the end). */
  private readonly claimedSize: number | null;
  private prevHash = GENESIS_PREV_HASH;
  private prevCreatedAt = Number.NEGATIVE_INFINITY;
  /** Each idempotency key's earliest entry, to check the idempotency_conflict_of marks (§10). One entry per distinct key. */
  private readonly firstOfKey = new Map<string, string>();
  private count = 0;
  private rootAtCheckpoint: Hash | null = null;
  private readonly failures: Check[] = [];
  private broken = false;
  private readonly erasures = new ErasureLedger();
  private readonly agents: AgentSignatureTally | null;
  /** Entries carrying an agent signature, when no register was given. */
  private agentSignedUnchecked = 0;

  constructor(
    private readonly pinned: TrustedKey[],
    private readonly checkpointNote: string,
    private readonly companyId: string | null,
    /** The checkpoint's JSON fields, when it came as JSON: each must agree with the signed note. */
    private readonly checkpointJson: { tree_size?: unknown; root_hash?: unknown } = {},
    /** Transitions known beforehand (GET /integrity/keys); those in the export are added as read. */
    transitions: KeyTransition[] = [],
    /** The agent key register (GET /agent-keys) to check agent signatures against (§20); null: they are counted, not checked. */
    agentKeys: AgentKey[] | null = null,
  ) {
    this.agents = agentKeys === null ? null : new AgentSignatureTally(agentKeys);
    this.transitions = [...transitions];
    const followed = followTransitions(pinned, this.transitions);
    this.keys = followed.keys;
    this.transitionChecks = followed.checks;
    let size: number | null = null;
    try {
      size = parseCheckpointText(parseNote(checkpointNote).text).treeSize;
    } catch {
      // judged in finish()
    }
    this.claimedSize = size;
  }

  /** A transition read from the export: followed from the pinned keys again, with every one so far. */
  private addTransition(data: unknown): void {
    const t = data as KeyTransition;
    if (typeof t?.statement !== 'string' || this.transitions.some((x) => x.statement === t.statement && x.old_signature === t.old_signature)) return;
    this.transitions.push(t);
    const followed = followTransitions(this.pinned, this.transitions);
    this.keys = followed.keys;
    this.transitionChecks = followed.checks;
    const still: PendingSignature[] = [];
    for (const p of this.pending) {
      const k = this.keys.find((x) => x.keyId === p.key_id);
      if (!k) {
        still.push(p);
        continue;
      }
      const label = `entry seq ${p.seq} (log_id ${String(p.log_id)})`;
      const problem = checkEntrySignature({ ...p, key_id: k.keyId }, k);
      if (!problem) this.noteSigned(k.keyId, p.created_at, p.seq);
      else {
        if (problem.code === 'key_not_active') this.inactiveSeqs.add(p.seq);
        this.failures.push({ status: 'fail', code: problem.code === 'key_not_active' ? 'key_not_active' : 'bad_signature', message: `${label}: ${problem.detail}`, seq: p.seq });
      }
    }
    this.pending = still;
  }

  addLine(line: string): void {
    if (line.trim() === '' || this.broken) return;
    let e: Record<string, unknown>;
    try {
      e = JSON.parse(line) as Record<string, unknown>;
    } catch {
      this.failures.push({ status: 'fail', code: 'line_unreadable', message: `line ${this.count + 1}: not JSON` });
      this.broken = true;
      return;
    }
    if (e.seq !== this.count) {
      this.failures.push({
        status: 'fail',
        code: 'line_unreadable',
        message: `line ${this.count + 1}: expected seq ${this.count}, found ${String(e.seq)}: the export must be complete from seq 0 (use an evidence bundle for a selection)`,
      });
      this.broken = true;
      return;
    }
    if (e.event_type === KEY_ROTATION_EVENT_TYPE && e.data !== null && typeof e.data === 'object') this.addTransition(e.data);
    const { hash, failures, erased } = checkEntry(e, this.keys);
    const untrusted = failures.find((f) => f.code === 'untrusted_key');
    if (untrusted && typeof e.hash === 'string') this.pending.push({ seq: this.count, log_id: e.log_id, key_id: String(e.key_id), hash: e.hash, signature: String(e.signature), created_at: e.created_at });
    this.failures.push(...failures.filter((f) => f !== untrusted || typeof e.hash !== 'string'));
    if (failures.some((f) => f.code === 'key_not_active')) this.inactiveSeqs.add(this.count);
    if (this.agents) {
      const agent = this.agents.add(e);
      if (agent?.status === 'fail') this.failures.push(agent);
    } else if (isAgentSigned(e)) this.agentSignedUnchecked++;
    else if (!failures.some((f) => f.code === 'bad_signature' || f.code === 'untrusted_key')) this.noteSigned(String(e.key_id), e.created_at, this.count);
    this.checkIdempotencyMark(e);
    // created_at never decreases along a chain (§2).
    const createdAt = instantOf(e.created_at);
    if (!(createdAt >= this.prevCreatedAt)) this.failures.push({ status: 'fail', code: 'created_at_order', message: `entry seq ${this.count} (log_id ${String(e.log_id)}): created_at ${String(e.created_at)} is earlier than the entry before it, or not an RFC 3339 time`, seq: this.count });
    if (!Number.isNaN(createdAt)) this.prevCreatedAt = createdAt;
    if (erased) this.erasures.erased(e);
    this.failures.push(...this.erasures.record(e));
    if (e.prev_hash !== this.prevHash) this.failures.push({ status: 'fail', code: 'broken_link', message: `entry seq ${this.count} (log_id ${String(e.log_id)}): prev_hash does not match the entry before it`, seq: this.count });
    this.prevHash = typeof e.hash === 'string' ? e.hash : '';
    this.edge.append(entryLeafHash(hash ?? (/^([0-9a-f]{2})*$/.test(this.prevHash) ? this.prevHash : '')));
    this.count++;
    if (this.count === this.claimedSize) this.rootAtCheckpoint = this.edge.root();
  }

  /**
   * The mark is not hashed but derivable (§10): the service appends a second use of a key only
   * when it differs (an exact repeat appends nothing), so an entry whose key an earlier entry
   * used carries that earliest entry's log_id, and an entry with a new key carries null.
   */
  private checkIdempotencyMark(e: Record<string, unknown>): void {
    if (!('idempotency_conflict_of' in e)) return; // an export without the field says nothing
    const key = e.idempotency_key;
    const first = typeof key === 'string' ? this.firstOfKey.get(key) : undefined;
    const problem = idempotencyMarkProblem({ ...e, seq: this.count }, first ?? null);
    if (problem) this.failures.push({ status: 'fail', code: 'idempotency_mark', message: `entry seq ${this.count} (log_id ${String(e.log_id)}): ${problem}`, seq: this.count });
    if (typeof key === 'string' && first === undefined && typeof e.log_id === 'string') this.firstOfKey.set(key, e.log_id);
  }

  private noteSigned(keyId: string, createdAt: unknown, seq: number): void {
    const t = instantOf(createdAt);
    if (Number.isNaN(t)) return;
    const span = this.signedSpan.get(keyId);
    const at = String(createdAt);
    if (!span) this.signedSpan.set(keyId, { min: t, minSeq: seq, minAt: at, max: t, maxSeq: seq, maxAt: at });
    else {
      if (t < span.min) Object.assign(span, { min: t, minSeq: seq, minAt: at });
      if (t >= span.max) Object.assign(span, { max: t, maxSeq: seq, maxAt: at });
    }
  }

  /** Entries whose key's period was still open when they were read, judged by the final periods. */
  private lateInactive(): Check[] {
    const out: Check[] = [];
    for (const [keyId, span] of this.signedSpan) {
      const key = this.keys.find((k) => k.keyId === keyId);
      for (const [seq, at] of [[span.minSeq, span.minAt], [span.maxSeq, span.maxAt]] as const) {
        if (this.inactiveSeqs.has(seq)) continue;
        const why = keyNotActive(keyId, key?.period, at, 'an entry created at');
        if (why) {
          this.inactiveSeqs.add(seq);
          out.push({ status: 'fail', code: 'key_not_active', message: `entry seq ${seq}: ${why}`, seq });
        }
      }
    }
    return out;
  }

  finish(): VerificationReport {
    const cp = checkCheckpointNote(this.checkpointNote, this.keys, this.companyId);
    if (!cp.checkpoint || !cp.signer) return { ok: false, pinned: true, checks: [...this.transitionChecks, { status: 'fail', code: cp.inactive ? 'key_not_active' : 'checkpoint', message: cp.failure as string }] };
    const { treeSize, rootHash, origin } = cp.checkpoint;
    const checks: Check[] = [...this.transitionChecks.filter((c) => c.status !== 'fail'), { status: 'ok', code: 'checkpoint', message: `checkpoint ${origin} tree size ${treeSize} root ${toHex(rootHash)}, signed by ${cp.signer}` }];
    const untrusted: Check[] = this.pending.map((p) => ({ status: 'fail', code: 'untrusted_key', message: `entry seq ${p.seq} (log_id ${String(p.log_id)}): signed by key ${p.key_id}, which is not a trusted key (no transition from a pinned key endorses it)`, seq: p.seq }));
    const failures = [...this.transitionChecks.filter((c) => c.status === 'fail'), ...this.failures, ...untrusted, ...this.lateInactive()];
    const differs = checkpointJsonDiffers(this.checkpointJson, cp.checkpoint);
    if (differs) failures.push({ status: 'fail', code: 'checkpoint_fields', message: differs });
    if (!this.broken) {
      if (this.count < treeSize) {
        failures.push({ status: 'fail', code: 'entries_missing', message: `the export holds ${plural(this.count, 'entry', 'entries')} but the checkpoint covers ${treeSize}: entries are missing` });
      } else if (!this.rootAtCheckpoint || !bytesEqual(this.rootAtCheckpoint, rootHash)) {
        failures.push({ status: 'fail', code: 'root_mismatch', message: `the Merkle root of the first ${treeSize} exported entries differs from the signed root` });
      }
      failures.push(...this.erasures.unaccounted());
      const erasedNote = this.erasures.note();
      if (erasedNote) checks.push(erasedNote);
      if (this.count > treeSize) {
        checks.push({ status: 'note', code: 'beyond_checkpoint', message: `the export holds ${plural(this.count, 'entry', 'entries')}; the checkpoint covers the first ${treeSize} (a later checkpoint covers the rest)` });
      }
    }
    const agents = this.agents?.summary();
    if (agents) (agents.status === 'fail' ? failures : checks).push(agents);
    if (this.agentSignedUnchecked > 0) {
      checks.push({ status: 'note', code: 'agent_signature', message: `${plural(this.agentSignedUnchecked, 'entry carries', 'entries carry')} an agent signature, not checked: give the agent key register (GET /api/v1/agent-keys) with --agent-keys to check them` });
    }
    checks.push(...failures);
    if (failures.length === 0) checks.push({ status: 'ok', code: 'entries', message: `${plural(this.count, 'entry', 'entries')}: every hash, link and signature verifies, and they rebuild the signed tree` });
    return { ok: failures.length === 0, pinned: true, checks };
  }
}
