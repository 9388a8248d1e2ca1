// How `audit-ledger monitor` runs: once (for cron: exit code 1 when any log alarmed), or as a
// daemon every --interval seconds with Prometheus metrics on --metrics-port. Every alert is a JSON
// line on stdout and, with --webhook, a POST signed as Standard Webhooks sign (the same scheme as
// the service's own webhooks: webhook-id, webhook-timestamp, webhook-signature).
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { Counter, Gauge, Registry } from 'prom-client';
import { signWebhook } from '../../webhooks/signature.js';
import { type Alert, Monitor, type MonitorOptions, type RunResult } from './monitor.js';

export interface RunOptions extends MonitorOptions {
  webhook?: { url: string; secret: string };
  /** Seconds between runs; absent: run once. */
  interval?: number;
  metricsPort?: number;
  metricsHost?: string;
  write: (line: Record<string, unknown>) => void;
}

/** POSTs one alert, signed; a failure is reported, never thrown (the alert is on stdout anyway). */
async function notify(webhook: NonNullable<RunOptions['webhook']>, alert: Alert, write: RunOptions['write']): Promise<void> {
  const id = randomUUID();
  const ts = Math.floor(Date.now() / 1000);
  const body = JSON.stringify({ type: `monitor.${alert.kind}`, timestamp: alert.at, data: alert });
  try {
    const res = await fetch(webhook.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': signWebhook(webhook.secret, id, ts, body) },
      body,
      signal: AbortSignal.timeout(10_000),
    });
    await res.arrayBuffer();
    if (res.status >= 300) write({ level: 40, msg: 'alert webhook refused', status: res.status });
  } catch (err) {
    write({ level: 40, msg: 'alert webhook failed', err: (err as Error).message });
  }
}

/** Runs the monitor; resolves with the last run's result (once), or when `stop` is called (daemon). */
export async function runMonitor(opts: RunOptions, stop?: Promise<void>): Promise<RunResult> {
  const monitor = new Monitor(opts);
  const registry = new Registry();
  const size = new Gauge({ name: 'audit_ledger_monitor_tree_size', help: 'The tree size of the last checkpoint accepted, per log origin', labelNames: ['origin'], registers: [registry] });
  const checked = new Gauge({ name: 'audit_ledger_monitor_last_check_timestamp_seconds', help: 'When each log was last checked without an alert', labelNames: ['log'], registers: [registry] });
  const alertsTotal = new Counter({ name: 'audit_ledger_monitor_alerts_total', help: 'Alerts raised, by kind (fork, rollback, bad_signature, retired_key, witness_quorum, stalled, bad_tiles, unreachable)', labelNames: ['kind'], registers: [registry] });
  const once = async () => {
    const result = await monitor.runOnce();
    for (const l of result.logs) {
      if (l.origin !== null && l.tree_size !== null) size.set({ origin: l.origin }, l.tree_size);
      if (!result.alerts.some((a) => a.log === l.log)) checked.set({ log: l.log }, Date.now() / 1000);
      opts.write({ level: 30, msg: 'log checked', ...l });
    }
    for (const a of result.alerts) {
      alertsTotal.inc({ kind: a.kind });
      opts.write({ level: 50, msg: 'alert', ...a });
      if (opts.webhook) await notify(opts.webhook, a, opts.write);
    }
    return result;
  };
  if (opts.interval === undefined) return once();
  const server = opts.metricsPort === undefined ? null : http.createServer(async (req, res) => {
    if (req.url !== '/metrics') return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': registry.contentType }).end(await registry.metrics());
  });
  if (server) {
    await new Promise<void>((resolve) => server.listen(opts.metricsPort, opts.metricsHost ?? '127.0.0.1', resolve));
    const addr = server.address();
    opts.write({ level: 30, msg: 'monitor metrics listening', url: typeof addr === 'object' && addr ? `http://${opts.metricsHost ?? '127.0.0.1'}:${addr.port}/metrics` : null });
  }
  let last: RunResult = { alerts: [], logs: [] };
  let stopped = false;
  void stop?.then(() => {
    stopped = true;
  });
  while (!stopped) {
    last = await once();
    await Promise.race([new Promise((r) => setTimeout(r, (opts.interval as number) * 1000)), stop]);
  }
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  return last;
}
