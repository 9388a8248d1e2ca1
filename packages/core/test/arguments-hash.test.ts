// The arguments hash (core/src/arguments-hash.ts) against its vectors, computed independently by
// the Python JCS of docs/ledger-format.md §6: key order, number forms, escapes, non-BMP keys.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { argumentsHash } from '../src/arguments-hash.js';
import { canonicalJson, type Json } from '../src/json.js';

const { cases } = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', 'testdata', 'arguments-hash.json'), 'utf8')) as { cases: Array<{ input: string; canonical: string; sha256: string }> };

describe('the arguments hash', () => {
  it('has vectors for key order, numbers, escapes and non-BMP keys', () => expect(cases.length).toBeGreaterThanOrEqual(10));
  it.each(cases.map((c) => [c.input, c] as const))('%s', (_name, c) => {
    const args = JSON.parse(c.input) as Json;
    expect(canonicalJson(args)).toBe(c.canonical);
    expect(argumentsHash(args)).toBe(c.sha256);
  });
});
