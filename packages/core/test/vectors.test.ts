// The published vectors in testdata/, good and bad, against whichever crypto implementation
// '#crypto' resolves to. The root vitest config runs this file twice: as `core` (Node, node:crypto)
// and as `core-browser-crypto` (#crypto aliased to the pure-JS implementation browsers get), so
// both must agree with the vectors, and so with each other.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as core from '../src/index.js';
import * as nodeSeam from '../src/crypto/node.js';
import * as browserSeam from '../src/crypto/browser.js';
import type { CryptoSeam } from '../src/crypto/types.js';

const data = <T>(name: string): T => JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', 'testdata', name), 'utf8')) as T;
const { fromHex, toHex } = core;

// Type check: both implementations provide the whole seam.
const _seams: CryptoSeam[] = [nodeSeam, browserSeam];

it(`runs against ${process.env.AUDIT_LEDGER_CRYPTO === 'browser' ? 'the browser' : 'the Node'} crypto implementation`, () => {
  expect(core.CRYPTO_IMPLEMENTATION).toBe(process.env.AUDIT_LEDGER_CRYPTO === 'browser' ? browserSeam.CRYPTO_IMPLEMENTATION : nodeSeam.CRYPTO_IMPLEMENTATION);
  expect(_seams).toHaveLength(2);
});

describe('RFC 8032 Ed25519', () => {
  const v = data<{ good: Array<{ name: string; public_key: string; message: string; signature: string }>; bad: Array<{ why: string; public_key: string; message: string; signature: string }> }>('rfc8032-ed25519.json');
  it.each(v.good)('$name verifies', (t) => {
    expect(core.verifyEd25519(fromHex(t.public_key), fromHex(t.message), fromHex(t.signature))).toBe(true);
  });
  it.each(v.bad)('refuses: $why', (t) => {
    expect(core.verifyEd25519(fromHex(t.public_key), fromHex(t.message), fromHex(t.signature))).toBe(false);
  });
  it('key_id is SHA-256 of the raw key, 16 hex digits', () => {
    expect(core.keyIdOf(fromHex(v.good[0]?.public_key as string))).toBe(core.sha256Hex(fromHex(v.good[0]?.public_key as string)).slice(0, 16));
  });
});

describe('Ed25519 edge cases ("Taming the many EdDSAs"): the verdicts ledger-format §4 fixes', () => {
  const rfc = data<{ good: Array<{ public_key: string; message: string; signature: string }>; bad: Array<{ why: string; public_key: string; message: string; signature: string }> }>('rfc8032-ed25519.json');
  const v = data<{ cases: Array<{ index: number; why: string; public_key: string; message: string; signature: string; valid: boolean }> }>('ed25519-edge-cases.json');
  it.each(v.cases)('vector $index ($why): valid is $valid', (t) => {
    expect(core.verifyEd25519(fromHex(t.public_key), fromHex(t.message), fromHex(t.signature))).toBe(t.valid);
  });
  // On Node, every library the process can use gives the same verdicts, RFC 8032's included.
  const names = process.env.AUDIT_LEDGER_CRYPTO === 'browser' ? [] : Object.keys(nodeSeam.ED25519_EQUATIONS);
  it.runIf(names.length > 0)(`on Node, each library gives them: ${names.join(', ')}`, () => {
    // libsodium is an optional dependency; the workspace installs it, so CI runs both.
    expect(names).toEqual(['openssl', 'libsodium']);
    for (const name of names) {
      const verify = nodeSeam.ed25519VerifierWith(name);
      for (const t of v.cases) expect([name, t.index, verify(fromHex(t.public_key), fromHex(t.message), fromHex(t.signature))]).toEqual([name, t.index, t.valid]);
      for (const t of rfc.good) expect([name, verify(fromHex(t.public_key), fromHex(t.message), fromHex(t.signature))]).toEqual([name, true]);
      for (const t of rfc.bad) expect([name, t.why, verify(fromHex(t.public_key), fromHex(t.message), fromHex(t.signature))]).toEqual([name, t.why, false]);
    }
  });
  it('the pure-JS seam browsers get gives the same verdicts (before the cofactorless check of browser.ts, @noble/curves accepted vectors 4 and 5)', () => {
    for (const t of v.cases) expect([t.index, browserSeam.verifyEd25519(fromHex(t.public_key), fromHex(t.message), fromHex(t.signature))]).toEqual([t.index, t.valid]);
    for (const t of rfc.good) expect(browserSeam.verifyEd25519(fromHex(t.public_key), fromHex(t.message), fromHex(t.signature))).toBe(true);
  });
});

