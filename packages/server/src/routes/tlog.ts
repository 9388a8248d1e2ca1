// The company's log as a C2SP tlog-tiles log (https://c2sp.org/tlog-tiles; docs/transparency.md):
// `<prefix>/checkpoint`, `<prefix>/tile/<L>/<N>[.p/<W>]`, `<prefix>/tile/entries/<N>[.p/<W>]`,
// with the spec's content types and caching. The prefix is /api/v1/tlog for the company's own
// credentials, and /api/v1/public/tlog/{company_id} once an admin published the log (hashes only:
// the entries' canonical bytes, `<prefix>/entries/<N>[.p/<W>]`, never leave without a credential).
import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import Type from 'typebox';
import { parseTilePath, type TileRef } from '@audit-ledger/core';
import { principalOf } from '../auth/authenticate.js';
import { ADMIN, READ } from '../auth/rules.js';
import { actorOf } from '../auth/authenticate.js';
import { NotFoundError } from '../kernel/domain-error.js';
import { problemResponses } from '../http/problems.js';
import { Uuid } from '../kernel/shapes.js';
import type { Tlog } from '../integrity/tlog.js';
import type { Services } from '../services.js';

/** The services these routes use. */
export type TlogServices = Pick<Services, 'tlog'>;

/** Immutable: a tile or bundle's bytes never change (RFC 8246). */
const IMMUTABLE = 'max-age=31536000, immutable';
/** The checkpoint moves: "its headers SHOULD prevent caching beyond a few seconds". */
const MUTABLE = 'max-age=2';

const Binary = Type.Unsafe<Uint8Array>({ type: 'string', format: 'binary' });
const Text = Type.Unsafe<string>({ type: 'string' });
const TilePathParam = Type.Object({ '*': Type.String({ maxLength: 64, description: 'What follows `tile/`: `<L>/<N>[.p/<W>]` or `entries/<N>[.p/<W>]`, N as zero-padded 3-digit elements (`x001/x234/067`)' }) });
const EntriesPathParam = Type.Object({ '*': Type.String({ maxLength: 64, description: '`<N>[.p/<W>]`, as an entry bundle\'s' }) });
const PublicParams = Type.Object({ company_id: Uuid });

const TlogSettings = Type.Object({
  public: Type.Boolean({ description: 'Whether the checkpoint, tiles and entry bundles (hashes, never content) are readable without a credential under public_prefix' }),
  prefix: Type.String({ description: 'The tlog-tiles prefix for this company\'s credentials' }),
  public_prefix: Type.String({ description: 'The prefix anyone may read once the log is public' }),
});

function tileRef(path: string, entries: boolean): TileRef {
  const t = parseTilePath(entries ? `entries/${path}` : path);
  if (t === null) throw new NotFoundError(`No such tile: ${entries ? 'entries/' : 'tile/'}${path} (c2sp.org/tlog-tiles: tile/<L>/<N>[.p/<W>], N as x001/x234/067)`);
  return t;
}

/** The spec's headers: a content type, and caching as long as the resource lives, private unless the log is public. */
function send(reply: FastifyReply, type: string, cache: string, isPublic: boolean, body: Uint8Array | string | Readable) {
  return reply
    .type(type)
    .header('cache-control', `${isPublic ? 'public' : 'private'}, ${cache}`)
    .header('x-content-type-options', 'nosniff')
    .send(typeof body === 'string' || body instanceof Readable ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength));
}

async function serveTile(tlog: Tlog, companyId: string, path: string, reply: FastifyReply, isPublic: boolean) {
  const t = tileRef(path, false);
  const bytes = t.level === 'entries' ? await tlog.entryBundle(companyId, t) : await tlog.tile(companyId, { ...t, level: t.level });
  return send(reply, 'application/octet-stream', IMMUTABLE, isPublic, bytes);
}

