// Ledger helpers for tests: ingest over HTTP, and check a company's whole chain from the store.
import { generateKeyPairSync } from 'node:crypto';
import { entryHash, GENESIS_PREV_HASH, rawKeyFromBase64, recordToEntry, verifyEntrySignature, witnessVerifierKey } from '@audit-ledger/core';
import { rawPublicKey } from '../../src/crypto/signing.js';
import { WitnessSubmitter } from '../../src/witness/submitter.js';
import { operatorFetch } from '../../src/egress/address-policy.js';
import { Metrics } from '../../src/ops/metrics.js';
import type { Store } from '../../src/store/store.js';
import type { TestApp } from './app.js';

export function ingest(t: Pick<TestApp, 'inject'>, key: string, payload: unknown, headers: Record<string, string> = {}) {
  return t.inject({ method: 'POST', url: '/api/v1/logs', headers: { 'x-api-key': key, ...headers }, payload: payload as object });
}

export function ingestBatch(t: Pick<TestApp, 'inject'>, key: string, logs: unknown) {
  return t.inject({ method: 'POST', url: '/api/v1/logs/batch', headers: { 'x-api-key': key }, payload: { logs } as object });
}

export async function countEntries(store: Store, companyId: string): Promise<number> {
  const r = await store.db.selectFrom('log_entries').select((eb) => eb.fn.countAll<number | string>().as('n')).where('company_id', '=', companyId).executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Asserts seqs 0..n-1 with no gap, every hash recomputes, every link holds and every signature verifies; returns n. */
export async function assertChainIntact(store: Store, companyId: string): Promise<number> {
  const rows = await store.db.selectFrom('log_entries').selectAll().where('company_id', '=', companyId).orderBy('seq').execute();
  const keys = new Map((await store.signingKeys.list()).map((k) => [k.key_id, rawKeyFromBase64(k.public_key)]));
  let prev = GENESIS_PREV_HASH;
  rows.forEach((row, i) => {
    if (row.seq !== i) throw new Error(`gap or reuse: position ${i} holds seq ${row.seq}`);
    if (row.prev_hash !== prev) throw new Error(`broken link at seq ${row.seq}`);
    if (entryHash(recordToEntry(row)) !== row.hash) throw new Error(`hash mismatch at seq ${row.seq}`);
    const key = keys.get(row.key_id);
    if (!key || !verifyEntrySignature(key, row.hash, row.signature)) throw new Error(`bad signature at seq ${row.seq}`);
    prev = row.hash;
  });
  const head = await store.ledger.getChainHead(companyId);
  if (rows.length > 0 && (head?.lastSeq !== rows.length - 1 || head.lastHash !== prev)) throw new Error('chain head does not match the last entry');
  return rows.length;
}

/** A WitnessSubmitter over the test app's store for one witness at `url`, under `name` with a fresh key (the service never gets a valid cosignature from it). */
export function submitterTo(t: Pick<TestApp, 'store' | 'clock'>, url: string, name: string): WitnessSubmitter {
  return new WitnessSubmitter({
    witnesses: [{ url, verifierKey: witnessVerifierKey(name, rawPublicKey(generateKeyPairSync('ed25519').publicKey)) }],
    witnessStore: t.store.witnessStore,
    ledger: t.store.ledger,
    accounts: t.store.accounts,
    metrics: new Metrics({ rateLimitFallback: () => false }),
    clock: t.clock.now,
    warn: () => {},
    signingKeys: t.store.signingKeys,
    // The test's witnesses listen on 127.0.0.1: the address policy is lifted, as WITNESS_ALLOW_PRIVATE=true does.
    send: operatorFetch(true),
  });
}
