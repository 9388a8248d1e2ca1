// Approvals bound to the exact action, standing approvals and reviewer teams over HTTP
// (docs/governance.md): schemas and thin handlers over governance/approvals.ts. An agent (the API
// key) requests; a reviewer or admin decides, named by their session or bearer token, never by
// the body.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { principalOf } from '../auth/authenticate.js';
import { ADMIN, DECIDE, READ, REVIEW } from '../auth/rules.js';
import { actorOf } from '../auth/authenticate.js';
import { idCursor, page } from '../http/cursor.js';
import { appendFailure } from '../http/ledger-problems.js';
import { problemResponses } from '../http/problems.js';
import { ApprovalSchema, MAX_EXPIRES_SECONDS, Risk, Status, TeamLimitsSchema, TeamName as Name, TeamSchema } from '../kernel/governance-shapes.js';
import { component, Instant, NullableString, ServiceId, Uuid } from '../kernel/shapes.js';
import { deciderOf } from '../auth/decider.js';
import type { StandingInput } from '../governance/approvals.js';
import type { Services } from '../services.js';

export type ApprovalServices = Pick<Services, 'approvals' | 'teams'>;

const Text = (max: number, description: string) => Type.String({ minLength: 1, maxLength: max, pattern: '\\S', description });
export const RequestBody = Type.Object(
  {
    action: Text(200, 'The action asked for, e.g. refund.issue'),
    tool: Type.Optional(Text(200, 'The tool that will run it')),
    arguments: Type.Optional(Type.Unknown({ description: 'The exact arguments (any JSON); their canonical SHA-256 is what an execution must match. Default {}' })),
    trace_id: Type.Optional(Uuid),
    decision_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    agent_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    risk: Type.Optional(Risk),
    reason: Type.Optional(Text(4000, 'Why the agent wants to do it')),
    policy: Type.Optional(Type.Object({ policy_id: Type.String({ minLength: 1, maxLength: 200 }), version: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647 })) }, { additionalProperties: false, description: 'The registered policy (and version) that asked for approval' })),
    expires_in_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_EXPIRES_SECONDS, description: 'Default 3600: undecided, it expires; approved, it must be used before' })),
    assignee: Type.Optional(Name),
    max_uses: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Executions it may cover (default 1: single use)' })),
  },
  { additionalProperties: false },
);

const IdParams = Type.Object({ id: ServiceId });
const ReasonBody = (required: boolean) => Type.Object(required ? { reason: Text(4000, 'Why') } : { reason: Type.Optional(Text(4000, 'Why')) }, { additionalProperties: false });

const ListQuery = Type.Object(
  {
    status: Type.Optional(Status),
    team: Type.Optional(Name),
    trace_id: Type.Optional(Uuid),
    decision_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
const Page = Type.Object({ items: Type.Array(ApprovalSchema), next_cursor: Type.Union([Type.String(), Type.Null()]) }, component('ApprovalPage'));

const StandingBody = Type.Object(
  {
    action: Text(200, 'The action covered'),
    tool: Type.Optional(Text(200, 'Or the tool covered')),
    agent_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only this agent (envelope agent_id); any agent when absent' })),
    constraints: Type.Optional(Type.Object({}, { additionalProperties: true, maxProperties: 50, description: 'A JSON Schema the execution\'s arguments must satisfy, e.g. {"type":"object","properties":{"amount":{"type":"number","maximum":100}},"required":["amount"]}' })),
    valid_from: Type.Optional(Instant('From (default now)')),
    valid_until: Instant('Until'),
    max_uses: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    reason: Text(4000, 'Why it is granted'),
    risk: Type.Optional(Risk),
  },
  { additionalProperties: false },
);

const TeamBody = Type.Object(
  {
    members: Type.Array(Type.String({ minLength: 3, maxLength: 320, format: 'email' }), { maxItems: 500 }),
    sla_minutes: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 525_600 }), Type.Null()])),
    escalation_target: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 320 }), Type.Null()])),
    match_actions: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 100, description: 'Actions routed here: exact names, or prefixes ending in *' })),
    match_risks: Type.Optional(Type.Array(Risk, { maxItems: 4 })),
    limits: Type.Optional(TeamLimitsSchema),
  },
  { additionalProperties: false },
);

