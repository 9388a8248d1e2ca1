// The C2SP tlog-tiles API (issue 32, part 3), read by a client written here from the specs alone
// (c2sp.org/tlog-tiles, c2sp.org/tlog-checkpoint, c2sp.org/signed-note, RFC 6962 §2.1), with
// node:crypto and nothing of this project's code: it verifies the checkpoint's Ed25519
// signature with the published verifier key, downloads every tile and entry bundle the
// checkpoint's tree has, rebuilds the tree and compares the root, checks every higher tile
// against the tiles below it and every bundle entry against its leaf, and hashes the entries'
// canonical bytes to the bundle's. Over real HTTP, on both stores; then the public prefix, what
// a bad path gets, and the caching headers.
import { createHash, createPublicKey, verify } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS } from './helpers/env.js';
import { problem, startTestApp, type TestApp } from './helpers/app.js';
import { ingestBatch } from './helpers/ledger.js';

// ---- The independent client: from the specs, not from our code ----

const sha256 = (...parts: Uint8Array[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
};
const leafHash = (data: Uint8Array) => sha256(Uint8Array.of(0), data);
const nodeHash = (l: Uint8Array, r: Uint8Array) => sha256(Uint8Array.of(1), l, r);
/** RFC 6962 §2.1 MTH over leaf hashes. */
function mth(leaves: Uint8Array[]): Uint8Array {
  if (leaves.length === 0) return sha256();
  if (leaves.length === 1) return leaves[0] as Uint8Array;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return nodeHash(mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}
/** tlog-tiles: index 1234067 → x001/x234/067. */
function indexPath(n: number): string {
  const parts = [String(n % 1000).padStart(3, '0')];
  for (n = Math.floor(n / 1000); n > 0; n = Math.floor(n / 1000)) parts.unshift(`x${String(n % 1000).padStart(3, '0')}`);
  return parts.join('/');
}
const tileUrl = (level: number | 'entries', n: number, w: number) => `tile/${level}/${indexPath(n)}${w < 256 ? `.p/${w}` : ''}`;

interface Verified {
  origin: string;
  size: number;
  root: Uint8Array;
}

/** signed-note + tlog-checkpoint: the note verified with vkey `name+hash+base64(0x01 ‖ key)`, then its body parsed. */
function verifyCheckpoint(note: string, vkey: string): Verified {
  const [name, hashHex, keyB64] = [vkey.slice(0, vkey.indexOf('+')), vkey.split('+')[1] as string, vkey.split('+').slice(2).join('+')];
  const keyBytes = Buffer.from(keyB64, 'base64');
  expect(keyBytes[0]).toBe(0x01); // Ed25519
  const raw = keyBytes.subarray(1);
  const keyId = sha256(new TextEncoder().encode(`${name}\n`), keyBytes).subarray(0, 4);
  expect(Buffer.from(keyId).toString('hex')).toBe(hashHex);
  const split = note.indexOf('\n\n');
  const text = note.slice(0, split + 1);
  const sigLines = note.slice(split + 2).split('\n').filter((l) => l !== '');
  const pub = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(raw).toString('base64url') }, format: 'jwk' });
  const mine = sigLines.filter((l) => l.startsWith(`\u2014 ${name} `)).map((l) => Buffer.from(l.slice(`\u2014 ${name} `.length), 'base64')).filter((s) => s.subarray(0, 4).equals(keyId));
  expect(mine.length).toBe(1);
  expect(verify(null, Buffer.from(text), pub, (mine[0] as Buffer).subarray(4))).toBe(true);
  const [origin, size, root] = text.split('\n');
  expect(size).toMatch(/^(0|[1-9]\d*)$/);
  return { origin: origin as string, size: Number(size), root: new Uint8Array(Buffer.from(root as string, 'base64')) };
}

