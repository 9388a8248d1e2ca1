// Fixed-window counters behind the per-key rate limits and the failed-login lockout.
// A window opens at the first hit on a key and lasts windowMs; every process that
// shares the same Redis shares the same windows. Without Redis, counts live in this
// process only.
//
// Why not @fastify/rate-limit: the login lockout counts only *failed* attempts and
// must be checked before the password is (it has no peek-without-counting), and the
// per-key limit is known only after the credential is resolved. One small counter
// serves both, with the same semantics on memory and on Redis.
import type { Redis } from 'ioredis';

export interface WindowCount {
  /** Hits in the current window, including this one for `hit`. */
  count: number;
  /** Milliseconds until the window closes (0 when no window is open). */
  resetMs: number;
}

export interface CounterStore {
  /** Counts one hit and returns the window's state after it. */
  hit(key: string, windowMs: number): Promise<WindowCount>;
  /** The window's state without counting. */
  peek(key: string): Promise<WindowCount>;
  /** Which backend holds the counters (health reports Redis separately). */
  readonly backend: 'memory' | 'redis';
  /** Resolves when the backend answers; rejects otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export class MemoryCounterStore implements CounterStore {
  readonly backend = 'memory' as const;
  async ping(): Promise<void> {}

  private readonly windows = new Map<string, { count: number; endsAt: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    const now = this.now();
    let w = this.windows.get(key);
    if (!w || w.endsAt <= now) {
      if (this.windows.size > 100_000) this.sweep(now);
      w = { count: 0, endsAt: now + windowMs };
      this.windows.set(key, w);
    }
    w.count += 1;
    return { count: w.count, resetMs: w.endsAt - now };
  }

  async peek(key: string): Promise<WindowCount> {
    const now = this.now();
    const w = this.windows.get(key);
    return w && w.endsAt > now ? { count: w.count, resetMs: w.endsAt - now } : { count: 0, resetMs: 0 };
  }

  async close(): Promise<void> {
    this.windows.clear();
  }

  private sweep(now: number): void {
    for (const [k, w] of this.windows) if (w.endsAt <= now) this.windows.delete(k);
  }
}

// INCR and set the expiry in one round trip, atomically, so concurrent processes agree.
const HIT_SCRIPT = `
local c = redis.call('INCR', KEYS[1])
if c == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {c, ttl}`;

export class RedisCounterStore implements CounterStore {
  readonly backend = 'redis' as const;
  async ping(): Promise<void> {
    await this.redis.ping();
  }

  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'audit-ledger:rl:',
  ) {}

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    const [count, ttl] = (await this.redis.eval(HIT_SCRIPT, 1, this.prefix + key, windowMs)) as [number, number];
    return { count, resetMs: ttl };
  }

  async peek(key: string): Promise<WindowCount> {
    const [count, ttl] = await this.redis.multi().get(this.prefix + key).pttl(this.prefix + key).exec().then((r) => [r?.[0]?.[1], r?.[1]?.[1]]);
    return typeof ttl === 'number' && ttl > 0 ? { count: Number(count ?? 0), resetMs: ttl } : { count: 0, resetMs: 0 };
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
