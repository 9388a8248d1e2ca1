// What the two committers share: how a company's queue is handed to them, and what they call
// back with. The appender (../appender.ts) picks one committer for the store, once.
import type { ChainWriter, WithChain } from '../../store/chain.js';
import type { Keyring } from '../keyring.js';
import type { Planner } from './planner.js';
import type { Pending, Plan } from './types.js';

/** Commits a company's queued groups until its queue is empty. */
export interface Committer {
  drain(companyId: string, queue: Pending[]): Promise<void>;
  /** A request joined the company's queue (a waiting pipelined drain takes it at once). */
  wake(companyId: string): void;
}

export interface CommitterDeps {
  store: { withChain: WithChain; chainWriter?: ChainWriter };
  planner: Planner;
  keyring: Pick<Keyring, 'reload'>;
  /** Takes the next group off the front of a queue (at most maxGroupEvents events, at least one request). */
  takeGroup(queue: Pending[]): Pending[];
  /** Answers a committed group's requests and schedules its checkpoint. */
  committed(companyId: string, plan: Plan, group: Pending[], t0: number): void;
  onError?: (err: unknown, message: string) => void;
}

/** Companies whose chain state is kept between bursts of appends; beyond it, an idle one is read again next time. */
export const MAX_KEPT_CHAINS = 1000;
/** How often a group is built again after finding the head moved before it gives up. */
export const MAX_HEAD_MOVES = 3;

/** The idempotency keys a group's events carry. */
export function idempotencyKeys(group: Pending[]): string[] {
  const keys = new Set<string>();
  for (const p of group) for (const e of p.events) if (e.envelope.idempotency_key !== null) keys.add(e.envelope.idempotency_key);
  return [...keys];
}
