// Format version 3's links rule and its check (docs/ledger-format.md §16), from the data file of
// the doc's cases: the links are rebuilt from the content, kept through erasure, and a changed
// or malformed links field is a content mismatch.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { contentCommitment, contentState, contentText } from '../src/content.js';
import { canonicalJson, type JsonObject } from '../src/json.js';
import { linksTextOfDataText, skeletonLinks } from '../src/links.js';
import { recordContentState } from '../src/record.js';

const { cases } = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', 'testdata', 'links.json'), 'utf8')) as { cases: Array<{ data: JsonObject; links: JsonObject | null }> };

describe('the links rule', () => {
  it.each(cases.map((c) => [JSON.stringify(c.data), c] as const))('%s', (_name, c) => {
    expect(skeletonLinks(c.data)).toEqual(c.links);
    expect(linksTextOfDataText(canonicalJson(c.data))).toBe(c.links === null ? 'null' : canonicalJson(c.links));
  });
});

describe('a version 3 entry’s links against its content', () => {
  const salt = new Uint8Array(32).fill(9);
  const data: JsonObject = { decision_id: 'd-1', inputs: ['e1', { source_id: 's', note: 'personal' }], note: 'personal' };
  const links = skeletonLinks(data);
  const entry = { format_version: 3, data, extra: null, content_salt: Buffer.from(salt).toString('base64'), content_commitment: contentCommitment(salt, contentText(canonicalJson(data), null)), links };
  const record = { ...entry, data: canonicalJson(data), links: canonicalJson(links as JsonObject) };

  it('intact when they are the links of the content, erased when the content is gone', () => {
    expect(contentState(entry)).toEqual({ state: 'intact' });
    expect(recordContentState(record as never)).toEqual({ state: 'intact' });
    expect(contentState({ ...entry, data: null, content_salt: null })).toEqual({ state: 'erased' });
    expect(recordContentState({ ...record, data: null, content_salt: null } as never)).toEqual({ state: 'erased' });
  });

  it.each([
    ['a link removed', { decision_id: 'd-1' }],
    ['a link added', { ...links, event_id: 'x' }],
    ['no links for content that names some', null],
  ])('%s is a content mismatch', (_name, changed) => {
    expect(contentState({ ...entry, links: changed as JsonObject | null }).state).toBe('mismatch');
    expect(recordContentState({ ...record, links: changed === null ? null : canonicalJson(changed as JsonObject) } as never).state).toBe('mismatch');
  });

  it('links that are not an object are a mismatch, erased or not', () => {
    expect(recordContentState({ ...record, data: null, content_salt: null, links: '"e1"' } as never)).toMatchObject({ state: 'mismatch', detail: expect.stringContaining('neither null nor a JSON object') });
    expect(recordContentState({ ...record, links: '{not json' } as never)).toMatchObject({ state: 'mismatch', detail: 'data or links is not JSON' });
  });

  it('versions 1 and 2 have no links to check', () => {
    expect(contentState({ ...entry, format_version: 2, links: { anything: 1 } })).toEqual({ state: 'intact' });
  });
});
