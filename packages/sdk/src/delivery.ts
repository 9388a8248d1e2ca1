// How the client delivers without losing or duplicating: which answers are retried and after how
// long (exponential backoff with full jitter, or the service's Retry-After), and the idempotency key
// that makes a retried event the same event to the service.
import { canonicalJson, type JsonObject, sha256Hex } from '@audit-ledger/core';

/** Answers worth sending again: timeouts, rate limits and the service's transient failures. */
export const RETRYABLE = new Set([408, 429, 500, 502, 503, 504]);

/** The idempotency key of an event: its client id and content, so retries match and different events never do. */
export function idempotencyKeyOf(event: { [field: string]: unknown }): string {
  const { idempotency_key: _ignored, ...content } = event;
  return `sdk-${sha256Hex(canonicalJson(content as JsonObject)).slice(0, 40)}`;
}

/** Delay before retry `attempt` (0-based): Retry-After when the service sent one, else exponential with full jitter. */
export function retryDelay(attempt: number, retryAfter: string | null, opts: { baseMs: number; maxMs: number; random: () => number; now: number }): number {
  if (retryAfter !== null) {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds) && seconds >= 0) return Math.min(opts.maxMs, seconds * 1000);
    const at = Date.parse(retryAfter);
    if (!Number.isNaN(at)) return Math.min(opts.maxMs, Math.max(0, at - opts.now));
  }
  const cap = Math.min(opts.maxMs, opts.baseMs * 2 ** Math.min(attempt, 30));
  return Math.round(opts.random() * cap);
}
