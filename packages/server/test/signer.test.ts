// Worker-thread signing gives the same (deterministic Ed25519) signatures as inline signing.
import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '@audit-ledger/core';
import { signEntryHash } from '../src/crypto/signing.js';
import { memoryCustody } from '../src/crypto/custody.js';
import { WorkerSigner } from '../src/ledger/signer.js';

describe('WorkerSigner', () => {
  const { privateKey } = generateKeyPairSync('ed25519');
  const hashes = Array.from({ length: 101 }, (_, i) => sha256Hex(`entry ${i}`));
  const expected = hashes.map((h) => signEntryHash(privateKey, h));

  it.each([0, 1, 3])('with %i workers signs every hash, in order, as inline signing does', async (workers) => {
    const signer = new WorkerSigner({ keyId: 'first', custody: memoryCustody(privateKey) }, workers);
    try {
      expect(await signer.signMany(hashes)).toEqual(expected);
      // A key added later (a rotation) signs the jobs that name it; the first key still signs its own.
      const next = generateKeyPairSync('ed25519').privateKey;
      signer.addKey({ keyId: 'next', custody: memoryCustody(next) });
      expect(await signer.signMany(hashes, { keyId: 'next', offThread: true })).toEqual(hashes.map((h) => signEntryHash(next, h)));
      expect(await signer.signMany(hashes.slice(0, 20), { keyId: 'first' })).toEqual(expected.slice(0, 20));
      expect(await signer.signMany(hashes.slice(0, 3))).toEqual(expected.slice(0, 3));
      expect(await signer.signMany([])).toEqual([]);
      expect(await signer.signMany(hashes, { offThread: true })).toEqual(expected);
      expect(await signer.signMany(hashes.slice(0, 3), { offThread: true })).toEqual(expected.slice(0, 3));
    } finally {
      await signer.close();
    }
  });

  it.each([0, 1, 3])('with %i workers checks signatures (an agent\'s) in order, and finds the one that does not hold', async (workers) => {
    const signer = new WorkerSigner({ keyId: 'first', custody: memoryCustody(privateKey) }, workers);
    const agent = generateKeyPairSync('ed25519');
    const raw = Buffer.from(agent.publicKey.export({ format: 'jwk' }).x as string, 'base64url');
    const items = Array.from({ length: 50 }, (_, i) => {
      const message = Buffer.from(`event ${i}`);
      return { key: raw, message, signature: sign(null, message, agent.privateKey) };
    });
    items[37] = { ...(items[37] as (typeof items)[0]), message: Buffer.from('another event') };
    try {
      const want = items.map((_, i) => i !== 37);
      expect(await signer.verifyMany(items)).toEqual(want);
      expect(await signer.verifyMany(items.slice(30, 40))).toEqual(want.slice(30, 40));
      expect(await signer.verifyMany([])).toEqual([]);
    } finally {
      await signer.close();
    }
  });
});
