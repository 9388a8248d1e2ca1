// Reviewer teams (docs/governance.md, "Teams and SLA"), without HTTP: an admin sets or removes a
// team (members, SLA, escalation target, routing rule), each change a governance entry. Routing a
// request to a team and escalating it past the SLA are the approvals' own (approvals.ts).
import type { JsonObject } from '@audit-ledger/core';
import type { TrailActor } from '../ingestion/recorder.js';
import { NotFoundError } from '../kernel/domain-error.js';
import { iso } from '../kernel/time.js';
import type { GovernanceStore, TeamRow } from '../store/governance.js';
import { type TeamInput, teamView, type TeamView } from './approval-model.js';
import type { Trail } from '../ingestion/recorder.js';

export class ReviewerTeams {
  constructor(private readonly deps: { store: GovernanceStore; recorder: Trail; clock: () => number }) {}

  async put(companyId: string, admin: TrailActor, name: string, input: TeamInput): Promise<TeamView> {
    const at = iso(this.deps.clock());
    const existing = await this.deps.store.getTeam(companyId, name);
    const row: TeamRow = {
      company_id: companyId,
      name,
      members: JSON.stringify(input.members),
      sla_minutes: input.sla_minutes ?? null,
      escalation_target: input.escalation_target ?? null,
      match_actions: JSON.stringify(input.match_actions ?? []),
      match_risks: JSON.stringify(input.match_risks ?? []),
      limits: JSON.stringify(input.limits ?? {}),
      created_at: existing?.created_at ?? at,
      updated_at: at,
    };
    await this.deps.recorder.record(companyId, 'approval.team_set', admin, { team: name, members: input.members, sla_minutes: row.sla_minutes, escalation_target: row.escalation_target, match_actions: input.match_actions ?? [], match_risks: input.match_risks ?? [], limits: JSON.parse(row.limits) as JsonObject });
    await this.deps.store.putTeam(row);
    return teamView(row);
  }

  async list(companyId: string): Promise<TeamView[]> {
    return (await this.deps.store.listTeams(companyId)).map(teamView);
  }

  async remove(companyId: string, admin: TrailActor, name: string): Promise<void> {
    if (!(await this.deps.store.getTeam(companyId, name))) throw new NotFoundError(`no reviewer team named "${name}"`);
    await this.deps.recorder.record(companyId, 'approval.team_removed', admin, { team: name });
    await this.deps.store.deleteTeam(companyId, name);
  }
}