export function approvalRoutes(ctx: ApprovalServices): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/approvals',
      {
        config: REVIEW,
        schema: {
          tags: ['approvals'],
          operationId: 'requestApproval',
          summary: 'Ask for approval of one action with its exact arguments',
          description:
            'Appends `approval.requested` (201 means committed) and fires the `approval.requested` webhook. The answer carries `arguments_hash`, the RFC 8785 SHA-256 an execution naming this approval must match. The request goes to the team named by `assignee`, or the first team whose rule takes its action or risk.',
          body: RequestBody,
          response: { 201: ApprovalSchema, ...problemResponses(400, 401, 403, 429, 503) },
        },
      },
      async (request, reply) => {
        const p = principalOf(request);
        const view = await ctx.approvals.request(p.companyId, actorOf(p), request.body).catch((err: unknown) => appendFailure(err, () => '/body'));
        return reply.code(201).send(view);
      },
    );

    app.get(
      '/approvals',
      {
        config: READ,
        schema: {
          tags: ['approvals'],
          operationId: 'listApprovals', description: 'Requests (not standing approvals), newest first. `status=pending` hides those past their expiry; `team` matches the team a request was routed to or escalated to.',
          summary: "Approval requests, newest first: the reviewers' queue with status=pending",
          querystring: ListQuery,
          response: { 200: Page, ...problemResponses(400, 401, 429) },
        },
      },
      async (request) => {
        const q = request.query;
        const rows = await ctx.approvals.list(principalOf(request).companyId, { kind: 'request', status: q.status, team: q.team, trace_id: q.trace_id, decision_id: q.decision_id, before: idCursor(q.cursor), limit: q.limit });
        return page(rows, q.limit, (last) => ({ id: last.id }), (v) => v);
      },
    );

    app.get(
      '/approvals/:id',
      {
        config: READ,
        schema: {
          tags: ['approvals'],
          operationId: 'getApproval',
          summary: 'One approval; `wait` long-polls until it is decided',
          description: 'Answers at once, or with `wait` (seconds, at most 60) once the request is decided, expired or the wait ends, whichever comes first.',
          params: IdParams,
          querystring: Type.Object({ wait: Type.Optional(Type.Integer({ minimum: 0, maximum: 60 })) }, { additionalProperties: false }),
          response: { 200: ApprovalSchema, ...problemResponses(400, 401, 404, 429) },
        },
      },
      async (request) => {
        const companyId = principalOf(request).companyId;
        const wait = request.query.wait ?? 0;
        if (wait === 0) return await ctx.approvals.get(companyId, request.params.id);
        const gone = new AbortController();
        request.raw.once('close', () => gone.abort());
        return await ctx.approvals.waitFor(companyId, request.params.id, wait, gone.signal);
      },
    );

    for (const [verb, summary, required] of [
      ['approve', 'Approve a request (a reviewer or admin; never the requester; critical needs two different approvers)', false],
      ['reject', 'Reject a request, with a reason', true],
    ] as const) {
      app.post(
        `/approvals/:id/${verb}`,
        {
          config: DECIDE,
          schema: {
            tags: ['approvals'],
            operationId: `${verb}Approval`,
            summary,
            description: `Appends \`approval.${verb === 'approve' ? 'approved' : 'rejected'}\` naming the user of the session (200 means committed). The final decision fires the \`approval.decided\` webhook and wakes long-polls.`,
            params: IdParams,
            body: ReasonBody(required),
            response: { 200: ApprovalSchema, ...problemResponses(400, 401, 403, 404, 409, 429, 503) },
          },
        },
        async (request) => {
          const companyId = principalOf(request).companyId;
          const decider = deciderOf(request);
          const body = request.body as { reason?: string };
          const run = verb === 'approve' ? ctx.approvals.approve(companyId, decider, request.params.id, body.reason) : ctx.approvals.reject(companyId, decider, request.params.id, body.reason as string);
          return await run.catch((err: unknown) => appendFailure(err, () => '/body'));
        },
      );
    }

    app.post(
      '/approvals/:id/escalate',
      {
        config: DECIDE,
        schema: {
          tags: ['approvals'],
          operationId: 'escalateApproval', description: "Appends `approval.escalated` naming the user of the session and fires the `approval.escalated` webhook. Only someone who may decide the request now (an admin, or a member of the team or the person it is assigned to) may hand it on. `to` must be one of the company's reviewer teams (its SLA starts again) or a reviewer or admin of the company by email; from then on only they (or an admin) decide it. Anything else is a 400.",
          summary: 'Hand a pending request to another team or person',
          params: IdParams,
          body: Type.Object({ to: Type.String({ minLength: 1, maxLength: 320, description: "A reviewer team's name, or a reviewer's or admin's email" }), reason: Text(4000, 'Why') }, { additionalProperties: false }),
          response: { 200: ApprovalSchema, ...problemResponses(400, 401, 403, 404, 409, 429, 503) },
        },
      },
      async (request) => {
        const p = principalOf(request);
        return ctx.approvals.escalate(p.companyId, deciderOf(request), request.params.id, request.body.to, request.body.reason).catch((err: unknown) => appendFailure(err, () => '/body'));
      },
    );

    app.post(
      '/approvals/:id/check',
      {
        config: REVIEW,
        schema: {
          tags: ['approvals'],
          operationId: 'checkApproval',
          summary: 'Would these arguments run under this approval? (recorded, consumes nothing)',
          description: 'An agent gates itself before acting: the answer says ok, or why not (mismatch, not_approved, expired, consumed). The check is appended as `approval.precheck`; no use of the approval is taken.',
          params: IdParams,
          body: Type.Object({ arguments: Type.Unknown({ description: 'The arguments about to be used' }), action: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), agent_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) }, { additionalProperties: false }),
          response: {
            200: Type.Object({ approval_id: ServiceId, result: Type.String(), detail: NullableString, arguments_hash: Type.String(), approved_arguments_hash: NullableString, log_id: Type.String() }),
            ...problemResponses(400, 401, 403, 404, 429, 503),
          },
        },
      },
      async (request) => {
        const p = principalOf(request);
        return await ctx.approvals.precheck(p.companyId, actorOf(p), request.params.id, request.body).catch((err: unknown) => appendFailure(err, () => '/body'));
      },
    );

    app.post(
      '/approvals/sweep',
      {
        config: ADMIN,
        // No body at all is the same as {}.
        preValidation: async (request) => {
          request.body ??= {};
        },
        schema: {
          body: Type.Object({}, { additionalProperties: false }),
          tags: ['approvals'],
          operationId: 'runApprovalSweep',
          summary: 'Escalate requests past their SLA and record expired ones now',
          description: "The service does this every 15 s for every company by itself; this runs it at once for the admin's company, recorded as `approval.sweep_run`. Each escalation and expiry is recorded once, even with several processes.",
          response: { 200: Type.Object({ escalated: Type.Integer(), expired: Type.Integer() }), ...problemResponses(400, 401, 403, 429, 503) },
        },
      },
      async (request) => {
        const p = principalOf(request);
        return await ctx.approvals.sweepCompany(p.companyId, actorOf(p));
      },
    );

    // ---- standing approvals ----

    app.post(
      '/approvals/standing',
      {
        config: ADMIN,
        schema: {
          tags: ['approvals'],
          operationId: 'grantStandingApproval',
          summary: 'Grant a scoped pre-approval (an action, an agent, argument constraints, a window, uses)',
          description: 'Appends `approval.standing_granted`. An execution naming its id is ok (basis standing) when its action, agent and arguments are within scope, in the window, with uses left.',
          body: StandingBody,
          response: { 201: ApprovalSchema, ...problemResponses(400, 401, 403, 429, 503) },
        },
      },
      async (request, reply) => {
        const p = principalOf(request);
        const view = await ctx.approvals.grantStanding(p.companyId, actorOf(p), request.body as StandingInput).catch((err: unknown) => appendFailure(err, () => '/body'));
        return reply.code(201).send(view);
      },
    );

    app.get(
      '/approvals/standing',
      {
        config: READ,
        schema: {
          tags: ['approvals'],
          operationId: 'listStandingApprovals', description: 'Standing approvals an admin granted, newest first, with their scope, window and uses so far.',
          summary: 'Standing approvals, newest first',
          querystring: Type.Object({ status: Type.Optional(Status), limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }), cursor: Type.Optional(Type.String({ maxLength: 200 })) }, { additionalProperties: false }),
          response: { 200: Page, ...problemResponses(400, 401, 429) },
        },
      },
      async (request) => {
        const q = request.query;
        const rows = await ctx.approvals.list(principalOf(request).companyId, { kind: 'standing', status: q.status, before: idCursor(q.cursor), limit: q.limit });
        return page(rows, q.limit, (last) => ({ id: last.id }), (v) => v);
      },
    );

    app.post(
      '/approvals/standing/:id/revoke',
      {
        config: ADMIN,
        schema: {
          tags: ['approvals'],
          operationId: 'revokeStandingApproval', description: 'Appends `approval.standing_revoked`; executions naming it afterwards are checked not_approved.',
          summary: 'Revoke a standing approval (executions naming it are then not_approved)',
          params: IdParams,
          body: ReasonBody(true),
          response: { 200: ApprovalSchema, ...problemResponses(400, 401, 403, 404, 409, 429, 503) },
        },
      },
      async (request) => {
        const p = principalOf(request);
        return await ctx.approvals.revokeStanding(p.companyId, actorOf(p), request.params.id, request.body.reason).catch((err: unknown) => appendFailure(err, () => '/body'));
      },
    );

    // ---- reviewer teams ----

    app.get(
      '/approval-teams',
      {
        config: READ,
        schema: { tags: ['approvals'], operationId: 'listApprovalTeams', description: "The company's reviewer teams with their members, SLA, escalation target and routing rule.", summary: 'Reviewer teams', response: { 200: Type.Object({ items: Type.Array(TeamSchema) }), ...problemResponses(401, 429) } },
      },
      async (request) => ({ items: await ctx.teams.list(principalOf(request).companyId) }),
    );

    app.put(
      '/approval-teams/:name',
      {
        config: ADMIN,
        schema: {
          tags: ['approvals'],
          operationId: 'putApprovalTeam',
          summary: 'Create or replace a reviewer team (members, SLA, escalation target, routing rule)',
          description: 'Appends `approval.team_set`.',
          params: Type.Object({ name: Name }),
          body: TeamBody,
          response: { 200: TeamSchema, ...problemResponses(400, 401, 403, 429, 503) },
        },
      },
      async (request) => {
        const p = principalOf(request);
        return await ctx.teams.put(p.companyId, actorOf(p), request.params.name, request.body);
      },
    );

    app.delete(
      '/approval-teams/:name',
      {
        config: ADMIN,
        schema: {
          tags: ['approvals'],
          operationId: 'deleteApprovalTeam', description: 'Appends `approval.team_removed`. Requests already routed to it keep the name; members of no team then decide them (admins always can).',
          summary: 'Remove a reviewer team (its requests keep their team name)',
          params: Type.Object({ name: Name }),
          response: { 204: Type.Null(), ...problemResponses(401, 403, 404, 429, 503) },
        },
      },
      async (request, reply) => {
        const p = principalOf(request);
        await ctx.teams.remove(p.companyId, actorOf(p), request.params.name);
        return reply.code(204).send(null);
      },
    );
  };
}
