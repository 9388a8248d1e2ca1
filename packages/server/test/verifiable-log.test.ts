// The verifiable log over HTTP, checked the way a client would: signed checkpoints,
// inclusion proofs for every entry, consistency proofs between checkpoints. Both stores.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { entryLeafHash, noteSignedBy, rawKeyFromBase64, parseCheckpointText, parseNote, toHex, verifyConsistency, verifyInclusion } from '@audit-ledger/core';
import type { CheckpointView } from '../src/ledger/proofs.js';
import { STORE_KINDS } from './helpers/env.js';
import { problem, startTestApp, type TestApp } from './helpers/app.js';
import { ingest, ingestBatch } from './helpers/ledger.js';

const hex = (s: string) => Buffer.from(s, 'hex');

type CheckpointJson = CheckpointView;

describe.each(STORE_KINDS)('verifiable log on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind, { env: { CHECKPOINT_INTERVAL_MS: '0' } });
  });
  afterAll(() => t.close());

  async function company() {
    const acct = await t.newAccount();
    const { key } = await t.createKey(acct.token, 1_000_000);
    const get = (url: string, headers: Record<string, string> = {}) => t.inject({ method: 'GET', url, headers: { 'x-api-key': key, ...headers } });
    return { acct, key, get };
  }

  async function publicKeyFor(keyId: string) {
    const res = await t.inject({ method: 'GET', url: '/api/v1/integrity/keys' });
    const k = (res.json().items as Array<{ key_id: string; public_key: string; note_verifier_key: string }>).find((x) => x.key_id === keyId);
    if (!k) throw new Error(`no key ${keyId}`);
    const raw = rawKeyFromBase64(k.public_key);
    return { raw, vkey: k.note_verifier_key };
  }

  async function checkSigned(c: CheckpointJson, companyId: string) {
    const { raw, vkey } = await publicKeyFor(c.key_id);
    const name = vkey.split('+')[0] as string;
    expect(noteSignedBy(c.note, name, raw)).toBe(true);
    const body = parseCheckpointText(parseNote(c.note).text);
    expect(body).toEqual({ origin: `${name}/${companyId}`, treeSize: c.tree_size, rootHash: hex(c.root_hash), timestamp: c.timestamp });
    expect(c.origin).toBe(body.origin);
  }

  it('every one of 1,000 entries has an inclusion proof that verifies against the signed checkpoint', async () => {
    const { acct, key, get } = await company();
    const ids: string[] = [];
    for (let b = 0; b < 4; b++) {
      const res = await ingestBatch(t, key, Array.from({ length: 250 }, (_, i) => ({ event_type: 'step', data: { b, i } })));
      expect(res.statusCode).toBe(200);
      ids.push(...res.json().log_ids);
    }
    const cp = (await get('/api/v1/integrity/checkpoint')).json() as CheckpointJson;
    expect(cp.tree_size).toBe(1000);
    await checkSigned(cp, acct.companyId);

    for (const [seq, id] of ids.entries()) {
      const res = await get(`/api/v1/logs/${id}/proof`);
      expect(res.statusCode).toBe(200);
      const p = res.json();
      expect(p).toMatchObject({ seq, leaf_index: seq, tree_size: 1000, root_hash: cp.root_hash });
      expect(p.checkpoint.note).toBe(cp.note);
      expect(p.leaf_hash).toBe(toHex(entryLeafHash(p.entry_hash)));
      const ok = verifyInclusion(seq, 1000, entryLeafHash(p.entry_hash), (p.proof as string[]).map(hex), hex(cp.root_hash));
      expect(ok, `entry ${seq}`).toBe(true);
    }
    // And a proof into an older tree size.
    const old = (await get(`/api/v1/logs/${ids[3]}/proof?tree_size=250`)).json();
    expect(old.checkpoint.tree_size).toBe(250);
    expect(verifyInclusion(3, 250, hex(old.leaf_hash), (old.proof as string[]).map(hex), hex(old.checkpoint.root_hash))).toBe(true);

    // The single-entry verify gains merkle_included.
    const v = (await get(`/api/v1/logs/${ids[500]}/verify`)).json();
    expect(v).toMatchObject({ chain_valid: true, signature_valid: true, merkle_included: true });
    expect(v.checkpoint.tree_size).toBe(1000);
  });

  it('consistency proofs between every pair of kept checkpoints verify', async () => {
    const { acct, key, get } = await company();
    const checkpoints: CheckpointJson[] = [];
    for (const n of [1, 1, 2, 3, 8, 1, 20, 33, 64, 1]) {
      expect((await ingestBatch(t, key, Array.from({ length: n }, (_, i) => ({ event_type: 'e', data: { i } })))).statusCode).toBe(200);
      checkpoints.push((await get('/api/v1/integrity/checkpoint')).json());
    }
    expect(checkpoints.map((c) => c.tree_size)).toEqual([1, 2, 4, 7, 15, 16, 36, 69, 133, 134]);
    for (const c of checkpoints) await checkSigned(c, acct.companyId);
    // Every checkpoint is kept and can be fetched again by size, identical.
    for (const c of checkpoints) expect((await get(`/api/v1/integrity/checkpoint?tree_size=${c.tree_size}`)).json()).toEqual(c);

    for (const a of checkpoints) {
      for (const b of checkpoints) {
        if (a.tree_size > b.tree_size) continue;
        const res = await get(`/api/v1/integrity/consistency?first=${a.tree_size}&second=${b.tree_size}`);
        expect(res.statusCode).toBe(200);
        const c = res.json();
        expect(c.first_root).toBe(a.root_hash);
        expect(c.second_root).toBe(b.root_hash);
        expect(c.second_checkpoint.note).toBe(b.note);
        const ok = verifyConsistency(a.tree_size, b.tree_size, (c.proof as string[]).map(hex), hex(a.root_hash), hex(b.root_hash));
        expect(ok, `${a.tree_size} → ${b.tree_size}`).toBe(true);
        // docs/ledger-format.md §9: first = second is the empty proof, holding when the roots are equal.
        if (a.tree_size === b.tree_size) expect(c.proof).toEqual([]);
      }
    }
    // A size at which no checkpoint was signed: the service's roots, with no checkpoint beside them.
    const unsigned = (await get('/api/v1/integrity/consistency?first=3&second=7')).json();
    expect(unsigned.first_checkpoint).toBeNull();
    expect(unsigned.second_checkpoint.tree_size).toBe(7);
    expect(verifyConsistency(3, 7, (unsigned.proof as string[]).map(hex), hex(unsigned.first_root), hex(checkpoints[3]?.root_hash as string))).toBe(true);
  });

  it('serves the note itself for Accept: text/plain', async () => {
    const { key, get } = await company();
    await ingest(t, key, { event_type: 'x', data: {} });
    const json = (await get('/api/v1/integrity/checkpoint')).json() as CheckpointJson;
    const res = await get('/api/v1/integrity/checkpoint', { accept: 'text/plain' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toBe(json.note);
    expect(res.body).toMatch(/^audit-ledger\.local\/[^\n]+\n1\n[A-Za-z0-9+/=]{44}\ntimestamp [^\n]+\n\n\u2014 audit-ledger\.local [A-Za-z0-9+/=]+\n$/);
  });

  it('answers clear 4xx problems for sizes it cannot prove, and nothing for an empty ledger', async () => {
    const { key, get } = await company();
    problem(await get('/api/v1/integrity/checkpoint'), 404, 'not_found');
    const id = (await ingestBatch(t, key, [{ event_type: 'a', data: {} }, { event_type: 'b', data: {} }])).json().log_ids[1];
    problem(await get(`/api/v1/logs/${id}/proof?tree_size=1`), 400, 'tree_size_out_of_range');
    problem(await get(`/api/v1/logs/${id}/proof?tree_size=3`), 400, 'tree_size_out_of_range');
    problem(await get(`/api/v1/logs/${id}/proof?tree_size=0`), 400, 'validation_failed');
    problem(await get(`/api/v1/logs/${id}/proof?tree_size=two`), 400, 'validation_failed');
    problem(await get('/api/v1/integrity/checkpoint?tree_size=1'), 404, 'not_found');
    problem(await get('/api/v1/integrity/consistency?first=2&second=1'), 400, 'tree_size_out_of_range');
    problem(await get('/api/v1/integrity/consistency?first=1&second=5'), 400, 'tree_size_out_of_range');
    problem(await get('/api/v1/integrity/consistency?first=0&second=2'), 400, 'validation_failed');
    problem(await get('/api/v1/integrity/consistency?first=1'), 400, 'validation_failed');
    problem(await t.inject({ method: 'GET', url: '/api/v1/integrity/checkpoint' }), 401, 'missing_credential');
  });

  it("never shows one company another's checkpoints or proofs", async () => {
    const a = await company();
    const b = await company();
    const idA = (await ingest(t, a.key, { event_type: 'a', data: {} })).json().log_id;
    await ingestBatch(t, b.key, [{ event_type: 'b', data: {} }, { event_type: 'b', data: {} }]);
    problem(await b.get(`/api/v1/logs/${idA}/proof`), 404, 'not_found');
    const cpB = (await b.get('/api/v1/integrity/checkpoint')).json() as CheckpointJson;
    expect(cpB.tree_size).toBe(2);
    expect(cpB.origin.endsWith(`/${b.acct.companyId}`)).toBe(true);
    expect((await a.get('/api/v1/integrity/checkpoint')).json().tree_size).toBe(1);
  });
});