export function tlogRoutes(ctx: TlogServices): FastifyPluginAsyncTypebox {
  const { tlog } = ctx;
  return async (app) => {
    app.get(
      '/tlog/checkpoint',
      {
        config: READ,
        schema: {
          tags: ['tlog'],
          operationId: 'getTlogCheckpoint',
          summary: 'C2SP tlog-tiles: the latest checkpoint as a signed note',
          description: 'The latest checkpoint (docs/ledger-format.md §8), the witnesses\' cosignatures appended as further signature lines. `text/plain; charset=utf-8`, cached for 2 s at most. Tiles are served for its tree size.',
          produces: ['text/plain'],
          response: { 200: Text, ...problemResponses(401, 404, 429) },
        },
      },
      async (request, reply) => send(reply, 'text/plain; charset=utf-8', MUTABLE, false, await tlog.checkpoint(principalOf(request).companyId)),
    );

    app.get(
      '/tlog/tile/*',
      {
        config: READ,
        schema: {
          tags: ['tlog'],
          operationId: 'getTlogTile',
          summary: 'C2SP tlog-tiles: a Merkle tile or an entry bundle',
          description:
            '`tile/<L>/<N>[.p/<W>]`: the 32-byte hashes of the subtrees of height 8·L under tile N (level 0: the leaf hashes). `tile/entries/<N>[.p/<W>]`: the leaves\' data, each the 32 raw bytes of an entry hash (the ledger\'s leaf, §7) behind a big-endian uint16 length. A full tile once complete, a partial one (`.p/<W>`) of any width the latest checkpoint\'s tree has; 404 otherwise. `application/octet-stream`, immutable.',
          params: TilePathParam,
          produces: ['application/octet-stream'],
          response: { 200: Binary, ...problemResponses(401, 404, 429) },
        },
      },
      async (request, reply) => serveTile(tlog, principalOf(request).companyId, request.params['*'], reply, false),
    );

    app.get(
      '/tlog/entries/*',
      {
        config: READ,
        schema: {
          tags: ['tlog'],
          operationId: 'getTlogEntryBodies',
          summary: 'The entries of an entry bundle, as the canonical bytes their hashes cover',
          description:
            'For entry bundle `<N>[.p/<W>]`: each entry\'s hashed body as RFC 8785 canonical JSON (exactly what its hash covers, docs/ledger-format.md §3), one per line, in seq order: SHA-256 of line i is entry i\'s hash, the i-th entry of `tile/entries/<N>`. `application/x-ndjson`, immutable (an erased entry\'s hashed body never held its content). With a credential only: content never leaves without one.',
          params: EntriesPathParam,
          produces: ['application/x-ndjson'],
          response: { 200: Text, ...problemResponses(401, 404, 429) },
        },
      },
      async (request, reply) => {
        const companyId = principalOf(request).companyId;
        const t = tileRef(request.params['*'], true);
        const body = tlog.entryBodies(companyId, t);
        // The first chunk is read before the answer starts, so a missing tile is a 404, not a broken 200.
        const first = await body.next();
        async function* rest() {
          if (!first.done) yield first.value;
          yield* body;
        }
        return send(reply, 'application/x-ndjson', IMMUTABLE, false, Readable.from(rest()));
      },
    );

    app.get(
      '/tlog/settings',
      {
        config: READ,
        schema: {
          tags: ['tlog'],
          operationId: 'getTlogSettings',
          summary: 'Whether the company\'s tlog-tiles log is public, and its prefixes',
          description: 'The prefix to give a tlog-tiles client with this company\'s credentials, and the one anyone may read once an admin published the log (PUT /tlog/settings): checkpoint, tiles and entry bundles, never content.',
          response: { 200: TlogSettings, ...problemResponses(401, 429) },
        },
      },
      async (request) => {
        const companyId = principalOf(request).companyId;
        return { public: await tlog.isPublic(companyId), prefix: '/api/v1/tlog', public_prefix: `/api/v1/public/tlog/${companyId}` };
      },
    );

    app.put(
      '/tlog/settings',
      {
        config: ADMIN,
        schema: {
          tags: ['tlog'],
          operationId: 'setTlogSettings',
          summary: 'Publish the company\'s log (checkpoint, tiles, entry bundles: hashes, never content) for monitors and witnesses, or stop',
          description: 'A change is a `tlog.published` or `tlog.unpublished` entry in the administrators\' trail. Published, anyone with the public prefix can follow the tree\'s growth and check its consistency; entry contents stay behind credentials.',
          body: Type.Object({ public: Type.Boolean() }, { additionalProperties: false }),
          response: { 200: TlogSettings, ...problemResponses(400, 401, 403, 429) },
        },
      },
      async (request) => {
        const p = principalOf(request);
        const isPublic = await tlog.setPublic(p.companyId, request.body.public, actorOf(p));
        return { public: isPublic, prefix: '/api/v1/tlog', public_prefix: `/api/v1/public/tlog/${p.companyId}` };
      },
    );

    app.get(
      '/public/tlog/:company_id/checkpoint',
      {
        schema: {
          tags: ['tlog'],
          operationId: 'getPublicTlogCheckpoint',
          summary: 'C2SP tlog-tiles, public: the latest checkpoint of a published log',
          description: 'As GET /tlog/checkpoint, without a credential, once the company\'s admin published the log (PUT /tlog/settings); 404 otherwise.',
          params: PublicParams,
          produces: ['text/plain'],
          response: { 200: Text, ...problemResponses(400, 404) },
        },
      },
      async (request, reply) => {
        await tlog.requirePublic(request.params.company_id);
        return send(reply, 'text/plain; charset=utf-8', MUTABLE, true, await tlog.checkpoint(request.params.company_id));
      },
    );

    app.get(
      '/public/tlog/:company_id/tile/*',
      {
        schema: {
          tags: ['tlog'],
          operationId: 'getPublicTlogTile',
          summary: 'C2SP tlog-tiles, public: a Merkle tile or an entry bundle of a published log',
          description: 'As GET /tlog/tile/*, without a credential, once the company\'s admin published the log; 404 otherwise. Entry bundles hold entry hashes, never content.',
          params: Type.Intersect([PublicParams, TilePathParam]),
          produces: ['application/octet-stream'],
          response: { 200: Binary, ...problemResponses(400, 404) },
        },
      },
      async (request, reply) => {
        await tlog.requirePublic(request.params.company_id);
        return serveTile(tlog, request.params.company_id, request.params['*'], reply, true);
      },
    );
  };
}
