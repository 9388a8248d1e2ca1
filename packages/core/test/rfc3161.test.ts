// RFC 3161 (rfc3161.ts, der.ts) against a token OpenSSL made (testdata/rfc3161: `openssl ts -reply`
// answering the request of docs/ledger-format.md §19 for the checkpoint note of §11).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkpointImprint, OID_SHA256, parseTimeStampResponse, parseTimeStampToken, timestampProblems, timeStampRequest, toHex } from '../src/index.js';

const DIR = path.join(import.meta.dirname, '..', 'testdata', 'rfc3161');
const NOTE = 'audit-ledger.local/5b0c3a52-8d5e-4a47-9f0e-2a3c1d9b7e10\n2\niZO2AOn6c5XRMCs+uHK2qL+7gb4ALM93TV2AuwjEm8o=\ntimestamp 2026-03-01T12:00:01.000Z\n\n\u2014 audit-ledger.local IY8P1r+iYPti6NsNmsKLm2inRYdJqmEplpOd76Gb3kpE1T56Ei3d0/BzTu0sWonqM3OHuLK+bHXzAIlAewtWQOANIQo=\n';
const token = new Uint8Array(fs.readFileSync(path.join(DIR, 'token.der')));

describe('RFC 3161 timestamps', () => {
  it('builds the request OpenSSL answered, byte for byte', () => {
    expect(toHex(timeStampRequest(checkpointImprint(NOTE), Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8])))).toBe(toHex(new Uint8Array(fs.readFileSync(path.join(DIR, 'request.der')))));
  });

  it('reads OpenSSL\'s token: the imprint of the note, our nonce, its time, the signed attributes and the certificate', () => {
    const t = parseTimeStampToken(token);
    expect(t).toMatchObject({ policy: '1.2.3.4.1', hashAlgorithm: OID_SHA256, imprint: toHex(checkpointImprint(NOTE)), nonce: '0102030405060708', digestAlgorithm: OID_SHA256, signatureAlgorithm: '1.2.840.10045.4.3.2' });
    expect(t.genTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(t.certificates.length).toBeGreaterThanOrEqual(1);
    expect(t.signedAttributes[0]).toBe(0x31);
    expect(timestampProblems(t, NOTE)).toEqual([]);
  });

  it('says when the token is for another note, or its TSTInfo was changed', () => {
    const t = parseTimeStampToken(token);
    expect(timestampProblems(t, NOTE.replace('\n2\n', '\n3\n'))).toEqual(['the token timestamps something else: its imprint is not SHA-256 of the checkpoint note']);
    const changed = { ...t, eContent: Uint8Array.from(t.eContent, (b, i) => (i === t.eContent.length - 1 ? b ^ 1 : b)) };
    expect(timestampProblems(changed, NOTE)).toEqual(["the token's signed attributes do not digest its TSTInfo"]);
  });

  it('refuses what is not a token or a response, and a truncated one', () => {
    expect(() => parseTimeStampToken(token.subarray(0, token.length - 1))).toThrow(/DER/);
    expect(() => parseTimeStampToken(Uint8Array.from([0x30, 0x00]))).toThrow();
    expect(() => parseTimeStampResponse(Uint8Array.from([0x30, 0x80, 0x00, 0x00]))).toThrow(/indefinite/);
    // A refusal (status 2, rejection) with the TSA's words.
    const refused = Uint8Array.from([0x30, 0x0c, 0x30, 0x0a, 0x02, 0x01, 0x02, 0x30, 0x05, 0x0c, 0x03, 0x62, 0x61, 0x64]);
    expect(parseTimeStampResponse(refused)).toEqual({ granted: false, status: 2, text: 'bad' });
  });
});
