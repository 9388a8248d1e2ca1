// How the client delivers without losing or duplicating: which answers are retried and after how
// long (exponential backoff with full jitter, or the service's Retry-After), and the idempotency key
// that makes a retried event the same event to the service.
import { canonicalJson, type JsonObject, retryAfterMs, retryDelayMs, sha256Hex } from '@audit-ledger/core';

/** Answers worth sending again: timeouts, rate limits and the service's transient failures. */
export const RETRYABLE = new Set([408, 429, 500, 502, 503, 504]);

/** The idempotency key of an event: its client id and content, so retries match and different events never do. */
export function idempotencyKeyOf(event: { [field: string]: unknown }): string {
  const { idempotency_key: _ignored, ...content } = event;
  return `sdk-${sha256Hex(canonicalJson(content as JsonObject)).slice(0, 40)}`;
}

/** Delay before retry `attempt` (0-based): exponential with full jitter, never shorter than the service's Retry-After (the core's retry policy). */
export function retryDelay(attempt: number, retryAfter: string | null, opts: { baseMs: number; maxMs: number; random: () => number; now: number }): number {
  return retryDelayMs({ firstMs: opts.baseMs, maxMs: opts.maxMs, jitter: 'full' }, attempt, opts.random, retryAfterMs(retryAfter, opts.now)) ?? opts.maxMs;
}
