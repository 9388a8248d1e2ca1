// The stream carriers (core STREAM_CARRIERS) against their data file: every way a received line
// may carry a stream message is read back to the same message, and lines that use another member
// or key carry none.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { STREAM_CARRIERS, streamMessageOf } from '../src/stream.js';

const file = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', 'testdata', 'stream-carriers.json'), 'utf8')) as { message: unknown; cases: Array<{ carrier: string; line: string; none?: boolean }> };

describe('the stream carriers', () => {
  it('names the OCSF member and the CEF key the data file uses', () => {
    expect(STREAM_CARRIERS).toEqual({ ocsfUnmapped: 'audit_ledger', cefExtension: 'auditLedger' });
  });
  it.each(file.cases.map((c) => [c.carrier, c] as const))('%s', (_name, c) => {
    expect(streamMessageOf(c.line)).toEqual(c.none ? null : file.message);
  });
});