/** Everything a tiles client checks, given the prefix URL, a fetch with its credentials, and the log's verifier key. */
async function checkLog(prefix: string, headers: Record<string, string>, vkey: string, opts: { bodies: boolean }) {
  const get = async (p: string) => {
    const res = await fetch(`${prefix}/${p}`, { headers });
    expect(res.status, `${p}: ${res.status}`).toBe(200);
    return { res, bytes: new Uint8Array(await res.arrayBuffer()) };
  };
  const cp = await get('checkpoint');
  expect(cp.res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
  const { size, root, origin } = verifyCheckpoint(new TextDecoder().decode(cp.bytes), vkey);
  // Level 0: the leaf hashes, and the entry bundles that hash to them.
  const leaves: Uint8Array[] = [];
  for (let n = 0; n * 256 < size; n++) {
    const w = Math.min(256, size - n * 256);
    const tile = await get(tileUrl(0, n, w));
    expect(tile.res.headers.get('content-type')).toBe('application/octet-stream');
    expect(tile.res.headers.get('cache-control')).toMatch(/immutable/);
    expect(tile.bytes.length).toBe(32 * w);
    const hashes = Array.from({ length: w }, (_, i) => tile.bytes.slice(i * 32, i * 32 + 32));
    leaves.push(...hashes);
    const bundle = (await get(tileUrl('entries', n, w))).bytes;
    const entries: Uint8Array[] = [];
    for (let at = 0; at < bundle.length; ) {
      const len = ((bundle[at] as number) << 8) | (bundle[at + 1] as number);
      entries.push(bundle.slice(at + 2, at + 2 + len));
      at += 2 + len;
    }
    expect(entries.length).toBe(w);
    entries.forEach((e, i) => expect(Buffer.from(leafHash(e)).equals(Buffer.from(hashes[i] as Uint8Array)), `entry ${n * 256 + i}`).toBe(true));
    if (opts.bodies) {
      const lines = new TextDecoder().decode((await get(`entries/${indexPath(n)}${w < 256 ? `.p/${w}` : ''}`)).bytes).split('\n');
      expect(lines.pop()).toBe('');
      expect(lines.length).toBe(w);
      lines.forEach((l, i) => expect(Buffer.from(sha256(new TextEncoder().encode(l))).equals(Buffer.from(entries[i] as Uint8Array)), `body ${n * 256 + i}`).toBe(true));
    }
  }
  expect(leaves.length).toBe(size);
  expect(Buffer.from(mth(leaves)).toString('hex'), 'the rebuilt tree\'s root').toBe(Buffer.from(root).toString('hex'));
  // Higher levels: each hash is the MTH of a full tile below; the rightmost tiles are partial.
  let below = leaves;
  let tiles = 0;
  for (let level = 1; Math.floor(size / 256 ** level) > 0; level++) {
    const count = Math.floor(size / 256 ** level);
    const up: Uint8Array[] = [];
    for (let n = 0; n * 256 < count; n++) {
      const w = Math.min(256, count - n * 256);
      const tile = (await get(tileUrl(level, n, w))).bytes;
      expect(tile.length).toBe(32 * w);
      for (let i = 0; i < w; i++) {
        const h = tile.slice(i * 32, i * 32 + 32);
        const expected = mth(below.slice((n * 256 + i) * 256, (n * 256 + i + 1) * 256));
        expect(Buffer.from(h).equals(Buffer.from(expected)), `tile ${level}/${n} hash ${i}`).toBe(true);
        up.push(h);
      }
      tiles++;
    }
    below = up;
  }
  return { size, origin, upperTiles: tiles };
}

describe.each(STORE_KINDS)('the C2SP tlog-tiles API on %s', (kind) => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await startTestApp(kind, { env: { CHECKPOINT_INTERVAL_MS: '0' } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/api/v1`;
  });
  afterAll(async () => t.close());

  async function company(entries: number) {
    const acct = await t.newAccount();
    const key = (await t.createKey(acct.token, 1_000_000)).key;
    for (let done = 0; done < entries; done += 250) {
      const res = await ingestBatch(t, key, Array.from({ length: Math.min(250, entries - done) }, (_, i) => ({ event_type: 'tool.called', data: { i: done + i, note: 'caf\u00e9 \u2603', n: 1.5e-7 } })));
      expect(res.statusCode, res.body).toBe(200);
    }
    const keys = (await t.inject({ method: 'GET', url: '/api/v1/integrity/keys' })).json().items as Array<{ active: boolean; note_verifier_key: string }>;
    const vkey = (keys.find((k) => k.active) as { note_verifier_key: string }).note_verifier_key;
    return { acct, key, vkey, admin: { authorization: `Bearer ${acct.token}` } };
  }

  it('an independent client rebuilds a 600-entry tree from its tiles, checks the signed checkpoint, every entry bundle and the entries\' canonical bytes', async () => {
    const { acct, key, vkey } = await company(600);
    const got = await checkLog(`${base}/tlog`, { 'x-api-key': key }, vkey, { bodies: true });
    expect(got).toMatchObject({ size: 600, upperTiles: 1 });
    expect(got.origin.endsWith(`/${acct.companyId}`)).toBe(true);
    // The checkpoint is the latest one, mutable: cached for seconds; private behind a credential.
    const cp = await fetch(`${base}/tlog/checkpoint`, { headers: { 'x-api-key': key } });
    expect(cp.headers.get('cache-control')).toBe('private, max-age=2');
    expect(await cp.text()).toBe(await (await fetch(`${base}/integrity/checkpoint`, { headers: { 'x-api-key': key, accept: 'text/plain' } })).text());
    // A later checkpoint's tree still serves the earlier partial tiles (a client may hold an older checkpoint) and the tiles it completed.
    expect((await ingestBatch(t, key, Array.from({ length: 30 }, (_, i) => ({ event_type: 'e', data: { i } })))).statusCode).toBe(200);
    for (const p of ['tile/0/002.p/88', 'tile/0/002.p/118', 'tile/1/000.p/2', 'tile/entries/002.p/88']) expect((await fetch(`${base}/tlog/${p}`, { headers: { 'x-api-key': key } })).status, p).toBe(200);
    expect((await checkLog(`${base}/tlog`, { 'x-api-key': key }, vkey, { bodies: false })).size).toBe(630);
  });

  it('published by an admin, the hashes are readable without a credential (never the content); a trail entry says who published it', async () => {
    const { acct, key, vkey, admin } = await company(300);
    const pub = `${base}/public/tlog/${acct.companyId}`;
    // Not published: the public prefix is a 404, as for a company that does not exist.
    expect((await fetch(`${pub}/checkpoint`)).status).toBe(404);
    expect((await fetch(`${pub}/tile/0/000`)).status).toBe(404);
    expect((await t.inject({ method: 'GET', url: '/api/v1/tlog/settings', headers: { 'x-api-key': key } })).json()).toEqual({ public: false, prefix: '/api/v1/tlog', public_prefix: `/api/v1/public/tlog/${acct.companyId}` });
    // Only an admin publishes (an API key cannot).
    expect((await t.inject({ method: 'PUT', url: '/api/v1/tlog/settings', headers: { 'x-api-key': key }, payload: { public: true } })).statusCode).toBe(403);
    problem(await t.inject({ method: 'PUT', url: '/api/v1/tlog/settings', headers: admin, payload: { public: 'yes' } }), 400, 'validation_failed');
    const set = await t.inject({ method: 'PUT', url: '/api/v1/tlog/settings', headers: admin, payload: { public: true } });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().public).toBe(true);
    const got = await checkLog(pub, {}, vkey, { bodies: false });
    expect(got.size).toBeGreaterThanOrEqual(300); // the trail entry of publishing is in the tree too
    expect((await fetch(`${pub}/checkpoint`)).headers.get('cache-control')).toBe('public, max-age=2');
    expect((await fetch(`${pub}/tile/0/000`)).headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    // Content never leaves without a credential: there is no public entries resource.
    expect((await fetch(`${pub}/entries/000`)).status).toBe(404);
    expect((await fetch(`${base}/tlog/entries/000`)).status).toBe(401);
    const trail = (await t.inject({ method: 'GET', url: '/api/v1/logs?event_type=tlog.published', headers: { 'x-api-key': key } })).json().items as Array<{ data: { actor: { email: string } } }>;
    expect(trail).toHaveLength(1);
    // Unpublished again: 404 at once.
    expect((await t.inject({ method: 'PUT', url: '/api/v1/tlog/settings', headers: admin, payload: { public: false } })).json().public).toBe(false);
    expect((await fetch(`${pub}/checkpoint`)).status).toBe(404);
    expect((await t.inject({ method: 'GET', url: '/api/v1/logs?event_type=tlog.unpublished', headers: { 'x-api-key': key } })).json().items).toHaveLength(1);
    // Another company's credentials never read this log.
    const other = await company(1);
    expect((await fetch(`${base}/tlog/checkpoint`, { headers: { 'x-api-key': other.key } })).status).toBe(200);
    expect(await (await fetch(`${base}/tlog/checkpoint`, { headers: { 'x-api-key': other.key } })).text()).not.toContain(acct.companyId);
  });

  it('a path the spec does not write, or a tile the signed tree does not have, is a 404 problem; before the first checkpoint there is nothing', async () => {
    const empty = await t.newAccount();
    const emptyKey = (await t.createKey(empty.token, 1000)).key;
    problem(await t.inject({ method: 'GET', url: '/api/v1/tlog/checkpoint', headers: { 'x-api-key': emptyKey } }), 404, 'not_found');
    problem(await t.inject({ method: 'GET', url: '/api/v1/tlog/tile/0/000.p/1', headers: { 'x-api-key': emptyKey } }), 404, 'not_found');
    const { key } = await company(300);
    const headers = { 'x-api-key': key };
    for (const bad of ['0/0', '0/0000', '00/000', '0/x000/001', '0/000.p/0', '0/000.p/256', '0/000.p/01', '64/000', '-1/000', '0/000/', '0/x001', 'entries/1', 'x/000', '0/000.p/']) {
      problem(await t.inject({ method: 'GET', url: `/api/v1/tlog/tile/${bad}`, headers }), 404, 'not_found');
    }
    // The tree has 300 leaves: a full tile 0, a partial tile 1 of width 44, a partial level-1 tile of width 1.
    problem(await t.inject({ method: 'GET', url: '/api/v1/tlog/tile/0/001', headers }), 404, 'not_found');
    problem(await t.inject({ method: 'GET', url: '/api/v1/tlog/tile/0/001.p/45', headers }), 404, 'not_found');
    problem(await t.inject({ method: 'GET', url: '/api/v1/tlog/tile/0/002.p/1', headers }), 404, 'not_found');
    problem(await t.inject({ method: 'GET', url: '/api/v1/tlog/tile/1/000', headers }), 404, 'not_found');
    problem(await t.inject({ method: 'GET', url: '/api/v1/tlog/tile/1/000.p/2', headers }), 404, 'not_found');
    problem(await t.inject({ method: 'GET', url: '/api/v1/tlog/tile/2/000.p/1', headers }), 404, 'not_found');
    expect((await t.inject({ method: 'GET', url: '/api/v1/tlog/tile/1/000.p/1', headers })).statusCode).toBe(200);
    expect((await t.inject({ method: 'GET', url: '/api/v1/tlog/tile/0/001.p/44', headers })).rawPayload.length).toBe(44 * 32);
    problem(await t.inject({ method: 'GET', url: '/api/v1/tlog/entries/001.p/45', headers }), 404, 'not_found');
    problem(await t.inject({ method: 'GET', url: '/api/v1/tlog/entries/1', headers }), 404, 'not_found');
    problem(await t.inject({ method: 'GET', url: `/api/v1/public/tlog/not-a-uuid/checkpoint` }), 400, 'validation_failed');
  });
});
