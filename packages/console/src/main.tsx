// The console: sign-in, the logs table with an entry drawer that verifies the entry in this
// browser, integrity, and key pinning. Routing is in the URL hash (#/logs?event_type=…,
// #/logs/<log_id>, #/integrity, #/keys), so every view can be shared as a link.
import { canonicalJson, type EntryBody, entryBody, type JsonObject } from '@audit-ledger/core';
import { render } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, ApiProblem, currentSession, type Session, signIn, signOut } from './api';
import { pinKey, pinnedKeys, type ServiceKey, serviceKeys, trustedKeys, unpinAll, type Verdict, verifyEntry, verifyTrace } from './verify';

interface Route {
  page: 'logs' | 'entry' | 'integrity' | 'keys' | 'traces' | 'replay' | 'evidence' | 'reviews' | 'admin';
  id?: string;
  query: URLSearchParams;
}

function parseHash(): Route {
  const [path = '', q = ''] = location.hash.replace(/^#/, '').split('?');
  const parts = path.split('/').filter(Boolean);
  const query = new URLSearchParams(q);
  if (parts[0] === 'logs' && parts[1]) return { page: 'entry', id: parts[1], query };
  if (parts[0] === 'integrity') return { page: 'integrity', query };
  if (parts[0] === 'traces') return { page: 'traces', query };
  if (parts[0] === 'evidence') return { page: 'evidence', query };
  if (parts[0] === 'reviews') return { page: 'reviews', query };
  if (parts[0] === 'admin') return { page: 'admin', query };
  if (parts[0] === 'replays' && parts[1]) return { page: 'replay', id: parts[1], query };
  if (parts[0] === 'keys') return { page: 'keys', query };
  return { page: 'logs', query };
}

function useRoute(): Route {
  const [route, setRoute] = useState(parseHash);
  useEffect(() => {
    const on = () => setRoute(parseHash());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

/** A failure the page could not recover from, announced to assistive technology. */
function ErrorLine({ error }: { error: string }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null;
}

const message = (err: unknown) => (err instanceof ApiProblem ? `${err.problem.title}: ${err.problem.detail}` : String(err));

function SignIn({ onSession }: { onSession: (s: Session) => void }) {
  const [error, setError] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    try {
      onSession(await signIn(String(form.get('email')), String(form.get('password'))));
    } catch (err) {
      setError(message(err));
    }
  };
  return (
    <main>
      <form class="login" onSubmit={submit} aria-labelledby="signin-title">
        <h1 id="signin-title">audit-ledger</h1>
        <label>
          Email
          <input name="email" type="email" autocomplete="username" required />
        </label>
        <label>
          Password
          <input name="password" type="password" autocomplete="current-password" required />
        </label>
        <button type="submit">Sign in</button>
        <ErrorLine error={error} />
      </form>
    </main>
  );
}

function ChangePassword({ onDone }: { onDone: () => void }) {
  const [error, setError] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    try {
      await api('/auth/password', { method: 'POST', body: { current_password: String(form.get('current')), new_password: String(form.get('next')) } });
      onDone();
    } catch (err) {
      setError(message(err));
    }
  };
  return (
    <main>
      <form class="login" onSubmit={submit} aria-labelledby="pw-title">
        <h1 id="pw-title">Set your own password</h1>
        <p>You signed in with a one-time password. Choose your own (at least 12 characters) to go on.</p>
        <label>
          One-time password
          <input name="current" type="password" autocomplete="current-password" required />
        </label>
        <label>
          New password
          <input name="next" type="password" autocomplete="new-password" minLength={12} required />
        </label>
        <button type="submit">Save</button>
        <ErrorLine error={error} />
      </form>
    </main>
  );
}

/** A stored entry as GET /logs/{id} answers it. */
interface Entry extends EntryBody {
  log_id: string;
  seq: number;
  format_version: number;
  company_id: string;
  extra: JsonObject | null;
  event_type: string;
  created_at: string;
  timestamp: string | null;
  source: string | null;
  agent_id: string | null;
  trace_id: string | null;
  session_id: string | null;
  data: JsonObject;
  hash: string;
  prev_hash: string;
  signature: string;
  key_id: string;
  [field: string]: unknown;
}

const COLUMNS = [
  ['seq', 'Seq'],
  ['created_at', 'Created'],
  ['timestamp', 'Client time'],
  ['event_type', 'Event type'],
  ['source', 'Source'],
  ['agent_id', 'Agent'],
  ['trace_id', 'Trace'],
  ['session_id', 'Session'],
] as const;
const DEFAULT_COLUMNS = ['seq', 'created_at', 'event_type', 'source', 'agent_id', 'trace_id'];

const FILTERS = [
  ['event_type', 'Event type'],
  ['source', 'Source'],
  ['agent_id', 'Agent'],
  ['trace_id', 'Trace id'],
  ['session_id', 'Session id'],
  ['from', 'From (created at, ISO)'],
  ['to', 'To (created at, ISO)'],
] as const;

/**
 * The logs table: one page of 100 entries at a time, newest first, following the API's cursor
 * (kept in the URL as `page`, so a page is a link). The page never holds more than 100 rows,
 * however large the ledger: it stays as fast at 100,000 entries as at 100.
 */
function Logs({ query }: { query: URLSearchParams }) {
  const [items, setItems] = useState<Entry[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState('');
  const page = query.get('page');
  const load = useCallback(
    async (after: string | null) => {
      // Only the filters go to the API (the URL also holds view state such as the columns).
      const q = new URLSearchParams();
      for (const [k] of FILTERS) {
        const v = query.get(k);
        if (v) q.set(k, v);
      }
      q.set('limit', '100');
      q.set('order', 'desc');
      if (after) q.set('cursor', after);
      try {
        const answer = await api<{ items: Entry[]; next_cursor: string | null }>(`/logs?${q}`);
        setItems(answer.items);
        setCursor(answer.next_cursor);
        setError('');
      } catch (err) {
        setError(message(err));
      }
    },
    [query.toString()],
  );
  useEffect(() => void load(page), [load, page]);
  const goTo = (next: string | null) => {
    const q = new URLSearchParams(query);
    if (next) q.set('page', next);
    else q.delete('page');
    location.hash = `#/logs?${q}`;
  };
  const cols = (query.get('cols') ?? DEFAULT_COLUMNS.join(',')).split(',').filter((c) => COLUMNS.some(([k]) => k === c));
  const toggle = (col: string) => {
    const next = cols.includes(col) ? cols.filter((c) => c !== col) : COLUMNS.map(([k]) => k).filter((k) => k === col || cols.includes(k));
    const q = new URLSearchParams(query);
    q.set('cols', next.join(','));
    location.hash = `#/logs?${q}`;
  };
  const filter = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const q = new URLSearchParams();
    if (query.get('cols')) q.set('cols', query.get('cols') as string);
    for (const [k] of FILTERS) {
      const v = String(form.get(k) ?? '').trim();
      if (v) q.set(k, v);
    }
    location.hash = `#/logs${q.size ? `?${q}` : ''}`;
  };
  return (
    <main>
      <h1>Logs</h1>
      <form class="filters" onSubmit={filter} aria-label="Filter entries">
        {FILTERS.map(([k, label]) => (
          <label key={k}>
            {label}
            <input name={k} defaultValue={query.get(k) ?? ''} />
          </label>
        ))}
        <button type="submit">Filter</button>
      </form>
      <details class="card">
        <summary>Columns</summary>
        <fieldset>
          <legend>Columns shown</legend>
          {COLUMNS.map(([k, label]) => (
            <label key={k} class="inline">
              <input type="checkbox" checked={cols.includes(k)} onChange={() => toggle(k)} /> {label}
            </label>
          ))}
        </fieldset>
      </details>
      <ErrorLine error={error} />
      <table aria-label="Ledger entries">
        <thead>
          <tr>
            {COLUMNS.filter(([k]) => cols.includes(k)).map(([k, label]) => (
              <th key={k} scope="col">
                {label}
              </th>
            ))}
            <th scope="col">Open</th>
          </tr>
        </thead>
        <tbody>
          {items.map((e) => (
            <tr key={e.log_id} class="row" onClick={() => (location.hash = `#/logs/${e.log_id}`)}>
              {COLUMNS.filter(([k]) => cols.includes(k)).map(([k]) => (
                <td key={k} class={k.endsWith('_id') ? 'mono' : undefined}>
                  {e[k] === null || e[k] === undefined ? '' : String(e[k])}
                </td>
              ))}
              <td>
                <a href={`#/logs/${e.log_id}`} aria-label={`Open entry ${e.seq}`}>
                  open
                </a>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <nav aria-label="Pages" class="pages">
        <button type="button" class="secondary" disabled={!page} onClick={() => goTo(null)}>
          Newest
        </button>{' '}
        <button type="button" class="secondary" disabled={!cursor} onClick={() => goTo(cursor)}>
          Older
        </button>{' '}
        <span>
          {items.length} entries on this page{items.length > 0 ? `: seq ${items[0]?.seq} to ${items.at(-1)?.seq}` : ''}.
        </span>
      </nav>
    </main>
  );
}

function Badge({ verdict }: { verdict: Verdict }) {
  return (
    <div class={`badge ${verdict.ok ? 'ok' : 'bad'}`} role="status" data-testid="verify-badge">
      <div>{verdict.ok ? 'Verified in this browser' : 'Verification FAILED'} ({verdict.ms.toFixed(0)} ms)</div>
      <ul>
        {verdict.checks.map((c) => (
          <li key={c.what}>
            {c.ok ? '✓' : '✗'} {c.what}
          </li>
        ))}
      </ul>
    </div>
  );
}

function EntryPage({ id }: { id: string }) {
  const [entry, setEntry] = useState<Entry | null>(null);
  const [verdict, setVerdict] = useState<Verdict | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    setVerdict(null);
    api<Entry>(`/logs/${id}`).then(setEntry, (err) => setError(message(err)));
  }, [id]);
  if (error)
    return (
      <main>
        <ErrorLine error={error} />
      </main>
    );
  if (!entry) return <main aria-busy="true">Loading…</main>;
  const verify = async () => {
    if (pinnedKeys().length === 0) {
      location.hash = `#/keys?return=${encodeURIComponent(`#/logs/${id}`)}`;
      return;
    }
    try {
      setVerdict(await verifyEntry(entry));
    } catch (err) {
      setError(message(err));
    }
  };
  const { data, extra, ...fields } = entry;
  return (
    <main>
      <p>
        <a href="#/logs">← Logs</a>
      </p>
      <h1>
        Entry {entry.seq}: {entry.event_type}
      </h1>
      <button type="button" onClick={() => void verify()}>
        Verify in this browser
      </button>{' '}
      {entry.event_type === 'decision.made' && typeof entry.data.decision_id === 'string' && (
        <a href={`#/reviews?decision_id=${encodeURIComponent(entry.data.decision_id)}`}>Review this decision</a>
      )}
      {verdict && <Badge verdict={verdict} />}
      <section class="drawer" aria-label="Entry fields">
        <dl class="fields">
          {Object.entries(fields).map(([k, v]) => (
            <>
              <dt key={`${k}-t`}>{k}</dt>
              <dd key={`${k}-d`} class="mono">
                {v === null ? '—' : String(v)}
              </dd>
            </>
          ))}
        </dl>
        <h2>data</h2>
        <pre class="mono">{JSON.stringify(data, null, 2)}</pre>
        <h2>The exact text hashed (RFC 8785 canonical JSON of the entry body)</h2>
        <pre class="mono" data-testid="canonical-json">{canonicalJson(entryBody(entry))}</pre>
        {extra !== null && extra !== undefined && (
          <>
            <h2>extra</h2>
            <pre class="mono">{JSON.stringify(extra, null, 2)}</pre>
          </>
        )}
      </section>
    </main>
  );
}

function Keys({ query }: { query: URLSearchParams }) {
  const [keys, setKeys] = useState<ServiceKey[]>([]);
  const [pinned, setPinned] = useState(pinnedKeys);
  const [endorsed, setEndorsed] = useState<Map<string, string>>(new Map());
  useEffect(() => void serviceKeys().then((r) => setKeys(r.items)), []);
  useEffect(() => void trustedKeys().then((t) => setEndorsed(t.endorsed)), [pinned]);
  const back = query.get('return');
  return (
    <main>
      <h1>Pinned keys</h1>
      <p>
        The console trusts only the keys you pin here, in this browser. Compare a key's id and verifier key with the ones your operator published
        (out of band) before you pin it. A key the service shows that you did not pin is never used.
      </p>
      <table aria-label="Signing keys">
        <thead>
          <tr>
            <th scope="col">Key id</th>
            <th scope="col">Verifier key</th>
            <th scope="col">Active</th>
            <th scope="col">Pinned</th>
          </tr>
        </thead>
        <tbody>
          {keys.map((k) => {
            const isPinned = pinned.some((p) => p.key_id === k.key_id && p.public_key === k.public_key);
            const conflict = pinned.some((p) => p.key_id === k.key_id && p.public_key !== k.public_key);
            return (
              <tr key={k.key_id}>
                <td class="mono">{k.key_id}</td>
                <td class="mono">{k.note_verifier_key}</td>
                <td>
                  {k.active_from} – {k.active_to ?? 'now'}
                </td>
                <td>
                  {conflict ? (
                    <span class="badge bad">Changed: not the key you pinned</span>
                  ) : isPinned ? (
                    <span class="badge ok">Pinned</span>
                  ) : endorsed.has(k.key_id) ? (
                    <span class="badge ok">Trusted: {endorsed.get(k.key_id)}</span>
                  ) : pinned.length > 0 ? (
                    <>
                      <span class="badge bad" role="alert">
                        Not trusted: no signed transition from a key you pinned
                      </span>{' '}
                      <button
                        type="button"
                        class="secondary"
                        onClick={() => {
                          pinKey(k);
                          setPinned(pinnedKeys());
                        }}
                      >
                        Pin key {k.key_id} anyway
                      </button>
                    </>
                  ) : (
                    <button
                      type="button"
                      onClick={() => {
                        pinKey(k);
                        setPinned(pinnedKeys());
                        if (back) location.hash = back;
                      }}
                    >
                      Pin key {k.key_id}
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <p>
        <button
          type="button"
          class="secondary"
          onClick={() => {
            unpinAll();
            setPinned([]);
          }}
        >
          Forget all pinned keys
        </button>
      </p>
    </main>
  );
}

interface Status {
  chain_status: string;
  head: { seq: number; hash: string } | null;
  checkpoint: { tree_size: number; root_hash: string; timestamp: string; note?: string } | null;
  violation_count: number;
  coverage_percent: number | null;
  last_verified_at: string | null;
}

interface Violation {
  seq: number;
  log_id: string | null;
  kind: string;
  detail: string;
}
interface Job {
  job_id: string;
  status: string;
  report: { chain_status?: string; violation_count?: number; entries_checked?: number; violations?: Violation[] } | null;
}

/** Tree size over time, from the kept checkpoints (an SVG polyline; at most 500 points). */
function TreeChart({ points }: { points: Array<{ tree_size: number; timestamp: string }> }) {
  if (points.length === 0) return <p>No checkpoint yet.</p>;
  const t = points.map((p) => Date.parse(p.timestamp));
  const [t0, t1] = [Math.min(...t), Math.max(...t)];
  const max = Math.max(...points.map((p) => p.tree_size));
  const W = 600;
  const H = 160;
  const xy = points.map((p, i) => `${(((t[i] as number) - t0) / Math.max(1, t1 - t0)) * W},${H - (p.tree_size / Math.max(1, max)) * H}`).join(' ');
  return (
    <svg width={W + 20} height={H + 20} viewBox={`-10 -10 ${W + 20} ${H + 20}`} role="img" aria-label={`Tree size from ${points[0]?.tree_size} to ${max} over ${points.length} checkpoints`} data-testid="tree-chart">
      <polyline points={xy} fill="none" stroke="#0b57d0" stroke-width="2" />
      {points.length === 1 && <circle cx="0" cy="0" r="4" fill="#0b57d0" />}
    </svg>
  );
}

function Integrity() {
  const [status, setStatus] = useState<Status | null>(null);
  const [report, setReport] = useState<Job['report'] | undefined>(undefined);
  const [points, setPoints] = useState<Array<{ tree_size: number; timestamp: string }>>([]);
  const [job, setJob] = useState<Job | null>(null);
  const [error, setError] = useState('');
  const load = async () => {
    try {
      const [st, cps] = await Promise.all([api<Status>('/integrity/status'), api<{ items: Array<{ tree_size: number; timestamp: string }> }>('/integrity/checkpoints?limit=500')]);
      setStatus(st);
      setPoints(cps.items);
      setReport(await api<NonNullable<Job['report']>>('/integrity/report').catch((err) => (err instanceof ApiProblem && err.problem.status === 404 ? null : Promise.reject(err))));
    } catch (err) {
      setError(message(err));
    }
  };
  useEffect(() => void load(), []);
  const run = async () => {
    try {
      let j = await api<Job>('/integrity/verify', { method: 'POST', body: {} });
      setJob(j);
      while (j.status === 'queued' || j.status === 'running') {
        await new Promise((r) => setTimeout(r, 300));
        j = await api<Job>(`/integrity/jobs/${j.job_id}`);
        setJob(j);
      }
      await load();
    } catch (err) {
      setError(message(err));
    }
  };
  if (error)
    return (
      <main>
        <ErrorLine error={error} />
      </main>
    );
  if (!status) return <main aria-busy="true">Loading…</main>;
  const violations = report?.violations ?? [];
  const bad = status.violation_count > 0 || violations.length > 0;
  return (
    <main>
      <h1>Integrity</h1>
      <div class={`badge ${bad ? 'bad' : status.chain_status === 'valid' ? 'ok' : 'warn'}`} role="status" data-testid="integrity-badge">
        Chain status (as the service reports it): {status.chain_status}; {status.violation_count} violation(s)
      </div>
      <p>
        <button type="button" onClick={() => void run()} disabled={job !== null && (job.status === 'queued' || job.status === 'running')}>
          Run a full verification
        </button>{' '}
        {job && <span data-testid="job-status">Verification {job.job_id.slice(0, 8)}…: {job.status}</span>}
      </p>
      {violations.length > 0 && (
        <section class="card" aria-label="Violations">
          <h2>Violations found by the last full verification</h2>
          <ul>
            {violations.map((v) => (
              <li key={`${v.seq}-${v.kind}`}>
                {v.log_id ? <a href={`#/logs/${v.log_id}`}>entry {v.seq}</a> : `seq ${v.seq}`}: {v.kind}: {v.detail}
              </li>
            ))}
          </ul>
        </section>
      )}
      <div class="card">
        <h2>Head</h2>
        <p class="mono">{status.head ? `seq ${status.head.seq}, hash ${status.head.hash}` : 'empty'}</p>
      </div>
      <div class="card">
        <h2>Latest checkpoint</h2>
        <p class="mono">{status.checkpoint ? `size ${status.checkpoint.tree_size}, root ${status.checkpoint.root_hash}, ${status.checkpoint.timestamp}` : 'none yet'}</p>
        <h3>Tree size over time</h3>
        <TreeChart points={points} />
      </div>
      <div class="card">
        <h2>Verification</h2>
        <p>
          Coverage {status.coverage_percent ?? 0}%; last verified {status.last_verified_at ?? 'never'}
          {report ? `; the last full verification checked ${report.entries_checked ?? 0} entries: ${report.chain_status ?? 'failed'}` : ''}.
        </p>
      </div>
    </main>
  );
}

interface TraceRow {
  trace_id: string;
  first_at: string;
  last_at: string;
  event_count: number;
  agents: string[];
  anomaly_detected: boolean | null;
}

function Traces() {
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
  const replay = async (traceId: string) => {
    try {
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
              <td>{r.anomaly_detected === null ? 'not replayed' : r.anomaly_detected ? <span class="badge bad">found</span> : 'none'}</td>
              <td>
                <button type="button" onClick={() => void replay(r.trace_id)} aria-label={`Replay trace ${r.trace_id}`}>
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

interface TimelineItem {
  log_id: string;
  seq: number;
  event_type: string;
  timestamp: string;
  integrity: string;
  agent_id?: string | null;
}
interface RootCause {
  detected: boolean;
  root_cause_type: string;
  description: string;
  confidence: number;
  remediation: string;
  evidence: string[];
  outcome: { kind: string; bad: boolean; description: string };
}
interface Staleness {
  overall_staleness_rating: string;
  findings: Array<{ source_id: string; staleness: string; age_seconds: number; max_age_seconds: number; used_by_log_id: string; details: string }>;
}

/** Verifies a whole trace in the page (its evidence bundle, with the trusted keys). */
function TraceCheck({ traceId }: { traceId: string | undefined }) {
  const [verdict, setVerdict] = useState<Verdict | null>(null);
  const [error, setError] = useState('');
  if (!traceId) return null;
  const run = async () => {
    if (pinnedKeys().length === 0) {
      location.hash = `#/keys?return=${encodeURIComponent(location.hash)}`;
      return;
    }
    try {
      setVerdict(await verifyTrace(traceId));
    } catch (err) {
      setError(message(err));
    }
  };
  return (
    <section aria-label="Trace verification">
      <button type="button" onClick={() => void run()}>
        Verify this trace in the browser
      </button>
      {verdict && <Badge verdict={verdict} />}
      <ErrorLine error={error} />
    </section>
  );
}

function Replay({ id }: { id: string }) {
  const [data, setData] = useState<{ timeline: TimelineItem[]; graph: import('./graph').Graph; staleness: Staleness; rootCause: RootCause } | null>(null);
  const [session, setSession] = useState<{ trace_id: string } | null>(null);
  const [GraphView, setGraphView] = useState<null | (typeof import('./graph'))['default']>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    const base = `/forensics/replays/${id}`;
    Promise.all([
      api<{ items: TimelineItem[] }>(`${base}/timeline`),
      api<import('./graph').Graph>(`${base}/causal-graph`),
      api<Staleness>(`${base}/staleness`),
      api<RootCause>(`${base}/root-cause`),
    ]).then(([tl, graph, staleness, rootCause]) => setData({ timeline: tl.items, graph, staleness, rootCause }), (err) => setError(message(err)));
    api<{ trace_id: string }>(base).then(setSession, () => undefined);
    // The graph's layout code is loaded only here.
    void import('./graph').then((m) => setGraphView(() => m.default));
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
      <TraceCheck traceId={session?.trace_id} />
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

function Evidence({ query }: { query: URLSearchParams }) {
  const trace = query.get('trace_id') ?? '';
  const from = query.get('from_seq') ?? '';
  const to = query.get('to_seq') ?? '';
  const select = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const q = new URLSearchParams();
    for (const k of ['trace_id', 'from_seq', 'to_seq']) {
      const v = String(form.get(k) ?? '').trim();
      if (v) q.set(k, v);
    }
    location.hash = `#/evidence?${q}`;
  };
  const selection = trace ? `trace_id=${encodeURIComponent(trace)}` : from && to ? `from_seq=${from}&to_seq=${to}` : '';
  const exportFilter = trace ? `&trace_id=${encodeURIComponent(trace)}` : '';
  const downloadKeys = () => {
    const blob = new Blob([JSON.stringify({ items: pinnedKeys() }, null, 2)], { type: 'application/json' });
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = 'pinned-keys.json';
    a.click();
    URL.revokeObjectURL(a.href);
  };
  return (
    <main>
      <h1>Evidence</h1>
      <p>Exports and evidence bundles for a trace or a range of entries, to hand to an auditor or a regulator. Downloads use your session.</p>
      <form class="filters" onSubmit={select} aria-label="Select entries">
        <label>
          Trace id
          <input name="trace_id" defaultValue={trace} />
        </label>
        <label>
          From seq
          <input name="from_seq" inputMode="numeric" defaultValue={from} />
        </label>
        <label>
          To seq (inclusive)
          <input name="to_seq" inputMode="numeric" defaultValue={to} />
        </label>
        <button type="submit">Select</button>
      </form>
      <div class="card">
        <h2>Downloads</h2>
        <ul>
          <li>
            <a href={`/api/v1/exports/logs?format=jsonl${exportFilter}`}>JSON Lines export</a> (verifiable; the whole ledger when no trace is selected)
          </li>
          <li>
            <a href={`/api/v1/exports/logs?format=csv${exportFilter}`}>CSV export</a> (for reading)
          </li>
          <li>{selection ? <a href={`/api/v1/exports/evidence?${selection}`}>Evidence bundle</a> : 'Evidence bundle: select a trace or a range first'}</li>
          <li>
            <button type="button" class="secondary" onClick={downloadKeys} disabled={pinnedKeys().length === 0}>
              Download the keys you pinned
            </button>
          </li>
        </ul>
      </div>
      <div class="card">
        <h2>Verify a bundle offline</h2>
        <p>With the keys you pinned (never the ones inside the bundle), on any machine with Node.js:</p>
        <pre class="mono">npx @audit-ledger/verify evidence.json --public-key pinned-keys.json</pre>
        <p>It recomputes every hash, checks every signature and inclusion proof and the checkpoint's signature, and exits 0 only when all hold.</p>
      </div>
    </main>
  );
}

interface Override {
  id: string;
  log_id: string;
  reviewer: string;
  rejection_reason: string;
  decision_id: string | null;
  trace_id: string | null;
  created_at: string;
}

/** Human review: recorded rejections; reviewers and admins record one (auditors read only). */
function Reviews({ query, role, email }: { query: URLSearchParams; role: string; email: string }) {
  const [items, setItems] = useState<Override[]>([]);
  const [error, setError] = useState('');
  const [done, setDone] = useState('');
  const load = () => api<{ items: Override[] }>('/hitl/overrides?limit=100').then((r) => setItems(r.items), (err) => setError(message(err)));
  useEffect(() => void load(), []);
  const canReview = role === 'admin' || role === 'reviewer';
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const decision = String(form.get('decision_id') ?? '').trim();
    try {
      const r = await api<Override>('/hitl/reject', {
        method: 'POST',
        body: { reviewer: String(form.get('reviewer')), rejection_reason: String(form.get('reason')), ...(decision ? { decision_id: decision } : {}) },
      });
      setDone(`Rejection recorded as ledger entry ${r.log_id}`);
      setError('');
      await load();
    } catch (err) {
      setError(message(err));
    }
  };
  return (
    <main>
      <h1>Human review</h1>
      {canReview && (
        <form class="card" onSubmit={submit} aria-label="Reject a decision">
          <h2>Reject a decision</h2>
          <label>
            Decision id (data.decision_id)
            <input name="decision_id" defaultValue={query.get('decision_id') ?? ''} />
          </label>
          <label>
            Reviewer
            <input name="reviewer" defaultValue={email} required />
          </label>
          <label>
            Reason
            <input name="reason" required />
          </label>
          <button type="submit">Record the rejection</button>
        </form>
      )}
      {done && <p role="status">{done}</p>}
      <ErrorLine error={error} />
      <table aria-label="Rejections">
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Reviewer</th>
            <th scope="col">Reason</th>
            <th scope="col">Decision</th>
            <th scope="col">Entry</th>
          </tr>
        </thead>
        <tbody>
          {items.map((o) => (
            <tr key={o.id}>
              <td>{o.created_at}</td>
              <td>{o.reviewer}</td>
              <td>{o.rejection_reason}</td>
              <td class="mono">{o.decision_id ?? ''}</td>
              <td>
                <a href={`#/logs/${o.log_id}`}>entry</a>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </main>
  );
}

interface UserRow {
  user_id: string;
  email: string;
  role: string;
  disabled: boolean;
  password_change_required: boolean;
}
interface KeyRow {
  id: string;
  name: string;
  key_prefix: string;
  status: string;
  rate_limit_per_minute: number;
  created_at: string;
}

interface EndpointRow {
  id: string;
  url: string;
  event_types: string[];
  enabled: boolean;
  disabled_reason: string | null;
}
interface DeliveryRow {
  id: string;
  event_type: string;
  attempted_at: string;
  status_code: number | null;
  result: string;
  error: string | null;
}
const EVENT_TYPES = ['api_key.created', 'api_key.revoked', 'integrity.violation_detected', 'integrity.verification_completed', 'hitl.rejected', 'forensics.anomaly_detected', 'webhook_endpoint.disabled'];

/** Events and requests per day, as bars (the usage of the period the service reports). */
function UsageChart({ days }: { days: Array<{ day: string; api_requests: number; events_ingested: number }> }) {
  if (days.length === 0) return <p>No usage recorded yet.</p>;
  const max = Math.max(1, ...days.map((d) => Math.max(d.api_requests, d.events_ingested)));
  const bw = 14;
  return (
    <svg width={days.length * (2 * bw + 10) + 20} height={140} role="img" aria-label={`Usage per day: ${days.map((d) => `${d.day}: ${d.events_ingested} events, ${d.api_requests} requests`).join('; ')}`} data-testid="usage-chart">
      {days.map((d, i) => {
        const x = 10 + i * (2 * bw + 10);
        const he = (d.events_ingested / max) * 110;
        const hr = (d.api_requests / max) * 110;
        return (
          <g key={d.day}>
            <rect x={x} y={115 - he} width={bw} height={he} fill="#0b57d0">
              <title>{`${d.day}: ${d.events_ingested} events`}</title>
            </rect>
            <rect x={x + bw} y={115 - hr} width={bw} height={hr} fill="#7a4f01">
              <title>{`${d.day}: ${d.api_requests} requests`}</title>
            </rect>
            <text x={x} y={132} font-size="10">
              {d.day.slice(5)}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

function Webhooks({ onShown }: { onShown: (text: string) => void }) {
  const [endpoints, setEndpoints] = useState<EndpointRow[]>([]);
  const [open, setOpen] = useState<string | null>(null);
  const [deliveries, setDeliveries] = useState<DeliveryRow[]>([]);
  const [error, setError] = useState('');
  const load = () => api<{ items: EndpointRow[] }>('/webhooks/endpoints').then((r) => setEndpoints(r.items), (err) => setError(message(err)));
  useEffect(() => void load(), []);
  const show = async (id: string) => {
    setOpen(id);
    try {
      setDeliveries((await api<{ items: DeliveryRow[] }>(`/webhooks/endpoints/${id}/deliveries?limit=20`)).items);
    } catch (err) {
      setError(message(err));
    }
  };
  const create = async (e: Event) => {
    e.preventDefault();
    const el = e.currentTarget as HTMLFormElement;
    const form = new FormData(el);
    try {
      const r = await api<{ secret: string; url: string }>('/webhooks/endpoints', { method: 'POST', body: { url: String(form.get('url')), event_types: form.getAll('event_types').map(String) } });
      onShown(`Signing secret for ${r.url} (shown once): ${r.secret}`);
      el.reset();
      setError('');
      await load();
    } catch (err) {
      setError(message(err));
    }
  };
  return (
    <section class="card" aria-label="Webhooks">
      <h2>Webhooks</h2>
      <ErrorLine error={error} />
      <table aria-label="Webhook endpoints">
        <thead>
          <tr>
            <th scope="col">URL</th>
            <th scope="col">Events</th>
            <th scope="col">State</th>
            <th scope="col">Deliveries</th>
          </tr>
        </thead>
        <tbody>
          {endpoints.map((ep) => (
            <tr key={ep.id}>
              <td class="mono">{ep.url}</td>
              <td>{ep.event_types.join(', ')}</td>
              <td>{ep.enabled ? 'enabled' : `disabled (${ep.disabled_reason ?? ''})`}</td>
              <td>
                <button type="button" class="secondary" onClick={() => void show(ep.id)}>
                  Deliveries of {ep.url}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {open && (
        <table aria-label="Deliveries">
          <thead>
            <tr>
              <th scope="col">Attempted</th>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Result</th>
            </tr>
          </thead>
          <tbody>
            {deliveries.map((d) => (
              <tr key={d.id}>
                <td>{d.attempted_at}</td>
                <td>{d.event_type}</td>
                <td>{d.status_code ?? d.error ?? ''}</td>
                <td>{d.result}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form class="filters" onSubmit={(e) => void create(e)} aria-label="Add a webhook endpoint">
        <label>
          URL
          <input name="url" type="url" required />
        </label>
        <fieldset>
          <legend>Events</legend>
          {EVENT_TYPES.map((t) => (
            <label key={t} class="inline">
              <input type="checkbox" name="event_types" value={t} defaultChecked={t === 'integrity.violation_detected'} /> {t}
            </label>
          ))}
        </fieldset>
        <button type="submit">Add endpoint</button>
      </form>
    </section>
  );
}

/** Admins: the API key, users and roles, usage and health. The API enforces the role too. */
function Admin({ role }: { role: string }) {
  const [users, setUsers] = useState<UserRow[]>([]);
  const [keys, setKeys] = useState<KeyRow[]>([]);
  const [usage, setUsage] = useState<{ totals: { api_requests: number; events_ingested: number }; by_day: Array<{ day: string; api_requests: number; events_ingested: number }> } | null>(null);
  const [health, setHealth] = useState<{ status: string } | null>(null);
  const [shown, setShown] = useState('');
  const [error, setError] = useState('');
  const load = async () => {
    try {
      const [u, k, us, h] = await Promise.all([
        api<{ items: UserRow[] }>('/users'),
        api<{ items: KeyRow[] }>('/auth/api_keys'),
        api<{ totals: { api_requests: number; events_ingested: number }; by_day: Array<{ day: string; api_requests: number; events_ingested: number }> }>('/usage'),
        api<{ status: string }>('/health').catch(() => ({ status: 'down' })),
      ]);
      setUsers(u.items);
      setKeys(k.items);
      setUsage(us);
      setHealth(h);
    } catch (err) {
      setError(message(err));
    }
  };
  useEffect(() => void (role === 'admin' && load()), []);
  if (role !== 'admin')
    return (
      <main>
        <h1>Administration</h1>
        <p role="alert">Administration is for admins; your role is {role}.</p>
      </main>
    );
  const act = async (f: () => Promise<unknown>) => {
    try {
      await f();
      setError('');
      await load();
    } catch (err) {
      setError(message(err));
    }
  };
  const invite = (e: Event) => {
    e.preventDefault();
    const el = e.currentTarget as HTMLFormElement;
    const form = new FormData(el);
    void act(async () => {
      const r = await api<{ one_time_password: string | null; user: UserRow }>('/users', { method: 'POST', body: { email: String(form.get('email')), role: String(form.get('role')) } });
      el.reset();
      setShown(`One-time password for ${r.user.email} (shown once): ${r.one_time_password}`);
    });
  };
  const createKey = () =>
    void act(async () => {
      const r = await api<{ key: string }>('/auth/api_keys', { method: 'POST', body: { name: 'agents', rate_limit_per_minute: 6000 } });
      setShown(`New API key (shown once): ${r.key}`);
    });
  return (
    <main>
      <h1>Administration</h1>
      {shown && (
        <p class="badge warn mono" role="status">
          {shown}
        </p>
      )}
      <ErrorLine error={error} />
      <section class="card" aria-label="Health and usage">
        <h2>Health and usage</h2>
        <p>
          Service: {health?.status ?? '…'}. Requests {usage?.totals.api_requests ?? "…"}, events {usage?.totals.events_ingested ?? "…"} (this period).
        </p>
        <UsageChart days={usage?.by_day ?? []} />
        <p>Blue: events ingested; brown: API requests, per day.</p>
      </section>
      <Webhooks onShown={setShown} />
      <section class="card" aria-label="API key">
        <h2>API key</h2>
        <table aria-label="API keys">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Prefix</th>
              <th scope="col">Status</th>
              <th scope="col">Rate limit</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <tr key={k.id}>
                <td>{k.name}</td>
                <td class="mono">{k.key_prefix}</td>
                <td>{k.status}</td>
                <td>{k.rate_limit_per_minute}/min</td>
                <td>
                  {k.status === 'active' && (
                    <button type="button" class="secondary" onClick={() => void act(() => api(`/auth/api_keys/${k.id}`, { method: 'DELETE' }))}>
                      Revoke {k.key_prefix}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {!keys.some((k) => k.status === 'active') && (
          <button type="button" onClick={createKey}>
            Create the API key
          </button>
        )}
      </section>
      <section class="card" aria-label="Users">
        <h2>Users</h2>
        <table aria-label="Users and roles">
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">State</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {users.map((u) => (
              <tr key={u.user_id}>
                <td>{u.email}</td>
                <td>
                  <select aria-label={`Role of ${u.email}`} value={u.role} onChange={(e) => void act(() => api(`/users/${u.user_id}`, { method: 'PATCH', body: { role: (e.currentTarget as HTMLSelectElement).value } }))}>
                    <option value="admin">admin</option>
                    <option value="reviewer">reviewer</option>
                    <option value="auditor">auditor</option>
                  </select>
                </td>
                <td>{u.disabled ? 'disabled' : u.password_change_required ? 'invited' : 'active'}</td>
                <td>
                  <button type="button" class="secondary" onClick={() => void act(() => api(`/users/${u.user_id}`, { method: 'PATCH', body: { disabled: !u.disabled } }))}>
                    {u.disabled ? 'Enable' : 'Disable'} {u.email}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <form class="filters" onSubmit={invite} aria-label="Invite a user">
          <label>
            Email
            <input name="email" type="email" required />
          </label>
          <label>
            Role
            <select name="role">
              <option value="auditor">auditor</option>
              <option value="reviewer">reviewer</option>
              <option value="admin">admin</option>
            </select>
          </label>
          <button type="submit">Invite</button>
        </form>
      </section>
    </main>
  );
}

function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const route = useRoute();
  useEffect(() => void currentSession().then(setSession), []);
  if (session === undefined) return <main aria-busy="true">Loading…</main>;
  if (session === null) return <SignIn onSession={setSession} />;
  if (session.password_change_required) return <ChangePassword onDone={() => void currentSession().then(setSession)} />;
  const nav = (page: Route['page'], href: string, label: string) => (
    <a href={href} aria-current={route.page === page || (page === 'logs' && route.page === 'entry') || (page === 'traces' && route.page === 'replay') ? 'page' : undefined}>
      {label}
    </a>
  );
  return (
    <>
      <header>
        <strong>audit-ledger</strong>
        <nav aria-label="Main" class="main-nav">
          {nav('logs', '#/logs', 'Logs')}
          {nav('traces', '#/traces', 'Traces')}
          {nav('integrity', '#/integrity', 'Integrity')}
          {nav('evidence', '#/evidence', 'Evidence')}
          {nav('reviews', '#/reviews', 'Human review')}
          {session.user.role === 'admin' && nav('admin', '#/admin', 'Admin')}
          {nav('keys', '#/keys', 'Pinned keys')}
        </nav>
        <span class="spacer" />
        <span>
          {session.user.email} ({session.user.role})
        </span>
        <button type="button" class="secondary" onClick={() => void signOut().then(() => setSession(null))}>
          Sign out
        </button>
      </header>
      {route.page === 'entry' && route.id ? <EntryPage id={route.id} /> : route.page === 'traces' ? <Traces /> : route.page === 'evidence' ? <Evidence query={route.query} /> : route.page === 'reviews' ? <Reviews query={route.query} role={session.user.role} email={session.user.email} /> : route.page === 'admin' ? <Admin role={session.user.role} /> : route.page === 'replay' && route.id ? <Replay id={route.id} /> : route.page === 'integrity' ? <Integrity /> : route.page === 'keys' ? <Keys query={route.query} /> : <Logs query={route.query} />}
    </>
  );
}

render(<App />, document.getElementById('app') as HTMLElement);
