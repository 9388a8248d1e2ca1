// One retry policy for everything that sends and tries again (issue 43, 9): webhooks, log streams
// and the SDK. Pure: the caller brings the clock and the random source. The wait before the next
// attempt follows a schedule (doubling from a first wait up to a cap, or a fixed list), spread by
// jitter (a fraction either way, or "full": anywhere from zero to the wait), and is never shorter
// than what the other side asked for with Retry-After (RFC 9110 §10.2.3), capped at the policy's
// longest wait so a hostile answer cannot park the sender.

export interface RetryPolicy {
  /** Doubling: the first wait, doubled per attempt up to maxMs. */
  firstMs?: number;
  /** Or a fixed list of waits: attempt n waits schedule[n]; past its end there is no retry. */
  schedule?: readonly number[];
  /** The longest wait, Retry-After included. */
  maxMs: number;
  /** A fraction (0.1: ±10%) or 'full' (uniform from 0 to the wait). */
  jitter: number | 'full';
}

/** Retry-After as milliseconds from `now`: delay-seconds or an HTTP-date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null | undefined, now: number): number | undefined {
  if (header === null || header === undefined) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // An HTTP-date names its weekday and month in letters (IMF-fixdate, and the two obsolete forms).
  if (!/^[A-Za-z]{3}/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * The wait before retry `attempt` (0 for the first retry), or undefined when the policy's
 * schedule has no more. `retryAfter` (ms, from retryAfterMs) is a floor.
 */
export function retryDelayMs(policy: RetryPolicy, attempt: number, random: () => number, retryAfter?: number): number | undefined {
  let base: number;
  if (policy.schedule) {
    const planned = policy.schedule[attempt];
    if (planned === undefined) return undefined;
    base = planned;
  } else {
    base = Math.min(policy.maxMs, (policy.firstMs ?? 1000) * 2 ** Math.min(Math.max(0, attempt), 40));
  }
  const jittered = policy.jitter === 'full' ? random() * base : base * (1 + policy.jitter * (2 * random() - 1));
  return Math.round(Math.min(policy.maxMs, Math.max(jittered, retryAfter ?? 0)));
}