describe('RFC 8785 canonical JSON', () => {
  const v = data<{ good: Array<{ name: string; input: string; canonical: string }> }>('rfc8785-jcs.json');
  it.each(v.good)('$name', (t) => {
    expect(core.canonicalJson(JSON.parse(t.input))).toBe(t.canonical);
  });
  it('refuses values with no JSON form, with a code', () => {
    expect(() => core.canonicalJson(undefined)).toThrow(expect.objectContaining({ name: 'CoreError', code: 'not_canonicalizable' }));
    expect(() => core.canonicalJson([Number.NaN])).toThrow(expect.objectContaining({ code: 'not_canonicalizable' }));
  });
});

describe('SHA-256 and the strict encodings', () => {
  const v = data<{ hex: { good: string[][]; bad: string[] }; base64: { good: string[][]; bad: string[] } }>('encodings.json');
  it('hashes as FIPS 180-4 says ("abc", and the empty string)', () => {
    expect(core.sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(toHex(core.sha256(new Uint8Array(0)))).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(core.sha256Hex('€')).toBe(core.sha256Hex(core.utf8('€')));
  });
  it.each(v.hex.good)('hex %j', (text, hex) => {
    expect(toHex(fromHex(text as string))).toBe(hex);
  });
  it.each(v.hex.bad)('refuses hex %j', (text) => {
    expect(() => fromHex(text)).toThrow(expect.objectContaining({ code: 'malformed_encoding' }));
  });
  it.each(v.base64.good)('base64 %j', (text, hex) => {
    expect(toHex(core.fromBase64(text as string))).toBe(hex);
    expect(core.toBase64(fromHex(hex as string))).toBe(text);
  });
  it.each(v.base64.bad)('refuses base64 %j', (text) => {
    expect(() => core.fromBase64(text)).toThrow(expect.objectContaining({ code: 'malformed_encoding' }));
  });
  it('compares bytes', () => {
    expect(core.bytesEqual(fromHex('00ff'), fromHex('00ff'))).toBe(true);
    expect(core.bytesEqual(fromHex('00ff'), fromHex('00fe'))).toBe(false);
    expect(core.bytesEqual(fromHex('00'), fromHex('0000'))).toBe(false);
  });
});

describe('C2SP signed note (Go sumdb/note vector)', () => {
  const v = data<{ verifier_key: string; name: string; key_id: string; public_key: string; text: string; note: string; bad: Array<{ why: string; note: string; name: string }> }>('c2sp-signed-note.json');
  const raw = fromHex(v.public_key);
  it('derives the published key ID and verifier key', () => {
    expect(toHex(core.noteKeyId(v.name, raw))).toBe(v.key_id);
    expect(core.verifierKey(v.name, raw)).toBe(v.verifier_key);
  });
  it('verifies the published note', () => {
    expect(core.noteSignedBy(v.note, v.name, raw)).toBe(true);
    expect(core.parseNote(v.note).text).toBe(v.text);
  });
  it.each(v.bad)('refuses: $why', (t) => {
    expect(core.noteSignedBy(t.note, t.name, raw)).toBe(false);
  });
  it('names what is malformed with a code', () => {
    expect(() => core.parseNote(`${v.text}\n\u2014 PeterNeumann AAAA\n`)).toThrow(expect.objectContaining({ code: 'malformed_note' }));
    expect(() => core.parseCheckpointText('o\n01\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n')).toThrow(expect.objectContaining({ code: 'malformed_checkpoint' }));
  });
  it('round-trips a checkpoint body', () => {
    const c = { origin: 'audit-ledger.local/c1', treeSize: 7, rootHash: core.EMPTY_ROOT, timestamp: '2026-11-21T06:00:00.000Z' };
    const text = core.checkpointText(c);
    expect(text).toBe('audit-ledger.local/c1\n7\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\ntimestamp 2026-11-21T06:00:00.000Z\n');
    expect(core.parseCheckpointText(text)).toEqual(c);
  });
});

describe('public keys in the forms an auditor is handed', () => {
  const v = data<{ good: Array<{ public_key: string }> }>('rfc8032-ed25519.json');
  const raw = fromHex(v.good[0]?.public_key as string);
  it('PEM, verifier key and key JSON all give the same raw key', () => {
    const pem = core.publicKeyPem(raw);
    expect(pem).toBe('-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\n-----END PUBLIC KEY-----\n');
    for (const text of [pem, core.verifierKey('x', raw), JSON.stringify({ items: [{ public_key: core.toBase64(raw) }] })]) {
      expect(core.parseTrustedKeys(text).map((k) => toHex(k.raw))).toEqual([toHex(raw)]);
    }
  });
  it('refuses what is not an Ed25519 key, with a code', () => {
    expect(() => core.parseTrustedKeys('hello')).toThrow(expect.objectContaining({ code: 'malformed_key' }));
    expect(() => core.rawKeyFromBase64('AAAA')).toThrow(expect.objectContaining({ code: 'malformed_key' }));
  });
});
