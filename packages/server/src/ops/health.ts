// The service's health, without HTTP: each dependency checked (bounded by a timeout), and whether
// the process is ready. No company data: health is public (routes/health.ts).
import type { CounterStore } from '../ratelimit/counter.js';
import type { Keyring } from '../ledger/keyring.js';
import type { Store } from '../store/store.js';
import { VERSION } from '../kernel/version.js';

const CHECK_TIMEOUT_MS = 2000;

export interface HealthDeps {
  store: Pick<Store, 'ping' | 'migrationState' | 'searchIndex'>;
  keyring: Pick<Keyring, 'active'>;
  counters: Pick<CounterStore, 'backend' | 'ping'>;
  clock: () => number;
}

function withTimeout<T>(p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
    }),
  ]).finally(() => clearTimeout(timer));
}

export class Health {
  private readonly started: number;

  constructor(private readonly deps: HealthDeps) {
    this.started = deps.clock();
  }

  /** Every check and the overall status; ready when the store answers, migrations are current and a signing key is loaded. */
  async check() {
    const ctx = this.deps;
    const started = this.started;
    const t0 = performance.now();
    const database = await withTimeout(ctx.store.ping()).then(
      () => ({ status: 'ok' as const, latency_ms: Math.round((performance.now() - t0) * 100) / 100 }),
      // The error's code only: its message may name internal hosts, and health is public.
      (err: unknown) => ({ status: 'down' as const, latency_ms: null, error: String((err as { code?: unknown }).code ?? (err instanceof Error && /no answer/.test(err.message) ? 'timeout' : 'unreachable')) }),
    );
    const migrations =
      database.status === 'ok'
        ? await withTimeout(ctx.store.migrationState()).then(
            (m) => ({ status: m.current === m.latest ? ('ok' as const) : ('behind' as const), version: m.current }),
            () => ({ status: 'down' as const, version: null }),
          )
        : { status: 'down' as const, version: null };
    const signingKey = { status: ctx.keyring.active.custody.ready() ? ('ok' as const) : ('down' as const) };
    const redis =
      ctx.counters.backend === 'redis'
        ? await withTimeout(ctx.counters.ping()).then(
            () => ({ status: 'ok' as const }),
            () => ({ status: 'down' as const }),
          )
        : undefined;
    const ready = database.status === 'ok' && migrations.status === 'ok' && signingKey.status === 'ok';
    // The index of words (store/search-index.ts): off, kept, or failing (tried again; searches for words find what it held).
    const index = ctx.store.searchIndex;
    const searchIndex = { status: !index?.running ? ('off' as const) : index.problem !== undefined ? ('failing' as const) : ('ok' as const) };
    return {
      ready,
      body: {
        status: !ready ? ('down' as const) : redis?.status === 'down' || searchIndex.status === 'failing' ? ('degraded' as const) : ('ok' as const),
        version: VERSION,
        uptime_seconds: Math.floor((ctx.clock() - started) / 1000),
        checks: { database, signing_key: signingKey, migrations, search_index: searchIndex, ...(redis ? { redis } : {}) },
      },
    };
  }
}
