// One way to build a group, whichever way it is committed: sequence the group's events on the
// chain state, hash them, sign them (or leave a small pipelined group to the writer thread),
// extend the tree, and sign a checkpoint when one is due. It advances the state past the
// group; it writes nothing (appender.ts commits the plan).
import { setImmediate as yieldTurn } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import { AGENT_SIGNED_FORMAT_VERSION, canonicalEntryText, CONTENT_SALT_BYTES, contentCommitment, contentText, consistencyProof, fromHex, layeredReader, LEDGER_FORMAT_VERSION, readEdge, sha256Hex, verifyConsistency } from '@audit-ledger/core';
import type { ChainHead, ChainTx, ChainWriter, LogEntryRow } from '../../store/chain.js';
import { iso } from '../../kernel/time.js';
import type { CheckpointSigner } from '../checkpoints.js';
import type { Keyring } from '../keyring.js';
import type { Signer } from '../signer.js';
import { uuidv7 } from '../uuidv7.js';
import { growTree } from '../tree-rows.js';
import { type AppendedEvent, IdempotencyConflictError, InconsistentTreeError } from './errors.js';
import type { ChainState, KeyUse, Pending, Plan } from './types.js';

/** Events built between turns of the event loop when a group is built in slices. */
const SLICE = 200;

/**
 * Pipelined groups up to this many entries are signed by the writer thread as it inserts them:
 * a round trip to a signing worker costs more (in latency, and in CPU for waking threads) than
 * the writer signing them. Larger groups are signed by the workers while earlier ones commit.
 */
const WRITER_SIGNS_UP_TO = 64;

export interface PlannerDeps {
  clock: () => number;
  keyring: Pick<Keyring, 'active'>;
  signer: Pick<Signer, 'signMany'>;
  checkpoints: CheckpointSigner;
  /** A group signs a checkpoint when the last one is at least this old; later groups wait for a timer. */
  checkpointIntervalMs: number;
  /** Told about refused checkpoints. */
  onError?: (err: unknown, message: string) => void;
}

export class Planner {
  constructor(private readonly deps: PlannerDeps) {}

  /** The chain as stored, read inside the locked transaction. */
  async loadState(tx: ChainTx, checkNow = false, known?: Pick<ChainState, 'edge' | 'latest'>): Promise<ChainState> {
    const size = tx.head.lastSeq + 1;
    const read = layeredReader((i) => tx.readTreeHashes(i), (seqs) => tx.readEntryHashes(seqs));
    const edge = known?.edge ?? (await readEdge(read, size));
    const latest = known ? known.latest : await tx.latestCheckpoint();
    const rootAt = edge.root();
    let verdict: Promise<boolean> | undefined;
    const consistent = () =>
      (verdict ??= (async () => {
        if (!latest) return true;
        if (latest.tree_size > size) return false;
        const proof = await consistencyProof(read, latest.tree_size, size);
        return verifyConsistency(latest.tree_size, size, proof, fromHex(latest.root_hash), rootAt);
      })());
    const head = { ...tx.head };
    if (!checkNow) return { head, edge, latest, consistent };
    // A state kept beyond its transaction answers from a check made inside it, and holds no
    // reference to the transaction (a kept one kept memory alive).
    const ok = await consistent();
    return { head, edge, latest, consistent: () => Promise.resolve(ok) };
  }

