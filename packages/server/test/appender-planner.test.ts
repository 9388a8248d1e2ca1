// The planner alone, on a hand-built chain state: no store, no threads. It sequences, links,
// hashes and signs a group, fails a request with a reused idempotency key alone, advances the
// state, and signs a checkpoint of the new tree when one is due.
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { entryHash, entryLeafHash, GENESIS_PREV_HASH, recordToEntry, referenceRoot, toHex, TreeEdge } from '@audit-ledger/core';
import { keyIdOfKey, rawPublicKey } from '../src/crypto/signing.js';
import { memoryCustody } from '../src/crypto/custody.js';
import { type AppendedEvent, IdempotencyConflictError } from '../src/ledger/appender/errors.js';
import { Planner } from '../src/ledger/appender/planner.js';
import type { ChainState, Pending } from '../src/ledger/appender/types.js';
import { CheckpointSigner } from '../src/ledger/checkpoints.js';
import { prepareEvent } from '../src/ingestion/input.js';
import type { PreparedEvent } from '../src/ledger/appender/types.js';
import { EMPTY_HEAD } from '../src/store/chain.js';

const prepared = (body: Record<string, unknown>, strictKey = false) => prepareEvent(body as never, '/body', { strictKey }) as PreparedEvent;
const pending = (events: PreparedEvent[]): Pending => ({ events, resolve: () => {}, reject: () => {} });

describe('the append planner', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const key = { keyId: keyIdOfKey(publicKey), custody: memoryCustody(privateKey), publicKey, raw: rawPublicKey(publicKey), activeFrom: Number.NEGATIVE_INFINITY };
  const signed: string[][] = [];
  const planner = new Planner({
    clock: () => Date.parse('2026-03-01T12:00:00.000Z'),
    keyring: { active: key },
    signer: { signMany: async (hashes) => (signed.push(hashes), hashes.map((h) => `sig:${h.slice(0, 8)}`)) },
    checkpoints: new CheckpointSigner('test.local'),
    checkpointIntervalMs: 0,
  });

  it('builds a linked, hashed, signed group on the state, failing only the request that reuses a header key', async () => {
    const state: ChainState = { head: { ...EMPTY_HEAD }, edge: TreeEdge.empty(), latest: undefined, consistent: async () => true };
    const group = [
      pending([prepared({ event_type: 'a', data: { n: 1 }, idempotency_key: 'k1' }), prepared({ event_type: 'b', data: { n: 2 } })]),
      pending([prepared({ event_type: 'c', data: {} }), prepared({ event_type: 'a', data: { n: 99 }, idempotency_key: 'k1' }, true)]),
      pending([prepared({ event_type: 'a', data: { n: 1 }, idempotency_key: 'k1' })]),
    ];
    const plan = await planner.plan('company-1', state, group, [], new Map(), undefined);
    await plan.signed;
    const rows = plan.write.rows;
    // The second request reused k1 for another event: it alone fails, and takes no seq.
    expect(rows.map((r) => [r.seq, r.event_type])).toEqual([
      [0, 'a'],
      [1, 'b'],
    ]);
    expect(plan.outcomes[1]).toBeInstanceOf(IdempotencyConflictError);
    // The third repeats k1 exactly: the first one's answer, marked duplicate.
    expect(plan.outcomes[2]).toEqual([{ ...(plan.outcomes[0] as AppendedEvent[])[0], duplicate: true }]);
    let prev = GENESIS_PREV_HASH;
    for (const r of rows) {
      expect(r.prev_hash).toBe(prev);
      expect(entryHash(recordToEntry(r))).toBe(r.hash);
      expect(r.key_id).toBe(key.keyId);
      expect(r.signature).toBe(`sig:${r.hash.slice(0, 8)}`);
      prev = r.hash;
    }
    expect(signed).toEqual([rows.map((r) => r.hash)]);
    // The state moved past the group; the tree and a checkpoint of it came with it.
    expect(state.head).toMatchObject({ lastSeq: 1, lastHash: rows[1]?.hash });
    expect(plan.write.expect).toMatchObject({ lastSeq: -1 });
    const root = referenceRoot(rows.map((r) => entryLeafHash(r.hash)));
    expect(plan.write.checkpoint).toMatchObject({ company_id: 'company-1', tree_size: 2, root_hash: toHex(root), key_id: key.keyId });
    expect(state.latest).toBe(plan.write.checkpoint);
  });

  it('appends a body key reused for other content, marked with the original; a failed request leaves no use of the key behind', async () => {
    const state: ChainState = { head: { ...EMPTY_HEAD }, edge: TreeEdge.empty(), latest: undefined, consistent: async () => true };
    const inFlight = new Map();
    const group = [
      pending([prepared({ event_type: 'a', data: { n: 1 }, idempotency_key: 'k' })]),
      // Fails (header key, other content) after adding a conflict use of k: that use must be undone.
      pending([prepared({ event_type: 'a', data: { n: 2 }, idempotency_key: 'k' }), prepared({ event_type: 'a', data: { n: 3 }, idempotency_key: 'k' }, true)]),
      pending([prepared({ event_type: 'a', data: { n: 2 }, idempotency_key: 'k' })]),
      pending([prepared({ event_type: 'a', data: { n: 2 }, idempotency_key: 'k' }), prepared({ event_type: 'a', data: { n: 1 }, idempotency_key: 'k' })]),
    ];
    const plan = await planner.plan('company-3', state, group, [], inFlight, undefined);
    const rows = plan.write.rows;
    // Each entry its own salt, even drawn together.
    expect(new Set(rows.map((r) => r.content_salt)).size).toBe(rows.length);
    expect(rows.map((r) => [r.seq, JSON.parse(r.data as string).n, r.idempotency_conflict_of])).toEqual([
      [0, 1, null],
      [1, 2, rows[0]?.log_id],
    ]);
    expect(plan.outcomes[1]).toBeInstanceOf(IdempotencyConflictError);
    const third = (plan.outcomes[2] as AppendedEvent[])[0];
    expect(third).toMatchObject({ seq: 1, duplicate: false, idempotency_conflict_of: rows[0]?.log_id });
    // Repeats of the conflict and of the original: their answers, nothing appended.
    expect(plan.outcomes[3]).toEqual([
      { ...third, duplicate: true },
      { ...(plan.outcomes[0] as AppendedEvent[])[0], duplicate: true },
    ]);
    // Every use of k, the original first, stays known while the group is in flight.
    expect(inFlight.get('k').map((u: { result: AppendedEvent }) => u.result.seq)).toEqual([0, 1]);
    expect(plan.keys.map(([k]) => k)).toEqual(['k']);
  });

  it('leaves a small pipelined group unsigned for the writer, and refuses a checkpoint the stored tree does not support', async () => {
    const errors: string[] = [];
    const strict = new Planner({ clock: () => 0, keyring: { active: key }, signer: { signMany: async () => { throw new Error('not for small groups'); } }, checkpoints: new CheckpointSigner('test.local'), checkpointIntervalMs: 0, onError: (_e, m) => errors.push(m) });
    const state: ChainState = { head: { ...EMPTY_HEAD }, edge: TreeEdge.empty(), latest: undefined, consistent: async () => false };
    const writer = {} as never; // only its presence matters to the planner
    const plan = await strict.plan('company-2', state, [pending([prepared({ event_type: 'x', data: {} })])], [], new Map(), writer);
    await plan.signed;
    expect(plan.write.rows[0]?.signature).toBe('');
    expect(plan.write.checkpoint).toBeUndefined();
    expect(errors).toEqual(['checkpoint refused']);
  });
});
