// The one retry policy (core/src/retry.ts) that webhooks, log streams and the SDK use.
import { describe, expect, it } from 'vitest';
import { retryAfterMs, retryDelayMs } from '../src/retry.js';

describe('the retry policy', () => {
  const now = Date.parse('2026-11-28T12:00:00Z');
  it('reads Retry-After as seconds or an HTTP date, and nothing else', () => {
    expect(retryAfterMs('120', now)).toBe(120_000);
    expect(retryAfterMs(' 0 ', now)).toBe(0);
    expect(retryAfterMs('Sat, 28 Nov 2026 12:01:00 GMT', now)).toBe(60_000);
    expect(retryAfterMs('Sat, 28 Nov 2026 11:00:00 GMT', now)).toBe(0);
    for (const bad of [null, undefined, '', 'soon', '-5', '1.5']) expect(retryAfterMs(bad, now), String(bad)).toBeUndefined();
  });
  it('doubles from the first wait up to the cap, jitter included, with a fraction or full jitter', () => {
    const p = { firstMs: 1000, maxMs: 8000, jitter: 0.2 };
    expect([0, 1, 2, 3, 4, 10].map((a) => retryDelayMs(p, a, () => 0.5))).toEqual([1000, 2000, 4000, 8000, 8000, 8000]);
    expect(retryDelayMs(p, 0, () => 0)).toBe(800);
    expect(retryDelayMs(p, 0, () => 1)).toBe(1200);
    expect(retryDelayMs(p, 3, () => 1)).toBe(8000);
    expect(retryDelayMs({ firstMs: 1000, maxMs: 8000, jitter: 'full' }, 2, () => 0.25)).toBe(1000);
  });
  it('follows a fixed schedule and ends with it', () => {
    const p = { schedule: [5000, 60_000], maxMs: 60_000, jitter: 0.1 };
    expect(retryDelayMs(p, 0, () => 0.5)).toBe(5000);
    expect(retryDelayMs(p, 1, () => 0)).toBe(54_000);
    expect(retryDelayMs(p, 2, () => 0.5)).toBeUndefined();
  });
  it("never waits less than the other side's Retry-After, nor more than the cap", () => {
    const p = { firstMs: 1000, maxMs: 300_000, jitter: 'full' as const };
    expect(retryDelayMs(p, 0, () => 0, 30_000)).toBe(30_000);
    expect(retryDelayMs(p, 0, () => 1, 500)).toBe(1000);
    expect(retryDelayMs(p, 0, () => 0.5, 86_400_000)).toBe(300_000);
  });
});
