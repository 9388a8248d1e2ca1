// Traces and replays: the root cause, timeline, causal graph (its own chunk), staleness, and the
// whole trace verified in the page.
import type { Answer } from '@audit-ledger/sdk';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { type Verdict, pinnedKeys, verifyTrace } from '../verify';
import { Badge, ErrorLine, message } from '../ui';

type TraceRow = Answer<'listTraces'>['items'][number];

export function Traces() {
  const [items, setItems] = useState<TraceRow[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState('');
  const load = async (after: string | null) => {
    try {
      const page = await api<{ items: TraceRow[]; next_cursor: string | null }>(`/traces?limit=50${after ? `&cursor=${encodeURIComponent(after)}` : ''}`);
      setItems((prev) => (after ? [...prev, ...page.items] : page.items));
      setCursor(page.next_cursor);
    } catch (err) {
      setError(message(err));
    }
  };
  useEffect(() => void load(null), []);
  const replay = async (traceId: string, events: number) => {
    // What an earlier attempt said is not left on screen.
    setError('');
    try {
      // The newest replay of the trace, when nothing was added to it since: no new session for the same view.
      const [latest] = (await api<{ items: Array<{ id: string; event_count: number }> }>(`/forensics/replays?trace_id=${traceId}&limit=1`)).items;
      if (latest && latest.event_count === events) {
        location.hash = `#/replays/${latest.id}`;
        return;
      }
      const s = await api<{ id: string }>('/forensics/replays', { method: 'POST', body: { trace_id: traceId, metadata: { opened_from: 'console' } } });
      location.hash = `#/replays/${s.id}`;
    } catch (err) {
      setError(message(err));
    }
  };
  return (
    <main>
      <h1>Traces</h1>
      <ErrorLine error={error} />
      <table aria-label="Traces">
        <thead>
          <tr>
            <th scope="col">Trace</th>
            <th scope="col">First</th>
            <th scope="col">Last</th>
            <th scope="col">Events</th>
            <th scope="col">Agents</th>
            <th scope="col">Anomaly</th>
            <th scope="col">Replay</th>
          </tr>
        </thead>
        <tbody>
          {items.map((r) => (
            <tr key={r.trace_id}>
              <td class="mono">
                <a href={`#/logs?trace_id=${r.trace_id}`}>{r.trace_id}</a>
              </td>
              <td>{r.first_at}</td>
              <td>{r.last_at}</td>
              <td>{r.event_count}</td>
              <td>{r.agents.join(', ')}</td>
              <td>{r.anomaly_detected === null ? 'not replayed' : r.anomaly_detected ? <span class="badge bad">{r.anomaly_type ?? 'found'}</span> : 'none'}</td>
              <td>
                <button type="button" onClick={() => void replay(r.trace_id, r.event_count)} aria-label={`Replay trace ${r.trace_id}`}>
                  Replay
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {cursor && (
        <button type="button" class="secondary" onClick={() => void load(cursor)}>
          Load more
        </button>
      )}
    </main>
  );
}

type TimelineItem = Answer<'getReplayTimeline'>['items'][number];
type RootCause = Answer<'getReplayRootCause'>;
type Staleness = Answer<'getReplayStaleness'>;

/**
 * A trace's verdicts in this page, by trace: asking for an evidence bundle is recorded in the ledger
 * (evidence.generated), so a verdict is kept and shown again rather than asked for anew each visit.
 */
const checked = new Map<string, { verdict: Verdict; at: number }>();

/** Verifies a whole trace in the page (its evidence bundle, with the trusted keys). */
function TraceCheck({ traceId }: { traceId: string | undefined }) {
  const [fresh, setVerdict] = useState<{ verdict: Verdict; at: number } | null>(null);
  const [error, setError] = useState('');
  if (!traceId) return null;
  // The trace id arrives after the first render (the session is fetched): the kept verdict is read here.
  const verdict = fresh ?? checked.get(traceId) ?? null;
  const run = async () => {
    if (pinnedKeys().length === 0) {
      location.hash = `#/keys?return=${encodeURIComponent(location.hash)}`;
      return;
    }
    // What an earlier attempt said is not left on screen.
    setError('');
    try {
      const done = { verdict: await verifyTrace(traceId), at: Date.now() };
      checked.set(traceId, done);
      setVerdict(done);
    } catch (err) {
      setError(message(err));
    }
  };
  return (
    <section aria-label="Trace verification">
      <button type="button" onClick={() => void run()}>
        {verdict ? 'Verify this trace again' : 'Verify this trace in the browser'}
      </button>
      {verdict && <p>Checked at {new Date(verdict.at).toISOString()} (each check asks for an evidence bundle, recorded in the ledger).</p>}
      {verdict && <Badge verdict={verdict.verdict} />}
      <ErrorLine error={error} />
    </section>
  );
}

export function Replay({ id }: { id: string }) {
  const [data, setData] = useState<{ timeline: TimelineItem[]; graph: import('../graph').Graph; staleness: Staleness; rootCause: RootCause } | null>(null);
  const [session, setSession] = useState<{ trace_id: string } | null>(null);
  const [others, setOthers] = useState<Array<{ id: string; created_at: string; event_count: number }>>([]);
  const [GraphView, setGraphView] = useState<null | (typeof import('../graph'))['default']>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    // Another replay: never show the previous one's data while this one loads.
    setData(null);
    setError('');
    const base = `/forensics/replays/${id}`;
    Promise.all([
      api<{ items: TimelineItem[] }>(`${base}/timeline`),
      api<import('../graph').Graph>(`${base}/causal-graph`),
      api<Staleness>(`${base}/staleness`),
      api<RootCause>(`${base}/root-cause`),
    ]).then(([tl, graph, staleness, rootCause]) => setData({ timeline: tl.items, graph, staleness, rootCause }), (err) => setError(message(err)));
    api<{ trace_id: string }>(base).then((s) => {
      setSession(s);
      // The trace's other replays (newest first): a replay is pinned to the trace as it was.
      void api<{ items: Array<{ id: string; created_at: string; event_count: number }> }>(`/forensics/replays?trace_id=${s.trace_id}&limit=10`).then((r) => setOthers(r.items), () => undefined);
    }, () => undefined);
    // The graph's layout code is loaded only here.
    void import('../graph').then((m) => setGraphView(() => m.default));
  }, [id]);
  if (error)
    return (
      <main>
        <ErrorLine error={error} />
      </main>
    );
  if (!data) return <main aria-busy="true">Loading…</main>;
  const t0 = Math.min(...data.timeline.map((i) => Date.parse(i.timestamp)));
  const span = Math.max(1, Math.max(...data.timeline.map((i) => Date.parse(i.timestamp))) - t0);
  const rc = data.rootCause;
  const open = (logId: string) => (location.hash = `#/logs/${logId}`);
  return (
    <main>
      <p>
        <a href="#/traces">← Traces</a>
      </p>
      <h1>Replay {id}</h1>
      <section class={`card badge ${rc.detected ? 'bad' : 'ok'}`} aria-label="Root cause" data-testid="root-cause">
        <h2>{rc.detected ? `Root cause: ${rc.root_cause_type}` : 'No anomaly behind the outcome'}</h2>
        <p>
          Outcome: {rc.outcome.kind} ({rc.outcome.description}). Confidence {rc.confidence}.
        </p>
        <p>{rc.description}</p>
        <p>Remediation: {rc.remediation}</p>
        {rc.evidence.length > 0 && (
          <p>
            Evidence:{' '}
            {rc.evidence.map((e, i) => (
              <>
                {i > 0 && ' → '}
                <a key={e} href={`#/logs/${e}`}>
                  {data.timeline.find((x) => x.log_id === e)?.event_type ?? e}
                </a>
              </>
            ))}
          </p>
        )}
      </section>
      {rc.findings.length > 0 && (
        <section class="card" aria-label="Findings">
          <h2>Findings ({rc.findings.length})</h2>
          <ul>
            {rc.findings.map((f, i) => (
              <li key={i}>
                <strong>{f.type}</strong> ({f.severity}): {f.description}{' '}
                {f.evidence.map((e) => (
                  <a key={e} href={`#/logs/${e}`} class="mono">
                    {data.timeline.find((x) => x.log_id === e)?.event_type ?? 'entry'}{' '}
                  </a>
                ))}
              </li>
            ))}
          </ul>
        </section>
      )}
      <TraceCheck traceId={session?.trace_id} />
      {others.length > 1 && (
        <nav aria-label="Replays of this trace">
          Replays of this trace:{' '}
          {others.map((o, i) => (
            <span key={o.id}>
              {i > 0 && ' · '}
              {o.id === id ? (
                <strong>this one ({o.event_count} events, {o.created_at})</strong>
              ) : (
                <a href={`#/replays/${o.id}`}>
                  {o.event_count} events, {o.created_at}
                </a>
              )}
            </span>
          ))}
        </nav>
      )}
      <h2>Timeline</h2>
      <table aria-label="Timeline">
        <thead>
          <tr>
            <th scope="col">Seq</th>
            <th scope="col">Time</th>
            <th scope="col">Event</th>
            <th scope="col">Integrity</th>
            <th scope="col">When</th>
          </tr>
        </thead>
        <tbody>
          {data.timeline.map((i) => (
            <tr key={i.log_id}>
              <td>
                <a href={`#/logs/${i.log_id}`}>{i.seq}</a>
              </td>
              <td>{i.timestamp}</td>
              <td>{i.event_type}</td>
              <td>{i.integrity}</td>
              <td>
                <svg width="220" height="12" aria-hidden="true">
                  <rect x={((Date.parse(i.timestamp) - t0) / span) * 210} y="1" width="8" height="10" fill={i.integrity === 'invalid' ? '#a50e0e' : '#0b57d0'} />
                </svg>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Causal graph</h2>
      {GraphView ? <GraphView graph={data.graph} onOpen={open} /> : <p aria-busy="true">Loading the graph…</p>}
      <h2>Stale context: {data.staleness.overall_staleness_rating}</h2>
      {data.staleness.findings.length === 0 ? (
        <p>No decision used context past its max age.</p>
      ) : (
        <ul>
          {data.staleness.findings.map((f) => (
            <li key={`${f.source_id}-${f.used_by_log_id}`}>
              <a href={`#/logs/${f.used_by_log_id}`}>{f.source_id}</a>: {f.staleness}, {f.age_seconds} s old (max {f.max_age_seconds} s). {f.details}
            </li>
          ))}
        </ul>
      )}
    </main>
  );
}
