// Bench part for forensics: one 10,000-event agent trace among 40,000 other events on
// SQLite, and how long each forensics endpoint takes to answer it through the app (first
// call, then again).
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { createUser } from '../src/users/accounts.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/kernel/config.js';
import { MemoryCounterStore } from '../src/ratelimit/counter.js';
import { openSqliteStore } from '../src/store/sqlite.js';
import { scratchDir } from './scratch.js';

/** A realistic long trace: steps, context reads, model calls, tools, decisions on their inputs, policy checks, actions. */
function traceEvents(n: number, traceId: string): Array<Record<string, unknown>> {
  const t0 = Date.parse('2026-03-01T08:00:00.000Z');
  const out: Array<Record<string, unknown>> = [];
  const kinds = ['agent.step', 'context.retrieved', 'llm.call', 'tool.called', 'decision.made', 'policy.evaluated', 'action.executed'];
  for (let i = 0; i < n; i++) {
    const kind = kinds[i % kinds.length] as string;
    const round = Math.floor(i / kinds.length);
    const data: Record<string, unknown> = { round };
    if (kind === 'context.retrieved') Object.assign(data, { source_id: `inventory:${round % 50}`, source_type: 'inventory_snapshot', as_of: new Date(t0 + i * 1000 - 5000).toISOString(), max_age_seconds: 60 });
    if (kind === 'tool.called') Object.assign(data, { tool: 'supplier_quote' });
    if (kind === 'decision.made') Object.assign(data, { decision_id: randomUUID(), inputs: [`ev-${i - 3}`, `ev-${i - 1}`] });
    if (kind === 'policy.evaluated') Object.assign(data, { policy_id: 'budget-cap', result: 'allow' });
    if (kind === 'action.executed') Object.assign(data, { action: 'create_po', tool: 'erp' });
    out.push({ event_id: `ev-${i}`, event_type: kind, trace_id: traceId, timestamp: new Date(t0 + i * 1000).toISOString(), ...(i > 0 ? { parent_event_id: `ev-${i - 1}` } : {}), data });
  }
  return out;
}

export interface ForensicsTimings {
  events: number;
  /** Milliseconds per endpoint: [first call, second call]. */
  ms: Record<string, [number, number]>;
}

export async function forensicsOnLongTrace(n: number): Promise<ForensicsTimings> {
  const dir = scratchDir('al-bench-forensics-');
  const store = openSqliteStore(path.join(dir, 'ledger.db'));
  await store.migrate();
  const config = { ...loadConfig({ LOG_LEVEL: 'silent', INTEGRITY_VERIFY_INTERVAL_SECONDS: '0', CHECKPOINT_INTERVAL_MS: '0' }), dataDir: dir };
  await createUser(store, { company: 'bench', email: 'forensics@example.com', password: 'bench password 123', role: 'admin' });
  const counters = new MemoryCounterStore(Date.now);
  const app = await buildApp({ config, store, counters, logger: false });
  try {
    const login = await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'forensics@example.com', password: 'bench password 123' } });
    const token = login.json().access_token as string;
    const key = (await app.inject({ method: 'POST', url: '/api/v1/auth/api_keys', headers: { authorization: `Bearer ${token}` }, payload: { name: 'b', rate_limit_per_minute: 1_000_000 } })).json().key as string;
    const headers = { 'x-api-key': key };
    // The trace is interleaved with four times as many events of other traces, so its
    // entries are scattered through the chain as they would be in a busy ledger.
    const traceId = randomUUID();
    const events = traceEvents(n, traceId);
    const others = traceEvents(4 * n, randomUUID());
    for (let i = 0; i < n; i += 200) {
      const logs = [...events.slice(i, i + 200), ...others.slice(4 * i, 4 * i + 800)];
      const res = await app.inject({ method: 'POST', url: '/api/v1/logs/batch', headers, payload: { logs } });
      if (res.statusCode !== 200) throw new Error(res.body);
    }
    const session = (await app.inject({ method: 'POST', url: '/api/v1/forensics/replays', headers, payload: { trace_id: traceId, metadata: {} } })).json();
    const ms: Record<string, [number, number]> = {};
    for (const p of ['timeline', 'causal-graph', 'staleness', 'root-cause']) {
      const times: number[] = [];
      for (let r = 0; r < 2; r++) {
        const started = performance.now();
        const res = await app.inject({ method: 'GET', url: `/api/v1/forensics/replays/${session.id}/${p}`, headers });
        if (res.statusCode !== 200) throw new Error(`${p}: ${res.statusCode} ${res.body.slice(0, 200)}`);
        times.push(performance.now() - started);
      }
      ms[p] = times as [number, number];
    }
    return { events: session.event_count as number, ms };
  } finally {
    await app.close();
    await counters.close();
    await store.close();
  }
}
