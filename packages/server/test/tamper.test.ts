// Tampering with stored rows directly in the database: verify must report exactly the
// affected entries, saying why, and keep every untouched entry valid. Both stores.
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentCommitment, contentText, entryHash, recordToEntry } from '@audit-ledger/core';
import { signEntryHash } from '../src/crypto/signing.js';
import type { LogEntryRow } from '../src/store/chain.js';
import { STORE_KINDS } from './helpers/env.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ingestBatch } from './helpers/ledger.js';

interface Verdict {
  chain_valid: boolean;
  signature_valid: boolean;
  kinds: string[];
}

describe.each(STORE_KINDS)('tamper detection on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(() => t.close());

  /** A fresh company with six entries (seq 0..5). */
  async function chainOfSix() {
    const acct = await t.newAccount();
    const { key } = await t.createKey(acct.token, 100_000);
    const ids: string[] = (await ingestBatch(t, key, Array.from({ length: 6 }, (_, i) => ({ event_type: 'step', data: { i } })))).json().log_ids;
    const rows = () => t.store.db.selectFrom('log_entries').selectAll().where('company_id', '=', acct.companyId).orderBy('seq').execute();
    const update = (seq: number, set: Partial<LogEntryRow>) =>
      t.store.db.updateTable('log_entries').set(set).where('company_id', '=', acct.companyId).where('seq', '=', seq).execute();
    /** Verdicts of every log id still present, by its current seq. */
    const verifyAll = async (): Promise<Map<number, Verdict>> => {
      const out = new Map<number, Verdict>();
      for (const id of ids) {
        const res = await t.inject({ method: 'GET', url: `/api/v1/logs/${id}/verify`, headers: { 'x-api-key': key } });
        if (res.statusCode === 404) continue;
        const v = res.json();
        out.set(v.seq, { chain_valid: v.chain_valid, signature_valid: v.signature_valid, kinds: v.problems.map((p: { kind: string }) => p.kind).sort() });
      }
      return out;
    };
    return { acct, key, ids, rows, update, verifyAll };
  }

  /** Asserts exactly the listed seqs are invalid, with those problem kinds; all others valid. */
  function expectOnly(verdicts: Map<number, Verdict>, bad: Record<number, string[]>) {
    for (const [seq, v] of verdicts) {
      const expected = bad[seq];
      if (expected) {
        expect({ seq, kinds: v.kinds }).toEqual({ seq, kinds: [...expected].sort() });
        expect(v.chain_valid && v.signature_valid).toBe(false);
      } else {
        expect({ seq, ...v }).toEqual({ seq, chain_valid: true, signature_valid: true, kinds: [] });
      }
    }
  }

  it('all entries verify before any tampering', async () => {
    const c = await chainOfSix();
    expectOnly(await c.verifyAll(), {});
  });

  it('changed data → that entry alone: content_mismatch (its commitment, hash and signature still hold)', async () => {
    const c = await chainOfSix();
    await c.update(2, { data: JSON.stringify({ i: 999 }) });
    const v = await c.verifyAll();
    expectOnly(v, { 2: ['content_mismatch'] });
    expect(v.get(2)).toMatchObject({ chain_valid: false, signature_valid: true });
  });

  it('changed commitment (to match changed data) → hash_mismatch on that entry', async () => {
    const c = await chainOfSix();
    const row = (await c.rows())[3] as LogEntryRow;
    const data = JSON.stringify({ i: 999 });
    await c.update(3, { data, content_commitment: contentCommitment(Buffer.from(row.content_salt as string, 'base64'), contentText(data, null)) });
    expectOnly(await c.verifyAll(), { 3: ['hash_mismatch'] });
  });

  it('content removed without an erasure record → unrecorded_erasure, and nothing else', async () => {
    const c = await chainOfSix();
    await c.update(1, { data: null, content_salt: null, erased_at: '2026-03-02T00:00:00.000Z', erasure_id: (await c.rows())[4]?.log_id as string });
    await c.update(2, { data: null, content_salt: null, erased_at: '2026-03-02T00:00:00.000Z' });
    expectOnly(await c.verifyAll(), { 1: ['unrecorded_erasure'], 2: ['unrecorded_erasure'] });
  });

  it('changed event_type → hash_mismatch on that entry', async () => {
    const c = await chainOfSix();
    await c.update(4, { event_type: 'something.else' });
    expectOnly(await c.verifyAll(), { 4: ['hash_mismatch'] });
  });

  it('changed created_at → hash_mismatch on that entry', async () => {
    const c = await chainOfSix();
    await c.update(0, { created_at: '2020-01-01T00:00:00.000Z' });
    expectOnly(await c.verifyAll(), { 0: ['hash_mismatch'] });
  });

  it('changed hash → that entry (mismatch, signature, its successor no longer links) and the next (broken link)', async () => {
    const c = await chainOfSix();
    await c.update(2, { hash: 'ab'.repeat(32) });
    expectOnly(await c.verifyAll(), { 2: ['hash_mismatch', 'broken_link', 'bad_signature'], 3: ['broken_link'] });
  });

  it('changed prev_hash → that entry (mismatch, link) and the previous (its successor no longer links)', async () => {
    const c = await chainOfSix();
    await c.update(3, { prev_hash: 'cd'.repeat(32) });
    expectOnly(await c.verifyAll(), { 3: ['hash_mismatch', 'broken_link'], 2: ['broken_link'] });
  });

  it('changed signature → bad_signature on that entry alone, chain still valid', async () => {
    const c = await chainOfSix();
    const other = (await c.rows())[1] as LogEntryRow;
    await c.update(2, { signature: other.signature });
    const v = await c.verifyAll();
    expectOnly(v, { 2: ['bad_signature'] });
    expect(v.get(2)).toMatchObject({ chain_valid: true, signature_valid: false });
  });

  it('changed key_id → unknown_key, or bad_signature when it names another real key', async () => {
    const c = await chainOfSix();
    await c.update(1, { key_id: '0123456789abcdef' });
    const { publicKey } = generateKeyPairSync('ed25519');
    const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url');
    await t.store.signingKeys.register({ key_id: 'fedcba9876543210', algorithm: 'Ed25519', public_key: raw.toString('base64'), active_from: '2026-01-01T00:00:00.000Z', active_to: '2026-01-02T00:00:00.000Z', private_key_encrypted: null, custody: null });
    await c.update(4, { key_id: 'fedcba9876543210' });
    expectOnly(await c.verifyAll(), { 1: ['unknown_key'], 4: ['bad_signature'] });
  });

  it('deleted entry → both neighbours report the missing entry', async () => {
    const c = await chainOfSix();
    await t.store.db.deleteFrom('log_entries').where('company_id', '=', c.acct.companyId).where('seq', '=', 3).execute();
    const v = await c.verifyAll();
    expect(v.has(3)).toBe(false);
    expectOnly(v, { 2: ['missing_entry'], 4: ['missing_entry'] });
  });

  it('deleted last entry → the new last entry reports it missing', async () => {
    const c = await chainOfSix();
    await t.store.db.deleteFrom('log_entries').where('company_id', '=', c.acct.companyId).where('seq', '=', 5).execute();
    expectOnly(await c.verifyAll(), { 4: ['missing_entry'] });
  });

  it('two entries swapped → both, and the links around them', async () => {
    const c = await chainOfSix();
    await c.update(2, { seq: 1000 });
    await c.update(3, { seq: 2 });
    await c.update(1000, { seq: 3 });
    expectOnly(await c.verifyAll(), {
      1: ['broken_link'],
      2: ['hash_mismatch', 'broken_link', 'broken_link'],
      3: ['hash_mismatch', 'broken_link', 'broken_link'],
      4: ['broken_link'],
    });
  });

  it('a forged entry appended behind the service → beyond_head and a bad signature; the real chain stays valid', async () => {
    const c = await chainOfSix();
    const last = (await c.rows())[5] as LogEntryRow;
    const salt = Buffer.alloc(32, 7);
    const forgedBody = {
      ...recordToEntry(last), seq: 6, log_id: '01890000-0000-7000-8000-000000000001', data: { forged: true }, prev_hash: last.hash,
      content_salt: salt.toString('base64'), content_commitment: contentCommitment(salt, contentText('{"forged":true}', null)), links: null,
    };
    const hash = entryHash(forgedBody);
    const attacker = generateKeyPairSync('ed25519').privateKey;
    await t.store.db
      .insertInto('log_entries')
      .values({ ...forgedBody, data: JSON.stringify(forgedBody.data), extra: null, links: null, hash, signature: signEntryHash(attacker, hash), key_id: last.key_id })
      .execute();
    c.ids.push(forgedBody.log_id);
    expectOnly(await c.verifyAll(), { 6: ['beyond_head', 'bad_signature'] });
  });
});
