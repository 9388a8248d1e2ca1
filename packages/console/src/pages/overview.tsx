// The overview, the page after sign-in (docs/console.md): what a compliance officer checks first.
// Events per day and per agent, the chain's integrity with the last full verification and the
// witness quorum, traces with anomalies, what waits for a person (approvals, open incidents), and
// the retention and legal holds in force. Every figure links to the page that explains it.
import type { Answer } from '@audit-ledger/sdk';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorLine, message } from '../ui';

type Usage = Answer<'getUsage'>;
type Status = Answer<'getIntegrityStatus'>;
type TraceRow = Answer<'listTraces'>['items'][number];
type Hold = Answer<'listHolds'>['items'][number];

/**
 * Events (bars) and API requests (line) per day, drawn by uPlot from a lazily loaded chunk; the
 * figures are in the wrapper's label, so they are there before the chart and without it.
 */
function PerDay({ days, from, to }: { days: Usage['by_day']; from: string; to: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (days.length === 0) return;
    let remove: (() => void) | null = null;
    let gone = false;
    void import('../charts').then((m) => {
      if (!gone && box.current) remove = m.dailyChart(box.current, { from, to }, days);
    });
    return () => {
      gone = true;
      remove?.();
    };
  }, [days, from, to]);
  if (days.length === 0) return <p data-testid="events-per-day">No events in the period yet.</p>;
  return <div ref={box} class="chart" role="img" aria-label={`Events per day: ${days.map((d) => `${d.day}: ${d.events_ingested} events, ${d.api_requests} requests`).join('; ')}`} data-testid="events-per-day" />;
}

/** Horizontal bars: entries per agent, the busiest first. */
function PerAgent({ agents }: { agents: Usage['by_agent'] }) {
  if (agents.length === 0) return <p data-testid="entries-per-agent">No entries in the period yet.</p>;
  const max = Math.max(1, ...agents.map((a) => a.entries));
  const shown = agents.slice(0, 12);
  return (
    <svg viewBox={`0 0 420 ${shown.length * 22 + 6}`} width="420" role="img" aria-label={`Entries per agent: ${shown.map((a) => `${a.agent_id ?? '(no agent)'}: ${a.entries}`).join('; ')}`} data-testid="entries-per-agent">
      {shown.map((a, i) => (
        <g key={a.agent_id ?? '-'}>
          <text x={0} y={i * 22 + 15} font-size="11">
            {(a.agent_id ?? '(no agent)').slice(0, 22)}
          </text>
          <rect x={150} y={i * 22 + 4} width={(a.entries / max) * 220} height={14} fill="#7a4f01">
            <title>{`${a.agent_id ?? '(no agent)'}: ${a.entries} entries`}</title>
          </rect>
          <text x={155 + (a.entries / max) * 220} y={i * 22 + 15} font-size="11">
            {a.entries}
          </text>
        </g>
      ))}
    </svg>
  );
}

export function Overview() {
  const [usage, setUsage] = useState<Usage | null>(null);
  const [status, setStatus] = useState<Status | null>(null);
  const [traces, setTraces] = useState<TraceRow[]>([]);
  const [pending, setPending] = useState<number | null>(null);
  const [incidents, setIncidents] = useState<number | null>(null);
  const [holds, setHolds] = useState<Hold[]>([]);
  const [error, setError] = useState('');
  useEffect(() => {
    const fail = (err: unknown) => setError(message(err));
    void api<Usage>('/usage').then(setUsage, fail);
    void api<Status>('/integrity/status').then(setStatus, fail);
    void api<{ items: TraceRow[] }>('/traces?limit=200').then((r) => setTraces(r.items.filter((t) => t.anomaly_detected === true)), fail);
    void api<{ items: unknown[] }>('/approvals?status=pending&limit=500').then((r) => setPending(r.items.length), fail);
    void api<{ items: unknown[] }>('/incidents?status=open&limit=500').then((r) => setIncidents(r.items.length), fail);
    void api<{ items: Hold[] }>('/compliance/holds').then((r) => setHolds(r.items.filter((h) => h.status === 'active')), fail);
  }, []);
  const ok = status?.chain_status === 'valid' || status?.chain_status === 'unverified';
  return (
    <main>
      <h1>Overview</h1>
      <ErrorLine error={error} />
      <div class="tiles">
        <section class="card" aria-label="Integrity">
          <h2>Integrity</h2>
          {status ? (
            <>
              <p class={`badge ${status.chain_status === 'valid' ? 'ok' : ok ? 'warn' : 'bad'}`}>
                Chain {status.chain_status}: {status.violation_count} violation{status.violation_count === 1 ? '' : 's'}, {status.coverage_percent}% verified
              </p>
              <p>
                Last full verification: {status.last_verified_at ?? 'never'}; head seq {status.head?.seq ?? '–'}; latest checkpoint {status.checkpoint?.tree_size ?? '–'}.
              </p>
              <p>
                Witnesses: {status.witnesses.items.length === 0 ? 'none configured' : `${status.witnesses.latest_checkpoint_cosigned_by.length} of ${status.witnesses.items.length} cosigned the latest checkpoint (quorum ${status.witnesses.quorum}: ${status.witnesses.quorum_met ? 'met' : 'NOT met'})`}.
              </p>
              <a href="#/integrity">Integrity page</a>
            </>
          ) : (
            <p aria-busy="true">Loading…</p>
          )}
        </section>
        <section class="card" aria-label="Waiting for a person">
          <h2>Waiting for a person</h2>
          <p>
            <a href="#/approvals">{pending ?? '…'} approval request{pending === 1 ? '' : 's'} pending</a>
          </p>
          <p>
            <a href="#/incidents">{incidents ?? '…'} open incident{incidents === 1 ? '' : 's'}</a>
          </p>
          <p>
            <a href="#/traces">{traces.length} trace{traces.length === 1 ? '' : 's'} with an anomaly</a>
          </p>
        </section>
        <section class="card" aria-label="Retention and legal holds">
          <h2>Retention and legal holds</h2>
          <p>
            Content kept {status?.retention.content_days === null || status?.retention.content_days === undefined ? 'forever' : `${status.retention.content_days} days`}; last run {status?.retention.last_run_at ?? 'never'}; {status?.retention.erased_total ?? 0} entries erased so far.
          </p>
          <p>
            {holds.length} legal hold{holds.length === 1 ? '' : 's'} in force{holds.length > 0 ? `: ${holds.map((h) => h.case_reference ?? h.reason).join('; ')}` : ''}.
          </p>
          <a href="#/compliance">Compliance page</a>
        </section>
      </div>
      <section class="card" aria-label="Events per day">
        <h2>Events per day{usage ? ` (${usage.from} to ${usage.to}, UTC)` : ''}</h2>
        {usage ? <PerDay days={usage.by_day} from={usage.from} to={usage.to} /> : <p aria-busy="true">Loading…</p>}
      </section>
      <section class="card" aria-label="Entries per agent">
        <h2>Entries per agent</h2>
        {usage ? <PerAgent agents={usage.by_agent} /> : <p aria-busy="true">Loading…</p>}
      </section>
      {traces.length > 0 && (
        <section class="card" aria-label="Traces with anomalies">
          <h2>Traces with anomalies</h2>
          <ul>
            {traces.slice(0, 10).map((t) => (
              <li key={t.trace_id}>
                <a href={`#/logs?trace_id=${t.trace_id}`} class="mono">
                  {t.trace_id}
                </a>{' '}
                {t.anomaly_type ?? ''} · {t.event_count} events · last {t.last_at}
              </li>
            ))}
          </ul>
        </section>
      )}
    </main>
  );
}
