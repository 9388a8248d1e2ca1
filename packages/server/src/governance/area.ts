// The governance area as the composition root (services.ts) builds it: the policy and decision
// registers, approvals with their reviewer teams and execution check, incidents, and the sweep
// of pending approvals, which registers its own start and close (kernel/lifecycle.ts). What it
// needs of the areas above it (an entry's check, a root cause) comes in as functions.
import type { AccountStore } from '../store/accounts.js';
import type { GovernanceStore } from '../store/governance.js';
import type { LedgerStore } from '../store/ledger.js';
import { BackgroundTask } from '../kernel/background.js';
import type { EventSink } from '../kernel/events.js';
import type { Lifecycle } from '../kernel/lifecycle.js';
import type { Trail } from '../ingestion/recorder.js';
import { Approvals } from './approvals.js';
import { Decisions } from './decisions.js';
import { ExecutionBinding } from './execution-check.js';
import { type IncidentDeps, Incidents } from './incidents.js';
import { Policies } from './policies.js';
import { ReviewerTeams } from './teams.js';

/** How often pending approvals are checked for a run-out SLA (escalated once) and expiry (recorded). */
export const APPROVAL_SWEEP_MS = 15_000;

export interface GovernanceAreaDeps extends Pick<IncidentDeps, 'keyring' | 'transitions' | 'checkEntry' | 'replayCause' | 'traceCause'> {
  store: GovernanceStore;
  ledger: LedgerStore;
  accounts: Pick<AccountStore, 'findUserByEmail'>;
  /** The `audit-ledger/governance` trail (ingestion/recorder.ts). */
  recorder: Trail;
  events: EventSink;
  clock: () => number;
  logError: (obj: { err?: unknown }, msg: string) => void;
}

export interface GovernanceArea {
  policies: Policies;
  approvals: Approvals;
  teams: ReviewerTeams;
  /** The check of executions and policy evaluations after ingestion commits them. */
  binding: ExecutionBinding;
  decisions: Decisions;
  incidents: Incidents;
}

export function buildGovernance(deps: GovernanceAreaDeps, life: Lifecycle): GovernanceArea {
  const { store, recorder, events, clock } = deps;
  const policies = new Policies({ store, recorder, events, clock });
  // Who may be named as a request's reviewer: an enabled reviewer or admin of the company.
  const reviewerByEmail = async (companyId: string, email: string) => {
    const u = await deps.accounts.findUserByEmail(email);
    return u && u.company_id === companyId && u.disabled_at === null && (u.role === 'admin' || u.role === 'reviewer') ? { email: u.email } : undefined;
  };
  const approvals = new Approvals({ store, recorder, events, clock, reviewerByEmail, policyVersionExists: (c, p, v) => policies.exists(c, p, v) });
  const { keyring, transitions, checkEntry, replayCause, traceCause } = deps;
  const incidents = new Incidents({ store, recorder, events, ledger: deps.ledger, clock, keyring, transitions, checkEntry, replayCause, traceCause });
  const sweep = new BackgroundTask(() => approvals.sweep().then(() => undefined), (err) => deps.logError({ err }, 'approval SLA and expiry sweep failed'));
  life.add({ name: 'approval sweep', start: () => sweep.start(APPROVAL_SWEEP_MS), close: () => sweep.close() });
  return {
    policies,
    approvals,
    teams: new ReviewerTeams({ store, recorder, clock }),
    binding: new ExecutionBinding({ store, recorder, events, clock }),
    decisions: new Decisions({ ledger: deps.ledger, store, clock }),
    incidents,
  };
}