describe.each(STORE_KINDS)('checkpoint timing on %s', (kind) => {
  it('signs at most once per interval, covers the rest by timer, and before shutdown', async () => {
    const t = await startTestApp(kind, { env: { CHECKPOINT_INTERVAL_MS: '200' } });
    try {
      const acct = await t.newAccount();
      const { key } = await t.createKey(acct.token, 100_000);
      const first = (await ingest(t, key, { event_type: 'a', data: {} })).json();
      const second = (await ingest(t, key, { event_type: 'b', data: {} })).json();
      const get = (url: string) => t.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
      expect((await get('/api/v1/integrity/checkpoint')).json().tree_size).toBe(1);
      const early = problem(await get(`/api/v1/logs/${second.log_id}/proof`), 409, 'not_yet_checkpointed');
      expect(early.detail).toMatch(/not yet covered/);
      expect((await get(`/api/v1/logs/${first.log_id}/proof`)).statusCode).toBe(200);
      // The timer signs the next checkpoint without another append.
      await vi.waitFor(async () => expect((await get('/api/v1/integrity/checkpoint')).json().tree_size).toBe(2), { timeout: 5000, interval: 50 });
      expect((await get(`/api/v1/logs/${second.log_id}/proof`)).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });

  it('signs a final checkpoint for uncovered entries when the service closes', async () => {
    const t = await startTestApp(kind, { env: { CHECKPOINT_INTERVAL_MS: '3600000' } });
    const acct = await t.newAccount();
    const { key } = await t.createKey(acct.token, 100_000);
    await ingest(t, key, { event_type: 'a', data: {} });
    await ingestBatch(t, key, [{ event_type: 'b', data: {} }, { event_type: 'c', data: {} }]);
    expect((await t.store.ledger.latestCheckpoint(acct.companyId))?.tree_size).toBe(1);
    await t.app.close();
    expect((await t.store.ledger.latestCheckpoint(acct.companyId))?.tree_size).toBe(3);
    await t.close();
  });
});
