// The start-up continuity check: a company whose stored ledger is behind a checkpoint seen outside
// it (this service's own checkpoint marks, marks.ts; what each witness has cosigned) gets a hold:
// its appends and checkpoints are refused (503 ledger_behind_checkpoint) until an operator decides,
// with `audit-ledger continuity resolve`: the missing entries supplied (then the chain goes on from
// the checkpoint the world saw), or the loss accepted (recorded in the company's chain as
// ledger.continuity_loss_accepted, and the witnesses will refuse what follows: docs/operations.md).
// Holds live in the database, so every process honours them and a decision lifts them everywhere
// within REFRESH_MS.
import type { AdminTrail } from '../ingestion/recorder.js';
import type { ContinuityHoldRow, ContinuityHolds, ContinuityStore } from '../store/continuity.js';
import type { LedgerStore } from '../store/ledger.js';
import { DomainError } from '../kernel/domain-error.js';
import { iso } from '../kernel/time.js';
import { readMarks } from './marks.js';
import { witnessSize } from './seen.js';
import type { OperatorFetch } from '../egress/address-policy.js';

export const REFRESH_MS = 2000;

export class ContinuityHoldError extends DomainError<'ledger_behind_checkpoint'> {
  constructor(hold: Pick<ContinuityHoldRow, 'company_id' | 'stored_size' | 'seen_size' | 'source'>) {
    super(
      'ledger_behind_checkpoint',
      `This company's stored ledger (${hold.stored_size} entries) is behind a checkpoint of size ${hold.seen_size} already seen outside it (${hold.source}): ` +
        `entries seq ${hold.stored_size} to ${hold.seen_size - 1} are missing, so appending now would fork the published history`,
      { seenSize: hold.seen_size },
    );
  }
}

export interface GuardDeps {
  holds: ContinuityHolds;
  continuity: Pick<ContinuityStore, 'sizes'>;
  ledger: Pick<LedgerStore, 'latestCheckpoint'>;
  /** Where the decision to accept a loss is recorded, in the company's chain, once the hold is lifted. */
  trail: Pick<AdminTrail, 'record'>;
  marksFile: string;
  origin: string;
  witnesses: Array<{ url: string; name: string }>;
  /** Requests to the witnesses under the address policy (WITNESS_ALLOW_PRIVATE). */
  send: OperatorFetch;
  clock: () => number;
  warn: (obj: Record<string, unknown>, msg: string) => void;
}

export class ContinuityGuard {
  private held = new Map<string, ContinuityHoldRow>();

  constructor(private readonly deps: GuardDeps) {}

  /** The refusal for an append or checkpoint of a held company, or undefined. */
  refusal(companyId: string): ContinuityHoldError | undefined {
    const h = this.held.get(companyId);
    return h ? new ContinuityHoldError(h) : undefined;
  }

  get holding(): number {
    return this.held.size;
  }

  /** At start, before anything appends: compares every company's stored size with what was seen outside. */
  async check(): Promise<void> {
    const { deps } = this;
    const sizes = await deps.continuity.sizes();
    const found: Array<Omit<ContinuityHoldRow, 'decision' | 'reason' | 'decided_at' | 'recorded_at'>> = [];
    const at = iso(deps.clock());
    const marks = readMarks(deps.marksFile);
    if (marks && marks.origin === deps.origin) {
      for (const [companyId, m] of Object.entries(marks.companies)) {
        const stored = sizes.get(companyId) ?? 0;
        if (m.tree_size > stored) found.push({ company_id: companyId, seen_size: m.tree_size, stored_size: stored, source: `a checkpoint this service signed (${deps.marksFile})`, note: m.note, detected_at: at });
      }
    }
    // Each witness is asked about every company, a few at a time; one that does not answer is
    // asked no more at this start (said once), so a witness that is down never delays a start long.
    await Promise.all(
      deps.witnesses.map(async (w) => {
        const queue = [...sizes];
        let down = false;
        const worker = async () => {
          for (let next = queue.shift(); next && !down; next = queue.shift()) {
            const [companyId, stored] = next;
            const latest = await deps.ledger.latestCheckpoint(companyId);
            if (!latest) continue;
            const answer = await witnessSize(deps.send, w, latest, 5000);
            if (answer.size !== undefined && answer.size > stored) found.push({ company_id: companyId, seen_size: answer.size, stored_size: stored, source: `witness ${w.name}`, note: null, detected_at: at });
            else if (answer.problem?.startsWith('no answer') && !down) {
              down = true;
              deps.warn({ witness: w.name, problem: answer.problem }, 'continuity: a witness did not answer at start; what it has cosigned was not compared (the witness submitter will find a difference when it is back)');
            }
          }
        };
        await Promise.all(Array.from({ length: 4 }, worker));
      }),
    );
    for (const f of found) {
      const row = await deps.holds.hold(f);
      if (row.decision === null) deps.warn({ company_id: f.company_id, stored_size: f.stored_size, seen_size: f.seen_size, source: f.source }, 'continuity: this company\'s ledger is behind a checkpoint seen outside it; its appends are refused until an operator decides (audit-ledger continuity, docs/operations.md)');
    }
    await this.refresh();
  }

  /** Follows decisions made meanwhile (by `audit-ledger continuity resolve`), and records accepted losses in the chain. */
  async refresh(): Promise<void> {
    const rows = await this.deps.holds.unsettled();
    this.held = new Map(rows.filter((h) => h.decision === null).map((h) => [h.company_id, h]));
    for (const h of rows) {
      if (h.decision === null || this.held.has(h.company_id)) continue;
      const details = { seen_size: h.seen_size, stored_size: h.stored_size, source: h.source, reason: h.reason ?? '', decided_at: h.decided_at ?? '' };
      // Keyed by the hold: processes that record it at once append one entry.
      await this.deps.trail.record(h.company_id, 'ledger.continuity_loss_accepted', { kind: 'operator' }, details, { idempotency_key: `continuity-loss-${h.seen_size}` });
      await this.deps.holds.recorded(h.company_id, h.seen_size, iso(this.deps.clock()));
    }
  }
}
