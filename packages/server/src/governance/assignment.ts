// Who a request is assigned to and who may decide it (docs/governance.md, "Who may decide,
// exactly"): the team a new request is routed to, whether a reviewer may decide (or hand on) a
// request, and what an escalation may name. One place for these rules, so every route and alias
// that decides goes through the same checks (approvals.ts calls them; the property suite in
// test/separation-of-duties.test.ts holds them against a model).
import { GovernanceRefusal, InputError } from '../kernel/domain-error.js';
import type { ApprovalRow, GovernanceStore, TeamRow } from '../store/governance.js';
import { actionMatches, type ApprovalRequestInput, RISKS, type Decider, type Risk, type TeamLimits } from './approval-model.js';

export interface AssignmentDeps {
  store: Pick<GovernanceStore, 'getTeam' | 'listTeams'>;
  /** A reviewer or admin of the company (not disabled) by email: who a request may be escalated to in person. */
  reviewerByEmail: (companyId: string, email: string) => Promise<{ email: string } | undefined>;
}

export class Assignment {
  constructor(private readonly deps: AssignmentDeps) {}

  /** The team a request goes to: the one named, or the first whose rule takes its action or risk. */
  async route(companyId: string, action: string, risk: Risk, assignee: string | undefined, field: string, known?: TeamRow[]): Promise<TeamRow | undefined> {
    if (assignee !== undefined) {
      const team = await this.deps.store.getTeam(companyId, assignee);
      if (!team) throw new InputError([{ field, message: `no reviewer team named "${assignee}" (PUT /api/v1/approval-teams/{name} creates one)` }]);
      return team;
    }
    const teams = known ?? (await this.deps.store.listTeams(companyId));
    return teams.find((t) => (JSON.parse(t.match_actions) as string[]).some((p) => actionMatches(p, action)) || (JSON.parse(t.match_risks) as string[]).includes(risk));
  }

  /**
   * Where a new request goes and under which limits (docs/governance.md, "Limits a team sets"):
   * the teams' least risk for the action first (it may route the request elsewhere), then the
   * routed team's; a lower risk is raised, more uses or a longer life than allowed is refused.
   */
  async place(companyId: string, input: ApprovalRequestInput, requested: Risk, field: string): Promise<{ team: TeamRow | undefined; risk: Risk; limits: TeamLimits & { from: string[] } }> {
    const teams = await this.deps.store.listTeams(companyId);
    const team = await this.route(companyId, input.action, atLeast(requested, limitsOf(teams, input.action, undefined).min_risk), input.assignee, `${field}/assignee`, teams);
    const limits = limitsOf(teams, input.action, team);
    const named = limits.from.map((n) => `"${n}"`).join(', ');
    if (input.max_uses !== undefined && limits.max_uses !== undefined && input.max_uses > limits.max_uses) throw new InputError([{ field: `${field}/max_uses`, message: `reviewer team ${named} allows at most ${limits.max_uses} use(s) for ${input.action}` }]);
    if (input.expires_in_seconds !== undefined && limits.max_expires_in_seconds !== undefined && input.expires_in_seconds > limits.max_expires_in_seconds) throw new InputError([{ field: `${field}/expires_in_seconds`, message: `reviewer team ${named} allows at most ${limits.max_expires_in_seconds} s for ${input.action}` }]);
    return { team, risk: atLeast(requested, limits.min_risk), limits };
  }

  /**
   * Who may decide a request: admins always; otherwise, when it is assigned (routed to a team, or
   * escalated to a team or a person), only that team's members (a team that lists none: any
   * reviewer) or that person. A name that is no longer a team is read as a person, so a request
   * assigned to something unknown fails closed (only that name, or an admin, decides).
   */
  async checkMayDecide(companyId: string, row: ApprovalRow, user: Decider): Promise<void> {
    const name = row.assignee ?? row.team;
    if (name === null || user.role === 'admin') return;
    const team = await this.deps.store.getTeam(companyId, name);
    if (!team) {
      if (name.toLowerCase() !== user.email.toLowerCase()) throw new GovernanceRefusal('not_in_team', `this request is assigned to "${name}", who is not you`);
      return;
    }
    const members = (JSON.parse(team.members) as string[]).map((m) => m.toLowerCase());
    if (members.length > 0 && !members.includes(user.email.toLowerCase())) throw new GovernanceRefusal('not_in_team', `this request is assigned to team "${name}", which you are not a member of`);
  }

  /**
   * What an escalation may name: one of the company's reviewer teams, or a reviewer or admin of the
   * company by email (its stored spelling). Anything else is refused: it would leave a request that
   * no team rule covers.
   */
  async escalationTarget(companyId: string, to: string, field: string): Promise<{ team: TeamRow } | { person: string }> {
    const team = await this.deps.store.getTeam(companyId, to);
    if (team) return { team };
    const person = await this.deps.reviewerByEmail(companyId, to);
    if (person) return { person: person.email };
    throw new InputError([{ field, message: `"${to}" is neither a reviewer team of this company nor one of its reviewers or admins` }]);
  }
}

/** A risk raised to a least one, when there is one. */
const atLeast = (risk: Risk, least: Risk | undefined): Risk => (least !== undefined && RISKS.indexOf(least) > RISKS.indexOf(risk) ? least : risk);

/**
 * The limits a request for `action` is under: those of the team it is routed to and of every team
 * whose rule names the action, the strictest of each (so naming another team as assignee escapes
 * none). `from` lists the teams that set any.
 */
function limitsOf(teams: TeamRow[], action: string, routed: TeamRow | undefined): TeamLimits & { from: string[] } {
  const out: TeamLimits & { from: string[] } = { from: [] };
  for (const t of teams.filter((x) => x.name === routed?.name || (JSON.parse(x.match_actions) as string[]).some((p) => actionMatches(p, action)))) {
    const l = JSON.parse(t.limits) as TeamLimits;
    if (l.min_risk === undefined && l.max_uses === undefined && l.max_expires_in_seconds === undefined) continue;
    out.from.push(t.name);
    if (l.min_risk !== undefined) out.min_risk = atLeast(out.min_risk ?? l.min_risk, l.min_risk);
    if (l.max_uses !== undefined) out.max_uses = Math.min(out.max_uses ?? l.max_uses, l.max_uses);
    if (l.max_expires_in_seconds !== undefined) out.max_expires_in_seconds = Math.min(out.max_expires_in_seconds ?? l.max_expires_in_seconds, l.max_expires_in_seconds);
  }
  return out;
}
