// The agent key register (docs/ledger-format.md §20): agents' own Ed25519 public keys, which an
// admin registers, replaces and revokes (each an administrators' trail entry); anyone of the
// company may read it, agents too (the SDK verifies their signatures against it).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import type { FastifyRequest } from 'fastify';
import { principalOf } from '../auth/authenticate.js';
import { ADMIN, READ } from '../auth/rules.js';
import { agentKeyView } from '../agents/agent-keys.js';
import { problemResponses } from '../http/problems.js';
import { Instant } from '../kernel/shapes.js';
import type { Services } from '../services.js';

const KeyId = Type.String({ pattern: '^[0-9a-f]{16}$', description: 'First 16 hex characters of SHA-256 over the raw public key' });
const AgentId = Type.String({ minLength: 1, maxLength: 200, description: "The agent's agent_id, as its events name it" });

const AgentKeyView = Type.Object({
  key_id: KeyId,
  agent_id: Type.String(),
  public_key: Type.String({ description: 'Raw 32-byte Ed25519 public key, base64' }),
  active_from: Type.String({ format: 'date-time' }),
  active_to: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'Revoked or replaced from then on: events it signed dated later do not verify; null while active' }),
  active: Type.Boolean(),
  ended_reason: Type.Union([Type.String(), Type.Null()], { description: 'The revocation\'s reason, or "replaced by <key_id>"' }),
  registered_at: Type.String({ format: 'date-time' }),
  registered_by: Type.String({ description: "The admin's user id" }),
});

/** The services these routes use. */
export type AgentKeyServices = Pick<Services, 'agentKeys'>;

/** ADMIN routes take users only. */
function adminOf(request: FastifyRequest) {
  const p = principalOf(request);
  if (p.kind !== 'user') throw new Error('an ADMIN route reached without a user');
  return p;
}

export function agentKeyRoutes(ctx: AgentKeyServices): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/agent-keys',
      {
        config: ADMIN,
        schema: {
          tags: ['agent keys'],
          operationId: 'registerAgentKey',
          summary: "Register an agent's own signing key",
          description:
            "From then on the agent may sign its events (agent_key_id and agent_signature: docs/ledger-format.md §20); the service refuses a signature that does not hold. The key's holder proves it asks for the registration (`proof`, a signature naming this company), so nobody registers a key they do not hold. With `replaces`, the agent's previous key stops as this one starts (a rotation). Recorded as `agent_key.registered` in the administrators' trail.",
          body: Type.Object(
            {
              agent_id: AgentId,
              public_key: Type.String({ minLength: 44, maxLength: 44, description: 'Raw 32-byte Ed25519 public key, base64 (the SDK: agentPublicKey(privateKeyPem))' }),
              proof: Type.String({ minLength: 88, maxLength: 88, description: 'Proof of possession: base64 of the Ed25519 signature by this key over "audit-ledger/v1/agent-key-proof\\n" and the canonical JSON of {agent_id, company_id, public_key} (docs/ledger-format.md §20; the SDK: agentKeyRegistration(signer, companyId))' }),
              replaces: Type.Optional(KeyId),
            },
            { additionalProperties: false },
          ),
          response: { 201: AgentKeyView, ...problemResponses(400, 401, 403, 404, 409) },
        },
      },
      async (request, reply) => reply.code(201).send(agentKeyView(await ctx.agentKeys.register(adminOf(request), request.body))),
    );

    app.get(
      '/agent-keys',
      {
        config: READ,
        schema: {
          tags: ['agent keys'],
          operationId: 'listAgentKeys',
          summary: "The company's agent key register",
          description: 'Every agent key, active, replaced and revoked, with its period: what an entry\'s agent signature is checked against.',
          querystring: Type.Object({ agent_id: Type.Optional(AgentId) }, { additionalProperties: false }),
          response: { 200: Type.Object({ items: Type.Array(AgentKeyView) }), ...problemResponses(400, 401, 403) },
        },
      },
      async (request) => ({ items: (await ctx.agentKeys.list(principalOf(request).companyId, request.query.agent_id)).map(agentKeyView) }),
    );

    app.post(
      '/agent-keys/:key_id/revoke',
      {
        config: ADMIN,
        schema: {
          tags: ['agent keys'],
          operationId: 'revokeAgentKey',
          summary: 'Revoke an agent key',
          description:
            "The key stops at `effective_at` (default now; earlier when it was compromised before it was found out, never before it began): events it signs are refused from then on, and entries it signed dated at or after that instant report `invalid` in verification. Recorded as `agent_key.revoked`. A key that stopped already is 409.",
          params: Type.Object({ key_id: KeyId }),
          body: Type.Object(
            {
              reason: Type.String({ minLength: 1, maxLength: 1000, pattern: '\\S' }),
              effective_at: Type.Optional(Instant('From when the key is no longer trusted, at the latest now')),
            },
            { additionalProperties: false },
          ),
          response: { 200: AgentKeyView, ...problemResponses(400, 401, 403, 404, 409) },
        },
      },
      async (request) => agentKeyView(await ctx.agentKeys.revoke(adminOf(request), request.params.key_id, request.body)),
    );
  };
}
