// User management for admins (issue 16): invite, list, change role, disable, reset password; and a
// user's own password change. The service is users/admin.ts, which records every change in the
// ledger under the reserved source audit-ledger/admin.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { principalOf } from '../auth/authenticate.js';
import { ADMIN, OWN_ACCOUNT } from '../auth/rules.js';
import { problemResponses } from '../http/problems.js';
import { ServiceId, Uuid } from '../kernel/shapes.js';
import type { Services } from '../services.js';
import { type Actor, userView } from '../users/admin.js';

const Role = Type.Union(
  [Type.Literal('admin'), Type.Literal('reviewer'), Type.Literal('auditor')],
  { description: 'admin: everything. reviewer: reads, replays, human review. auditor: read-only (logs, verification, proofs, exports, replays, integrity).' },
);
const UserSchema = Type.Object({
  user_id: Uuid,
  email: Type.String(),
  role: Role,
  created_at: Type.String({ format: 'date-time' }),
  disabled: Type.Boolean(),
  disabled_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  password_change_required: Type.Boolean({ description: 'True until the user replaces a one-time password' }),
});
const OneTimePassword = Type.String({ description: 'Shown once: give it to the user, who must replace it at first login (POST /auth/password)' });

export type UserServices = Pick<Services, 'userAdmin'>;

export function userRoutes(ctx: UserServices): FastifyPluginAsyncTypebox {
  const actorOf = (request: Parameters<typeof principalOf>[0]): Actor => {
    const p = principalOf(request);
    if (p.kind !== 'user') throw new Error('user routes take a user credential');
    return { userId: p.userId, email: p.email };
  };
  return async (app) => {
    app.get(
      '/users',
      {
        config: ADMIN,
        schema: {
          tags: ['users'],
          operationId: 'listUsers',
          summary: "The company's users and their roles",
          description: 'Every user of the company, oldest first, with role, whether disabled, and whether a one-time password is still to be replaced. Never a password or its hash.',
          response: { 200: Type.Object({ items: Type.Array(UserSchema) }), ...problemResponses(401, 403, 429) },
        },
      },
      async (request) => ({ items: (await ctx.userAdmin.list(principalOf(request).companyId)).map(userView) }),
    );

    app.post(
      '/users',
      {
        config: ADMIN,
        schema: {
          tags: ['users'],
          operationId: 'createUser',
          summary: 'Invite a user into the company',
          description:
            'Without `password`, the answer carries a one-time password (shown once) that the user must replace at first login. Recorded in the ledger as a `user.created` entry (source audit-ledger/admin). 409 `email_taken` when the email is in use.',
          body: Type.Object(
            {
              email: Type.String({ minLength: 3, maxLength: 320 }),
              role: Role,
              password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'Set it yourself (at least 12 characters); omit to get a one-time password' })),
            },
            { additionalProperties: false },
          ),
          response: { 201: Type.Object({ user: UserSchema, one_time_password: Type.Union([OneTimePassword, Type.Null()]) }), ...problemResponses(400, 401, 403, 409, 429, 503) },
        },
      },
      async (request, reply) => {
        const { user, oneTimePassword } = await ctx.userAdmin.create(principalOf(request).companyId, actorOf(request), request.body);
        return reply.code(201).send({ user: userView(user), one_time_password: oneTimePassword });
      },
    );

    app.patch(
      '/users/:user_id',
      {
        config: ADMIN,
        schema: {
          tags: ['users'],
          operationId: 'updateUser',
          summary: "Change a user's role, or disable or re-enable them",
          description:
            "A disabled user cannot log in and every token of theirs stops working at once. Each change is recorded in the ledger (`user.role_changed`, `user.disabled`, `user.enabled`). 409 `last_admin` when it would leave the company without an active admin.",
          params: Type.Object({ user_id: ServiceId }),
          body: Type.Object({ role: Type.Optional(Role), disabled: Type.Optional(Type.Boolean()) }, { additionalProperties: false, minProperties: 1 }),
          response: { 200: UserSchema, ...problemResponses(400, 401, 403, 404, 409, 429, 503) },
        },
      },
      async (request) => userView(await ctx.userAdmin.update(principalOf(request).companyId, actorOf(request), request.params.user_id, request.body)),
    );

    app.post(
      '/users/:user_id/password-reset',
      {
        config: ADMIN,
        schema: {
          tags: ['users'],
          operationId: 'resetUserPassword',
          summary: "Reset a user's password to a one-time one",
          description: "The user's tokens stop working; the one-time password (shown once) must be replaced at first login. Recorded as `user.password_reset`.",
          params: Type.Object({ user_id: ServiceId }),
          response: { 200: Type.Object({ user_id: Uuid, one_time_password: OneTimePassword }), ...problemResponses(400, 401, 403, 404, 429, 503) },
        },
      },
      async (request) => ({
        user_id: request.params.user_id,
        one_time_password: await ctx.userAdmin.resetPassword(principalOf(request).companyId, actorOf(request), request.params.user_id),
      }),
    );

    app.post(
      '/auth/password',
      {
        config: OWN_ACCOUNT,
        schema: {
          tags: ['auth'],
          operationId: 'changePassword',
          summary: 'Set your own password',
          description:
            'Replaces a one-time password (required before anything else after an invitation or a reset) or your own. Your other tokens stop working; this one keeps working. Recorded as `user.password_changed`.',
          body: Type.Object(
            { current_password: Type.String({ minLength: 1, maxLength: 1024 }), new_password: Type.String({ minLength: 1, maxLength: 1024, description: 'At least 12 characters' }) },
            { additionalProperties: false },
          ),
          response: { 204: Type.Null(), ...problemResponses(400, 401, 429, 503) },
        },
      },
      async (request, reply) => {
        const p = principalOf(request);
        if (p.kind !== 'user') throw new Error('OWN_ACCOUNT takes a user credential');
        await ctx.userAdmin.changeOwnPassword(p.companyId, p.userId, p.tokenHash, request.body.current_password, request.body.new_password);
        return reply.code(204).send(null);
      },
    );
  };
}
