// The service's signing keys: public, so anyone can verify without an account; and their
// online rotation, an operator action on the whole service (LEDGER_OPERATOR_TOKEN), never a
// tenant's. A rotation retires the old key for every process at once (store/keys.ts) and
// records a statement in which the old key endorses the new (core/key-transition.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { staticBearerToken } from '../auth/static-token.js';
import { ApiError, problemResponses } from '../http/problems.js';
import type { Services } from '../services.js';

const KeyView = Type.Object({
  key_id: Type.String({ description: 'First 16 hex characters of SHA-256 over the raw public key' }),
  algorithm: Type.String(),
  public_key: Type.String({ description: 'Raw 32-byte Ed25519 public key, base64' }),
  public_key_pem: Type.String({ description: 'The same key as SPKI PEM' }),
  active_from: Type.String({ format: 'date-time' }),
  active_to: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  active: Type.Boolean(),
  custody: Type.Union([Type.Literal('file'), Type.Literal('store'), Type.Literal('pkcs11')], {
    description: "Where the private half is kept, as the operator configured it: `file` (a key file on the service's disk), `store` (made by an online rotation, sealed with the secrets key), `pkcs11` (a hardware token or HSM it never leaves). The operator's statement, not something a signature proves (docs/transparency.md, \"Key custody\").",
  }),
  note_verifier_key: Type.String({ description: 'The key as a C2SP verifier key (`<LEDGER_ORIGIN>+<key hash>+<base64>`), for checkpoint notes' }),
});

export const KeyTransitionView = Type.Object(
  {
    old_key_id: Type.String(),
    old_public_key: Type.String({ description: 'Raw Ed25519 public key, base64' }),
    new_key_id: Type.String(),
    new_public_key: Type.String({ description: 'Raw Ed25519 public key, base64' }),
    created_at: Type.String({ format: 'date-time', description: 'When the new key became active and the old one was retired' }),
    statement: Type.String({ description: 'The signed text (docs/ledger-format.md §12)' }),
    old_signature: Type.String({ description: 'Ed25519 signature of the statement by the old key, base64' }),
    new_signature: Type.String({ description: 'Ed25519 signature of the statement by the new key, base64' }),
  },
  { description: 'The old key endorsing the new one' },
);

/** The services these routes use. */
export type KeyServices = Pick<Services, 'config' | 'keys'>;

export function keyRoutes(ctx: KeyServices): FastifyPluginAsyncTypebox {
  const checkOperator = ctx.config.operatorToken === undefined ? undefined : staticBearerToken(ctx.config.operatorToken, 'LEDGER_OPERATOR_TOKEN', 'operator');
  return async (app) => {
    app.get(
      '/integrity/keys',
      {
        schema: {
          tags: ['integrity'],
          operationId: 'listSigningKeys',
          summary: 'Public keys that sign ledger entries, current and retired, and the statements that endorse each new key',
          description: 'Public, so anyone can verify signatures without an account. An auditor who pinned the first key follows `transitions` to the current one.',
          response: { 200: Type.Object({ items: Type.Array(KeyView), transitions: Type.Array(KeyTransitionView) }), ...problemResponses(400) },
        },
      },
      async () => ctx.keys.published(),
    );

    app.post(
      '/integrity/keys/rotate',
      {
        schema: {
          tags: ['integrity'],
          operationId: 'rotateSigningKey',
          summary: 'Rotate the signing key, online (operator)',
          description:
            'Needs `Authorization: Bearer <LEDGER_OPERATOR_TOKEN>`. Makes a new key active for every process on the store at once: no entry or checkpoint is committed under the old key after this answers. The old key endorses the new one in a signed statement, listed by GET /integrity/keys and carried in evidence bundles.',
          body: Type.Object(
              {
                pkcs11_key_label: Type.Optional(
                  Type.String({
                    minLength: 1,
                    maxLength: 128,
                    pattern: '^[\\x21-\\x7e]+$',
                    description: "Rotate to the Ed25519 key pair of this label in the service's PKCS#11 token (LEDGER_PKCS11_MODULE): taken as it is when the token has it, made inside the token (not extractable) when not. Without it, the new key is made by the service and sealed in the store.",
                  }),
                ),
              },
              { additionalProperties: false },
          ),
          response: { 200: KeyTransitionView, ...problemResponses(400, 401, 403, 409) },
        },
        // The operator token first, before anything in the request is looked at; no body is an empty one.
        preValidation: async (request) => {
          if (!checkOperator) throw new ApiError(403, 'forbidden', 'Operator actions are off: set LEDGER_OPERATOR_TOKEN on the service to allow key rotation');
          checkOperator(request);
          request.body ??= {};
        },
      },
      async (request) => {
        const label = (request.body as { pkcs11_key_label?: string } | undefined)?.pkcs11_key_label;
        return ctx.keys.rotate(label === undefined ? {} : { pkcs11KeyLabel: label });
      },
    );
  };
}
