// When each signing key may sign (docs/ledger-format.md §12, "Key periods"). A key is trusted to
// sign only inside its period, taken from the signed key transitions and nothing else: the
// unsigned `active_from`/`active_to` of GET /integrity/keys are a convenience, and a copy of a
// ledger can say anything there. Without periods, whoever obtains a retired key could sign
// entries and checkpoints dated after its retirement and every verifier would accept them.
//
// The rules, each a sentence of the doc:
// - A key's period is [from, to): it starts at the `time` of the transition that introduced it
//   (no such transition: open) and ends at the `time` of the transition that retired it (none:
//   open). At the boundary instant itself the new key signs, the old one no longer does.
// - Transitions are taken in the order of their times as instants (ties: in the order listed).
// - A key retires once. A later transition from an already retired key, one dated before its old
//   key's period starts, one whose time is not an RFC 3339 instant, and one that introduces a key
//   a second time are refused (`key_not_active`), and endorse nothing.
// - An entry's signature counts only when its `created_at` is inside its key's period, and a
//   checkpoint's only when its `timestamp` line is.
import type { KeyTransition } from './key-transition.js';

/** A key's signing period, as instants (ms since the epoch; ±Infinity when open) and as the signed texts. */
export interface KeyPeriod {
  from: number;
  to: number;
  /** The `time` of the transition that introduced the key; null: open. */
  fromText: string | null;
  /** The `time` of the transition that retired it; null: open. */
  toText: string | null;
}

export const OPEN_PERIOD: KeyPeriod = Object.freeze({ from: Number.NEGATIVE_INFINITY, to: Number.POSITIVE_INFINITY, fromText: null, toText: null });

/** An RFC 3339 time as an instant; NaN when it is not one (no offset, a leap second, not a time). */
export function instantOf(text: unknown): number {
  if (typeof text !== 'string' || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:[0-5]\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(text)) return Number.NaN;
  return Date.parse(text);
}

/** Why a signature by a key with this period does not count at `at`, or null when it does. */
export function keyNotActive(keyId: string, period: KeyPeriod | undefined, at: unknown, what: string): string | null {
  if (!period) return null;
  const t = instantOf(at);
  if (Number.isNaN(t)) return `${what} ${String(at)} is not an RFC 3339 time, so key ${keyId} cannot be shown to have been active then`;
  if (t < period.from) return `key ${keyId} signed ${what} ${String(at)}, before its period began at ${period.fromText} (the transition that introduced it)`;
  if (t >= period.to) return `key ${keyId} signed ${what} ${String(at)}, after it was retired at ${period.toText} (a retired key's signature does not count)`;
  return null;
}

/** One step of following transitions: taken (the periods changed) or refused, and why. */
export type PeriodStep = { transition: KeyTransition; taken: true } | { transition: KeyTransition; taken: false; reason: string };

/**
 * Applies transitions (whose signatures the caller checks in `endorses`) to the periods of known
 * keys, in time order. `endorses(t)` answers null when the caller trusts t (it checks the
 * statement and signatures), a reason when it refuses it, undefined to pass over it silently;
 * only an endorsed transition that the period rules allow changes anything (then `onTaken`).
 * Returns the periods of every key it touched or was given, and each transition's step.
 */
export function applyTransitions(
  periods: Map<string, KeyPeriod>,
  transitions: readonly KeyTransition[],
  endorses: (t: KeyTransition) => string | null | undefined,
  onTaken: (t: KeyTransition) => void = () => {},
): PeriodStep[] {
  // By instant, ties (and times that are no instant, sorted last) in the order listed.
  const order = (at: number) => (Number.isNaN(at) ? Number.POSITIVE_INFINITY : at);
  const ordered = transitions.map((t, i) => ({ t, i, at: instantOf(t.created_at) })).sort((a, b) => order(a.at) - order(b.at) || a.i - b.i);
  const steps: PeriodStep[] = [];
  for (const { t, at } of ordered) {
    const refuse = (reason: string) => steps.push({ transition: t, taken: false, reason });
    const why = endorses(t);
    if (why === undefined) continue; // not the caller's concern (from a key it does not trust)
    if (why !== null) {
      refuse(why);
      continue;
    }
    if (Number.isNaN(at)) {
      refuse(`its time ${String(t.created_at)} is not an RFC 3339 instant`);
      continue;
    }
    const old = periods.get(t.old_key_id) ?? OPEN_PERIOD;
    if (old.to !== Number.POSITIVE_INFINITY) {
      refuse(`key ${t.old_key_id} was already retired at ${old.toText}; a key retires once, so its later statement endorses nothing (key_not_active)`);
      continue;
    }
    if (at < old.from) {
      refuse(`its time ${t.created_at} is before key ${t.old_key_id}'s period began at ${old.fromText} (key_not_active)`);
      continue;
    }
    const existing = periods.get(t.new_key_id);
    if (existing && existing.fromText !== null) {
      refuse(`key ${t.new_key_id} was already introduced at ${existing.fromText}`);
      continue;
    }
    periods.set(t.old_key_id, { ...old, to: at, toText: t.created_at });
    periods.set(t.new_key_id, { ...(existing ?? OPEN_PERIOD), from: at, fromText: t.created_at });
    steps.push({ transition: t, taken: true });
    onTaken(t);
  }
  return steps;
}
