// Integrity endpoints. For now the public keys; checkpoints, proofs and reports come with the verifiable-log issue.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { problemResponses } from '../http/problems.js';
import { publicKeyFromRaw } from '../core/signature.js';
import type { AppContext } from '../app.js';

const KeyView = Type.Object({
  key_id: Type.String({ description: 'First 16 hex characters of SHA-256 over the raw public key' }),
  algorithm: Type.String(),
  public_key: Type.String({ description: 'Raw 32-byte Ed25519 public key, base64' }),
  public_key_pem: Type.String({ description: 'The same key as SPKI PEM' }),
  active_from: Type.String({ format: 'date-time' }),
  active_to: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  active: Type.Boolean(),
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
        })),
      }),
    );
  };
}
