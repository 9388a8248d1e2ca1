// A signing worker of WorkerSigner (signer.ts): signs the hashes it is sent with the key it is
// told, by the same function as the calling thread (crypto/signing.ts signEntryHash), and checks
// the agent signatures it is sent (the core's verifyEd25519).
import type { KeyObject } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import { verifyEd25519 } from '@audit-ledger/core';
import { signEntryHash } from '../crypto/signing.js';
import type { SignerMessage, WorkerKey } from './signer.js';

const port = parentPort;
if (!port) throw new Error('signer-thread.ts runs as a worker thread (WorkerSigner)');
const keys = new Map<string, KeyObject>((workerData as { keys: WorkerKey[] }).keys.map((k) => [k.keyId, k.privateKey]));
port.on('message', (m: SignerMessage) => {
  if ('add' in m) {
    keys.set(m.add.keyId, m.add.privateKey);
    return;
  }
  if ('verify' in m) {
    port.postMessage({ id: m.id, oks: m.verify.map((v) => verifyEd25519(v.key, v.message, v.signature)) });
    return;
  }
  const key = keys.get(m.keyId);
  if (!key) throw new Error(`the signing worker has no key ${m.keyId}`);
  port.postMessage({ id: m.id, sigs: m.hashes.map((h) => signEntryHash(key, h)) });
});
