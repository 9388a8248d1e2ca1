// Signed notes and checkpoints against the published golang.org/x/mod/sumdb/note vector:
// Ed25519 is deterministic, so our signer must reproduce Go's note byte for byte.
import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkpointText, EMPTY_ROOT, noteKeyId, noteSignedBy, parseCheckpointText, parseNote, toHex, verifierKey } from '@audit-ledger/core';
import { rawPublicKey, signNote } from '../src/crypto/signing.js';
import { memoryCustody } from '../src/crypto/custody.js';

const SKEY = 'PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz';
const VKEY = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
const TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const NOTE = `${TEXT}\n\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n`;

const seed = Buffer.from(SKEY.split('+').slice(4).join('+'), 'base64').subarray(1);
const privateKey = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]), format: 'der', type: 'pkcs8' });
const publicKey = createPublicKey(privateKey);
const raw = rawPublicKey(publicKey);

describe('C2SP signed note (Go sumdb/note vector)', () => {
  it('derives the published key ID and verifier key', () => {
    expect(toHex(noteKeyId('PeterNeumann', raw))).toBe('c74f20a3');
    expect(verifierKey('PeterNeumann', raw)).toBe(VKEY);
  });

  it('signs the published note byte for byte, and verifies it', () => {
    expect(signNote(TEXT, 'PeterNeumann', memoryCustody(privateKey), raw)).toBe(NOTE);
    expect(noteSignedBy(NOTE, 'PeterNeumann', raw)).toBe(true);
  });

  it('rejects a changed text, another name, another key and malformed notes', () => {
    expect(noteSignedBy(NOTE.replace('cryptography', 'cryptographY'), 'PeterNeumann', raw)).toBe(false);
    expect(noteSignedBy(NOTE, 'PeterNeumann2', raw)).toBe(false);
    const other = generateKeyPairSync('ed25519').publicKey;
    expect(noteSignedBy(NOTE, 'PeterNeumann', rawPublicKey(other))).toBe(false);
    expect(noteSignedBy(TEXT, 'PeterNeumann', raw)).toBe(false);
    expect(() => parseNote(`${TEXT}\n\u2014 PeterNeumann AAAA\n`)).toThrow(/malformed/);
  });
});

describe('checkpoint body', () => {
  it('round-trips origin, size, root and timestamp', () => {
    const c = { origin: 'audit-ledger.local/c1', treeSize: 7, rootHash: EMPTY_ROOT, timestamp: '2026-11-21T06:00:00.000Z' };
    const text = checkpointText(c);
    expect(text).toBe('audit-ledger.local/c1\n7\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\ntimestamp 2026-11-21T06:00:00.000Z\n');
    expect(parseCheckpointText(text)).toEqual(c);
  });

  it('round-trips the rfc3161 extension line (docs/ledger-format.md §19), and refuses one that names a later tree or no SHA-256', () => {
    const sha256 = 'ab'.repeat(32);
    const c = { origin: 'audit-ledger.local/c1', treeSize: 7, rootHash: EMPTY_ROOT, timestamp: '2026-11-21T06:00:00.000Z', timestampToken: { treeSize: 5, sha256 } };
    const text = checkpointText(c);
    expect(text.endsWith(`timestamp 2026-11-21T06:00:00.000Z\nrfc3161 5 ${sha256}\n`)).toBe(true);
    expect(parseCheckpointText(text)).toEqual(c);
    const base = 'o\n7\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\ntimestamp 2026-11-21T06:00:00.000Z\n';
    expect(() => parseCheckpointText(`${base}rfc3161 8 ${sha256}\n`)).toThrow(/rfc3161/);
    expect(() => parseCheckpointText(`${base}rfc3161 5 ${sha256.toUpperCase()}\n`)).toThrow(/rfc3161/);
    expect(() => parseCheckpointText(`${base}rfc3161 05 ${sha256}\n`)).toThrow(/rfc3161/);
    // An extension line it does not know is ignored, as C2SP says.
    expect(parseCheckpointText(`${base}future-extension 1\n`).treeSize).toBe(7);
  });

  it('refuses malformed sizes and roots', () => {
    expect(() => parseCheckpointText('o\n-1\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n')).toThrow(/tree size/);
    expect(() => parseCheckpointText('o\n01\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n')).toThrow(/tree size/);
    expect(() => parseCheckpointText('o\n1\nAAAA\n')).toThrow(/root hash/);
    expect(() => parseCheckpointText('o\n1\n')).toThrow(/malformed/);
  });
});
