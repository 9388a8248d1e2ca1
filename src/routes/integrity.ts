// Integrity endpoints: public keys, signed checkpoints, consistency proofs.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import Type from 'typebox';
import { principalOf } from '../auth/authenticate.js';
import { verifierKey } from '../core/checkpoint.js';
import { ApiError, problemResponses } from '../http/problems.js';
import { publicKeyFromRaw } from '../core/signature.js';
import { checkpointView, consistencyView } from '../ledger/proofs.js';
import type { AppContext } from '../app.js';

export const CheckpointSchema = Type.Object(
  {
    origin: Type.String({ description: '`<LEDGER_ORIGIN>/<company_id>`' }),
    tree_size: Type.Integer({ description: 'Number of entries the tree covers (seq 0 … tree_size − 1)' }),
    root_hash: Type.String({ description: 'RFC 6962 root, lowercase hex (base64 inside the note)' }),
    timestamp: Type.String({ format: 'date-time' }),
    key_id: Type.String({ description: 'The signing key, as listed by /integrity/keys' }),
    note: Type.String({ description: 'The C2SP signed note, exactly as signed' }),
  },
  { description: 'A signed checkpoint (C2SP tlog-checkpoint)' },
);

const readAuth = { auth: { accept: ['api_key' as const, 'user' as const] } };

/** True when the client asked for text/plain ahead of (or without) JSON. */
function wantsText(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  const t = accept.indexOf('text/plain');
  const j = accept.indexOf('application/json');
  return t >= 0 && (j < 0 || t < j);
}

const KeyView = Type.Object({
  key_id: Type.String({ description: 'First 16 hex characters of SHA-256 over the raw public key' }),
  algorithm: Type.String(),
  public_key: Type.String({ description: 'Raw 32-byte Ed25519 public key, base64' }),
  public_key_pem: Type.String({ description: 'The same key as SPKI PEM' }),
  active_from: Type.String({ format: 'date-time' }),
  active_to: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  active: Type.Boolean(),
  note_verifier_key: Type.String({ description: 'The key as a C2SP verifier key (`<LEDGER_ORIGIN>+<key hash>+<base64>`), for checkpoint notes' }),
});

export function integrityRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/integrity/keys',
      {
        schema: {
          tags: ['integrity'],
          summary: 'Public keys that sign ledger entries, current and retired',
          description: 'Public, so anyone can verify signatures without an account.',
          response: { 200: Type.Object({ items: Type.Array(KeyView) }), ...problemResponses(400) },
        },
      },
      async () => ({
        items: (await ctx.store.listSigningKeys()).map((k) => ({
          ...k,
          public_key_pem: publicKeyFromRaw(Buffer.from(k.public_key, 'base64')).export({ type: 'spki', format: 'pem' }).toString(),
          active: k.active_to === null,
          note_verifier_key: verifierKey(ctx.config.ledgerOrigin, Buffer.from(k.public_key, 'base64')),
        })),
      }),
    );

    /** The latest checkpoint's size: proofs are only served up to what has been signed. */
    const signedSize = async (companyId: string) => (await ctx.store.latestCheckpoint(companyId))?.tree_size ?? 0;

    app.get(
      '/integrity/checkpoint',
      {
        config: readAuth,
        schema: {
          tags: ['integrity'],
          summary: "The company's latest signed checkpoint, or the one at tree_size",
          description:
            'JSON by default; with `Accept: text/plain` the signed note itself. Keep the checkpoints you receive: any later one must be consistent with them (GET /integrity/consistency).',
          querystring: Type.Object({ tree_size: Type.Optional(Type.Integer({ minimum: 1 })) }, { additionalProperties: false }),
          produces: ['application/json', 'text/plain'],
          response: { 200: CheckpointSchema, ...problemResponses(400, 401, 404, 429) },
        },
      },
      async (request, reply) => {
        const { companyId } = principalOf(request);
        const size = request.query.tree_size;
        const row = size === undefined ? await ctx.store.latestCheckpoint(companyId) : await ctx.store.getCheckpoint(companyId, size);
        if (!row) throw new ApiError(404, 'not_found', size === undefined ? 'No checkpoint yet: the ledger has no entries' : `No checkpoint was signed at tree size ${size}`);
        if (wantsText(request)) return reply.type('text/plain; charset=utf-8').send(row.note as never);
        return checkpointView(row);
      },
    );

    app.get(
      '/integrity/consistency',
      {
        config: readAuth,
        schema: {
          tags: ['integrity'],
          summary: 'Consistency proof between two tree sizes (RFC 9162 §2.1.4)',
          description: 'Proves the tree of size `second` extends the tree of size `first`. Both must be at most the latest checkpoint\'s size.',
          querystring: Type.Object({ first: Type.Integer({ minimum: 1 }), second: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
          response: {
            200: Type.Object({
              first: Type.Integer(),
              second: Type.Integer(),
              first_root: Type.String(),
              second_root: Type.String(),
              proof: Type.Array(Type.String(), { description: 'Hex hashes, in RFC 9162 order' }),
              first_checkpoint: Type.Union([CheckpointSchema, Type.Null()], { description: 'The checkpoint signed at size first, if one was' }),
              second_checkpoint: Type.Union([CheckpointSchema, Type.Null()]),
            }),
            ...problemResponses(400, 401, 429),
          },
        },
      },
      async (request) => {
        const { companyId } = principalOf(request);
        const { first, second } = request.query;
        const signed = await signedSize(companyId);
        if (first > second) throw new ApiError(400, 'tree_size_out_of_range', `first (${first}) must not exceed second (${second})`, { errors: [{ field: '/querystring/first', message: 'must be at most second' }] });
        if (second > signed) {
          throw new ApiError(400, 'tree_size_out_of_range', `second (${second}) is beyond the latest checkpoint (tree size ${signed})`, {
            errors: [{ field: '/querystring/second', message: `must be at most ${signed}` }],
          });
        }
        const [view, c1, c2] = await Promise.all([
          consistencyView(ctx.store, companyId, first, second),
          ctx.store.getCheckpoint(companyId, first),
          ctx.store.getCheckpoint(companyId, second),
        ]);
        return { ...view, first_checkpoint: c1 ? checkpointView(c1) : null, second_checkpoint: c2 ? checkpointView(c2) : null };
      },
    );
  };
}