  /**
   * Sequences, hashes and signs a group on `state`, and advances `state` past it. A request
   * is all-or-nothing: an idempotency conflict fails that request alone, never its neighbours.
   */
  async plan(
    companyId: string,
    state: ChainState,
    group: Pending[],
    committedKeys: LogEntryRow[],
    inFlightKeys: Map<string, KeyUse[]>,
    /** The writer a pipelined group goes to (undefined: the caller writes it, holding the chain lock). */
    writer: ChainWriter | undefined,
  ): Promise<Plan> {
    // Everything an idempotency key already stands for: committed entries, groups still committing, then this group's.
    // Every use of a key, the original first (then conflicts, in seq order).
    const byKey = new Map<string, KeyUse[]>();
    for (const [k, uses] of inFlightKeys) byKey.set(k, [...uses]);
    for (const row of [...committedKeys].sort((a, b) => a.seq - b.seq)) {
      const k = row.idempotency_key as string;
      const use: KeyUse = {
        event_type: row.event_type,
        data: row.data,
        result: { log_id: row.log_id, seq: row.seq, hash: row.hash, event_type: row.event_type, created_at: row.created_at, duplicate: true, idempotency_conflict_of: row.idempotency_conflict_of },
      };
      const uses = byKey.get(k);
      if (!uses) byKey.set(k, [use]);
      else if (row.idempotency_conflict_of === null) uses.unshift(use);
      else uses.push(use);
    }

    // One key for the whole group, read once: a rotation meanwhile makes the store refuse the
    // write (KeyRetiredError), and the group is built again with the new key.
    const signingKey = this.deps.keyring.active;
    const keyId = signingKey.keyId;
    // Entries' created_at never goes backwards along the chain, even if the clock does, and never
    // precedes the signing key's period (a rotation dated just after the newest entry).
    const nowMs = Math.max(this.deps.clock(), signingKey.activeFrom);
    const now = iso(nowMs);
    const expect = state.head;
    const createdAt = now > expect.lastCreatedAt ? now : expect.lastCreatedAt;
    let seq = expect.lastSeq;
    let prevHash = expect.lastHash;
    const rows: LogEntryRow[] = [];
    const outcomes: Array<AppendedEvent[] | Error> = [];
    /** Keys this group added a use of, in order (undone from the end when a request fails). */
    const keys: string[] = [];

    // Every entry's salt from one draw of random bytes: one call costs about as much as 32 bytes
    // (2.5 µs), so a group of n entries pays for one instead of n.
    const salts = randomBytes(CONTENT_SALT_BYTES * group.reduce((n, p) => n + p.events.length, 0));
    let nextSalt = 0;

    // Under the chain lock (no writer), a large group is built in slices, serving the event loop
    // between them: other companies' requests do not wait for all of it. (A pipelined group is
    // built without a break: the pipeline's state must not change under it.)
    let built = 0;
    for (const p of group) {
      const mark = { seq, prevHash, rows: rows.length, keys: keys.length };
      const results: AppendedEvent[] = [];
      let failure: Error | undefined;
      for (const [index, ev] of p.events.entries()) {
        if (!writer && ++built % SLICE === 0) await yieldTurn();
        const key = ev.envelope.idempotency_key;
        const uses = key === null ? undefined : byKey.get(key);
        let conflictOf: string | null = null;
        if (uses !== undefined && uses.length > 0) {
          // A repeat of any use (the original, or a conflict appended before) appends nothing.
          const same = uses.find((u) => u.event_type === ev.event_type && u.data === ev.dataJson);
          if (same) {
            results.push({ ...same.result, duplicate: true });
            continue;
          }
          if (ev.strictKey) {
            failure = new IdempotencyConflictError(index, key as string);
            break;
          }
          conflictOf = (uses[0] as KeyUse).result.log_id;
        }
        seq += 1;
        // The stored row is the hashed body with data and extra as their canonical JSON, the
        // salted commitment to them that the hash covers instead, and (format version 3) the
        // event_id and links erasure keeps.
        const salt = salts.subarray(nextSalt, nextSalt + CONTENT_SALT_BYTES);
        nextSalt += CONTENT_SALT_BYTES;
        const row: LogEntryRow = {
          format_version: ev.agentSignature ? AGENT_SIGNED_FORMAT_VERSION : LEDGER_FORMAT_VERSION,
          company_id: companyId,
          seq,
          log_id: uuidv7(nowMs),
          event_type: ev.event_type,
          data: ev.dataJson,
          ...ev.envelope,
          extra: ev.extraJson,
          created_at: createdAt,
          prev_hash: prevHash,
          hash: '',
          signature: '',
          key_id: keyId,
          idempotency_conflict_of: conflictOf,
          content_commitment: contentCommitment(salt, contentText(ev.dataJson, ev.extraJson)),
          content_salt: salt.toString('base64'),
          erased_at: null,
          erasure_id: null,
          event_id: ev.eventId,
          links: ev.linksJson,
          agent_key_id: ev.agentSignature?.keyId ?? null,
          agent_signature: ev.agentSignature?.signature ?? null,
        };
        row.hash = sha256Hex(canonicalEntryText(row, ev.dataJson, ev.extraJson, ev.linksJson));
        rows.push(row);
        prevHash = row.hash;
        const result: AppendedEvent = { log_id: row.log_id, seq, hash: row.hash, event_type: ev.event_type, created_at: createdAt, duplicate: false, idempotency_conflict_of: conflictOf };
        results.push(result);
        if (key !== null) {
          const list = byKey.get(key);
          if (list) list.push({ event_type: ev.event_type, data: ev.dataJson, result });
          else byKey.set(key, [{ event_type: ev.event_type, data: ev.dataJson, result }]);
          keys.push(key);
        }
      }
      if (failure) {
        // Undo this request's part; the rest of the group goes ahead.
        ({ seq, prevHash } = mark);
        rows.length = mark.rows;
        for (const k of keys.splice(mark.keys).reverse()) {
          const list = byKey.get(k) as KeyUse[];
          list.pop();
          if (list.length === 0) byKey.delete(k);
        }
        outcomes.push(failure);
      } else {
        outcomes.push(results);
      }
    }

    // The tree grows with the entries, and the stored levels' hashes they complete commit with
    // them (the leaves are the entries' own hashes: core's isStoredLevel, layeredReader).
    const { indexes: treeIndexes, hashes: treeHashes } = growTree(state.edge, rows.map((r) => r.hash));
    // Signing runs while the caller goes on (the next group can be built meanwhile); a small
    // pipelined group goes unsigned (signature '') to the writer, which signs it, unless the key
    // never leaves its token (the writer thread holds only keys in memory).
    let signed = Promise.resolve();
    if (!writer || rows.length > WRITER_SIGNS_UP_TO || !signingKey.custody.keyObject) {
      signed = this.deps.signer.signMany(
        rows.map((r) => r.hash),
        // A large group under the chain lock is signed off this thread too, so it serves other
        // companies' requests meanwhile (measured: another company's single-event p99 beside
        // 1000-event batches 37 ms instead of 134 ms; batch rate on PostgreSQL 8,700 events/s
        // instead of 10,800 in back-to-back runs, docs/performance.md).
        { offThread: writer !== undefined || rows.length > SLICE, keyId },
      ).then((signatures) => rows.forEach((r, i) => (r.signature = signatures[i] as string)));
      signed.catch(() => undefined); // awaited by the caller; never an unhandled rejection
    }
    const head: ChainHead = { lastSeq: seq, lastHash: prevHash, lastCreatedAt: rows.length > 0 ? createdAt : expect.lastCreatedAt };
    state.head = head;
    const planKeys: Array<[string, KeyUse[]]> = [...new Set(keys)].map((k) => [k, byKey.get(k) as KeyUse[]]);
    for (const [k, uses] of planKeys) inFlightKeys.set(k, uses);

    const plan: Plan = { outcomes, keys: planKeys, signed, write: { companyId, expect, rows, head, treeIndexes, treeHashes } };
    const size = state.edge.size;
    const covered = state.latest?.tree_size ?? 0;
    if (size === covered) return plan;
    const latestAt = state.latest ? Date.parse(state.latest.timestamp) : -Infinity;
    if (!group.some((p) => p.checkpoint) && nowMs - latestAt < this.deps.checkpointIntervalMs) {
      plan.checkpointDueAt = latestAt + this.deps.checkpointIntervalMs;
      return plan;
    }
    // Sign the new tree only if the stored one provably extends the last checkpoint, so no two checkpoints ever conflict.
    if (!(await state.consistent())) {
      // Refuse to sign, but keep accepting entries: the verifier reports the damage.
      this.deps.onError?.(new InconsistentTreeError(companyId, covered, size), 'checkpoint refused');
      return plan;
    }
    plan.write.checkpoint = this.deps.checkpoints.sign(signingKey, companyId, size, state.edge.root(), nowMs);
    state.latest = plan.write.checkpoint;
    return plan;
  }
}
