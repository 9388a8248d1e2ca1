// The idempotency mark (docs/ledger-format.md §10): `idempotency_conflict_of` is not hashed but
// derivable from hashed fields. The service never appends an exact repeat, so an entry whose
// `idempotency_key` an earlier entry of the chain used carries the log_id of the earliest such
// entry, and every other entry carries null. A mark added, changed or removed is
// `idempotency_mark`. One rule for every checker: the export verifier (which walks the chain), the
// full scan and the single-entry check (which look the earliest entry of a key up). Pure.

export interface MarkedEntry {
  seq: number;
  log_id?: unknown;
  idempotency_key?: unknown;
  idempotency_conflict_of?: unknown;
}

/**
 * Why an entry's mark is wrong, or null. `firstEarlier`: the log_id of the earliest entry before
 * this one with the same idempotency_key, or null when none before it used the key.
 */
export function idempotencyMarkProblem(e: MarkedEntry, firstEarlier: string | null): string | null {
  const mark = e.idempotency_conflict_of ?? null;
  const expected = typeof e.idempotency_key === 'string' ? firstEarlier : null;
  if (mark === expected) return null;
  return `idempotency_conflict_of is ${JSON.stringify(mark)}, but ${expected !== null ? `key ${JSON.stringify(e.idempotency_key)} was first used by ${expected}, so it must name that entry` : 'no earlier entry used its idempotency key, so it must be null'}`;
}
