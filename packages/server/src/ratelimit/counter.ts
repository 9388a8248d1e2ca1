// Fixed-window counters behind the per-key rate limits and the failed-login lockout.
// A window opens at the first hit on a key and lasts windowMs; every process that
// shares the same Redis shares the same windows. Without Redis, counts live in this
// process only.
//
// While a configured Redis is unreachable, counting falls back to this process's memory
// (limits then hold per process instead of per deployment), with one warn line when the
// outage starts, one info line when it ends, and the gauge audit_ledger_rate_limit_fallback
// at 1 meanwhile. Ingestion and login never fail because Redis did; health reports redis as
// down and the service as degraded, while readiness stays 200 (the ledger does not need Redis).
//
// Why not @fastify/rate-limit: the login lockout counts only *failed* attempts (a login
// reserves a place before the password is checked and gives it back on success), and the
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
  /** Takes back one hit counted in the open window (a reserved attempt that turned out fine). */
  release(key: string): Promise<void>;
  /** True while a shared backend is unreachable and counts are kept in this process. */
  readonly fallbackActive: boolean;
  /** Which backend holds the counters (health reports Redis separately). */
  readonly backend: 'memory' | 'redis';
  /** Resolves when the backend answers; rejects otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export class MemoryCounterStore implements CounterStore {
  readonly backend = 'memory' as const;
  readonly fallbackActive = false;
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

  async release(key: string): Promise<void> {
    const w = this.windows.get(key);
    if (w && w.endsAt > this.now() && w.count > 0) w.count -= 1;
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

const RELEASE_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 and tonumber(redis.call('GET', KEYS[1])) > 0 then redis.call('DECR', KEYS[1]) end
return 0`;

/** Where the Redis counter reports an outage (the service's logger). */
export interface CounterLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface RedisCounterDeps {
  redis: Redis;
  prefix?: string;
  log?: CounterLog;
  /** The clock of the in-memory fallback. */
  clock?: () => number;
}

export class RedisCounterStore implements CounterStore {
  readonly backend = 'redis' as const;
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly log: CounterLog | undefined;
  private readonly memory: MemoryCounterStore;
  private down = false;
  private everReady = false;

  constructor(deps: RedisCounterDeps) {
    this.redis = deps.redis;
    this.prefix = deps.prefix ?? 'audit-ledger:rl:';
    this.log = deps.log;
    this.memory = new MemoryCounterStore(deps.clock);
    if (this.redis.status === 'ready') this.everReady = true;
    // ioredis prints "Unhandled error event" to stderr for an 'error' nobody listens to:
    // every error goes through the service's logger instead, once per outage.
    this.redis.on('error', (err: Error) => this.fallBack(err));
    this.redis.on('ready', () => {
      this.everReady = true;
      if (this.down) {
        this.down = false;
        this.log?.info({}, 'Redis is reachable again: rate limits and the login lockout are shared again');
      }
    });
  }

  get fallbackActive(): boolean {
    return this.down;
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  private fallBack(err: unknown): void {
    if (this.down) return;
    this.down = true;
    const e = err as { code?: string; name?: string; message?: string } | undefined;
    this.log?.warn(
      { redis_error: e?.code ?? e?.name ?? 'unreachable' },
      'Redis is unreachable: counting rate limits and failed logins in this process until it is back',
    );
  }

  /** Redis while it answers; this process's memory while it does not (see the file's opening). */
  private async either<T>(onRedis: () => Promise<T>, onMemory: () => Promise<T>): Promise<T> {
    // Before the first connection, commands wait in ioredis's queue; after an outage began, no request waits for it.
    if (this.down || (this.everReady && this.redis.status !== 'ready')) {
      this.fallBack(undefined);
      return onMemory();
    }
    try {
      return await onRedis();
    } catch (err) {
      this.fallBack(err);
      return onMemory();
    }
  }

  hit(key: string, windowMs: number): Promise<WindowCount> {
    return this.either(
      async () => {
        const [count, ttl] = (await this.redis.eval(HIT_SCRIPT, 1, this.prefix + key, windowMs)) as [number, number];
        return { count, resetMs: ttl };
      },
      () => this.memory.hit(key, windowMs),
    );
  }

  release(key: string): Promise<void> {
    return this.either(
      async () => {
        await this.redis.eval(RELEASE_SCRIPT, 1, this.prefix + key);
      },
      () => this.memory.release(key),
    );
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
    await this.memory.close();
  }
}
