// The governance registers (docs/governance.md, docs/console.md): policies with their versions and
// a line diff between any two, the decision register, and incidents (list, open, detail with its
// timeline, comments, status and assignment changes behind a confirmation, and the signed report).
import type { Answer } from '@audit-ledger/sdk';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { lineDiff } from '../diff';
import { Confirm, ErrorLine, message } from '../ui';

type PolicyVersion = Answer<'getPolicyVersion'>;
type Decision = Answer<'getDecision'>;
type DecisionRow = Answer<'listDecisions'>['items'][number];
type Incident = Answer<'getIncident'>;

export function Policies({ query }: { query: URLSearchParams }) {
  const [policies, setPolicies] = useState<Array<{ policy_id: string; latest_version: number }>>([]);
  const [versions, setVersions] = useState<PolicyVersion[]>([]);
  const [left, setLeft] = useState<PolicyVersion | null>(null);
  const [right, setRight] = useState<PolicyVersion | null>(null);
  const [error, setError] = useState('');
  const id = query.get('policy') ?? '';
  useEffect(() => void api<{ items: typeof policies }>('/policies').then((r) => setPolicies(r.items), (err) => setError(message(err))), []);
  useEffect(() => {
    if (!id) return;
    void (async () => {
      try {
        const list = (await api<{ items: PolicyVersion[] }>(`/policies/${encodeURIComponent(id)}/versions`)).items;
        setVersions(list);
        const get = (v: number) => api<PolicyVersion>(`/policies/${encodeURIComponent(id)}/versions/${v}`);
        const newest = list[0];
        if (newest) {
          setRight(await get(newest.version));
          setLeft(list[1] ? await get(list[1].version) : null);
        }
      } catch (err) {
        setError(message(err));
      }
    })();
  }, [id]);
  const pick = async (side: 'left' | 'right', v: string) => {
    const version = await api<PolicyVersion>(`/policies/${encodeURIComponent(id)}/versions/${v}`);
    (side === 'left' ? setLeft : setRight)(version);
  };
  return (
    <main>
      <h1>Policies</h1>
      <ErrorLine error={error} />
      <ul aria-label="Registered policies">
        {policies.map((p) => (
          <li key={p.policy_id}>
            <a href={`#/policies?policy=${encodeURIComponent(p.policy_id)}`} aria-current={p.policy_id === id ? 'page' : undefined}>
              {p.policy_id}
            </a>{' '}
            (version {p.latest_version})
          </li>
        ))}
      </ul>
      {id && (
        <section class="card" aria-label={`Versions of ${id}`}>
          <h2>{id}</h2>
          <table aria-label="Versions">
            <thead>
              <tr>
                <th scope="col">Version</th>
                <th scope="col">Created</th>
                <th scope="col">By</th>
                <th scope="col">Content hash</th>
                <th scope="col">Entry</th>
              </tr>
            </thead>
            <tbody>
              {versions.map((v) => (
                <tr key={v.version}>
                  <td>{v.version}</td>
                  <td>{v.created_at}</td>
                  <td>{v.created_by.email ?? v.created_by.kind}</td>
                  <td class="mono">{v.content_hash}</td>
                  <td>
                    <a href={`#/logs/${v.log_id}`}>entry</a>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {versions.length > 1 && (
            <form class="filters" aria-label="Compare versions" onSubmit={(e) => e.preventDefault()}>
              {(['left', 'right'] as const).map((side) => (
                <label key={side}>
                  {side === 'left' ? 'From version' : 'To version'}
                  <select value={String((side === 'left' ? left : right)?.version ?? '')} onChange={(e) => void pick(side, (e.currentTarget as HTMLSelectElement).value)}>
                    {versions.map((v) => (
                      <option key={v.version} value={String(v.version)}>
                        {v.version}
                      </option>
                    ))}
                  </select>
                </label>
              ))}
            </form>
          )}
          {left && right ? (
            <div class="diff" data-testid="policy-diff" aria-label={`Changes from version ${left.version} to ${right.version}`}>
              {lineDiff(left.content ?? '', right.content ?? '').map((l, i) => (
                <div key={i} class={l.kind}>
                  {l.kind === 'added' ? '+ ' : l.kind === 'removed' ? '- ' : '  '}
                  {l.text}
                </div>
              ))}
            </div>
          ) : right ? (
            <pre class="args mono">{right.content}</pre>
          ) : null}
        </section>
      )}
    </main>
  );
}

export function Decisions({ id }: { id?: string | undefined }) {
  const [rows, setRows] = useState<DecisionRow[]>([]);
  const [one, setOne] = useState<Decision | null>(null);
  const [error, setError] = useState('');
  useEffect(() => void api<{ items: DecisionRow[] }>('/decisions?limit=100').then((r) => setRows(r.items), (err) => setError(message(err))), []);
  useEffect(() => void (id ? api<Decision>(`/decisions/${encodeURIComponent(id)}`).then(setOne, (err) => setError(message(err))) : setOne(null)), [id]);
  return (
    <main>
      <h1>Decisions</h1>
      <ErrorLine error={error} />
      {one && (
        <section class="card" aria-label={`Decision ${one.decision_id}`}>
          <h2>Decision {one.decision_id}</h2>
          <dl class="fields">
            <dt>Action / outcome</dt>
            <dd>
              {one.action ?? '–'} → {one.outcome ?? '–'}
            </dd>
            <dt>Model</dt>
            <dd>
              {one.model ?? '–'} {one.model_version ?? ''} {one.provider ? `(${one.provider})` : ''}
            </dd>
            <dt>Prompt</dt>
            <dd class="mono">
              {one.prompt.template_id ?? ''} {one.prompt.template_version ?? ''} {one.prompt.hash ?? ''}
            </dd>
            <dt>Inputs</dt>
            <dd class="mono">
              {one.inputs.hash ?? ''} {one.inputs.documents.join(', ')}
            </dd>
            <dt>Tools</dt>
            <dd>{one.tools.join(', ') || '–'}</dd>
            <dt>Confidence</dt>
            <dd>{one.confidence ?? '–'}</dd>
            <dt>Policy evaluations</dt>
            <dd>{one.policy_evaluations.map((p) => `${p.policy_id} v${p.policy_version ?? '?'}: ${p.verdict}${p.check ? ` (register: ${p.check.result})` : ''}`).join('; ') || 'none'}</dd>
            <dt>Approvals</dt>
            <dd>{one.approvals.map((a) => `${a.action}: ${a.status}`).join('; ') || 'none'}</dd>
            <dt>Reviews</dt>
            <dd>{one.reviews.map((r) => `${r.reviewer}: ${r.reason}`).join('; ') || 'none'}</dd>
          </dl>
          <p>
            <a href={`#/logs/${one.log_id}`}>entry and its verification</a>
            {one.trace_id ? (
              <>
                {' · '}
                <a href={`#/logs?trace_id=${one.trace_id}`}>timeline</a> · <a href={`#/evidence?trace_id=${one.trace_id}`}>evidence bundle</a>
              </>
            ) : null}
          </p>
        </section>
      )}
      <table aria-label="Decision register">
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Decision</th>
            <th scope="col">Agent</th>
            <th scope="col">Action</th>
            <th scope="col">Outcome</th>
            <th scope="col">Model</th>
            <th scope="col">Confidence</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((d) => (
            <tr key={d.log_id} class="row" onClick={() => (location.hash = `#/decisions/${encodeURIComponent(d.decision_id)}`)}>
              <td>{d.created_at}</td>
              <td class="mono">
                <a href={`#/decisions/${encodeURIComponent(d.decision_id)}`}>{d.decision_id}</a>
              </td>
              <td>{d.agent_id ?? ''}</td>
              <td>{d.action ?? ''}</td>
              <td>{d.outcome ?? ''}</td>
              <td>{d.model ?? ''}</td>
              <td>{d.confidence ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </main>
  );
}

function IncidentDetail({ id, canWork }: { id: string; canWork: boolean }) {
  const [inc, setInc] = useState<Incident | null>(null);
  const [report, setReport] = useState<{ id: string; digest: string } | null>(null);
  const [error, setError] = useState('');
  const load = () => api<Incident>(`/incidents/${id}`).then(setInc, (err) => setError(message(err)));
  useEffect(() => void load(), [id]);
  if (!inc) return <ErrorLine error={error} />;
  const act = (path: string, body: (v: Record<string, string>) => unknown) => async (v: Record<string, string>) => {
    await api(`/incidents/${id}/${path}`, { method: 'POST', body: body(v) });
    await load();
  };
  const makeReport = async () => {
    // What an earlier attempt said is not left on screen.
    setError('');
    try {
      const doc = await api<{ report: { report_id: string }; signature: { digest: string } }>(`/incidents/${id}/report`, { method: 'POST' });
      setReport({ id: doc.report.report_id, digest: doc.signature.digest });
      await load();
    } catch (err) {
      setError(message(err));
    }
  };
  return (
    <section class="card" aria-label={`Incident ${inc.title}`}>
      <h2>{inc.title}</h2>
      <ErrorLine error={error} />
      <dl class="fields">
        <dt>Status</dt>
        <dd data-testid="incident-status">{inc.status}</dd>
        <dt>Severity</dt>
        <dd>{inc.severity}</dd>
        <dt>Assignee</dt>
        <dd>{inc.assignee ?? 'nobody'}</dd>
        <dt>Opened</dt>
        <dd>
          {inc.created_at} by {inc.opened_by.email ?? inc.opened_by.kind}
        </dd>
        <dt>EU AI Act Art. 73</dt>
        <dd>{inc.deadlines.art73 ? `${inc.deadlines.art73}: report due by ${inc.deadlines.report_due_at}` : `not recorded as serious (15 days would be ${inc.deadlines.article_73[0]?.due_at})`}</dd>
        <dt>Traces</dt>
        <dd>
          {inc.links.trace_ids.map((t) => (
            <a key={t} href={`#/logs?trace_id=${t}`} class="mono">
              {t}{' '}
            </a>
          ))}
        </dd>
      </dl>
      {inc.description && <p>{inc.description}</p>}
      <h3>Timeline</h3>
      <ol aria-label="Incident timeline">
        {(inc.notes ?? []).map((n) => (
          <li key={n.id}>
            {n.created_at} · {n.kind} · {String(n.actor.email ?? n.actor.kind)}: <span class="mono">{JSON.stringify(n.body)}</span> · <a href={`#/logs/${n.log_id}`}>entry</a>
          </li>
        ))}
      </ol>
      {canWork && (
        <div class="actions">
          <Confirm label="Comment" title="Add a comment" what="Recorded in the ledger under your name." fields={[{ name: 'text', label: 'Comment', required: true }]} run={act('comments', (v) => ({ text: v.text }))} />
          <Confirm label="Assign" title="Assign the incident" what="Recorded in the ledger under your name." fields={[{ name: 'assignee', label: 'To (an email or a team)', required: true }]} run={act('assign', (v) => ({ assignee: v.assignee }))} />
          {inc.status !== 'closed' &&
            (['investigating', 'mitigated', 'resolved', 'closed'] as const)
              .filter((s) => s !== inc.status)
              .map((s) => <Confirm key={s} label={`Mark ${s}`} title={`Move the incident to ${s}`} what={`From ${inc.status} to ${s}${s === 'closed' ? ': a closed incident takes comments only' : ''}.`} fields={[{ name: 'note', label: 'Note (optional)' }]} run={act('status', (v) => ({ status: s, ...(v.note ? { note: v.note } : {}) }))} />)}
          <button type="button" class="secondary" onClick={() => void makeReport()}>
            Make the signed report
          </button>
        </div>
      )}
      {report && (
        <p role="status">
          Report {report.id} signed (digest <span class="mono">{report.digest.slice(0, 16)}…</span>):{' '}
          <a href={`/api/v1/incidents/${id}/reports/${report.id}`} download={`incident-report-${report.id}.json`}>
            JSON
          </a>{' '}
          ·{' '}
          <a href={`/api/v1/incidents/${id}/reports/${report.id}?format=pdf`} download={`incident-report-${report.id}.pdf`}>
            PDF
          </a>
        </p>
      )}
    </section>
  );
}

export function Incidents({ id, role }: { id?: string | undefined; role: string }) {
  const [items, setItems] = useState<Incident[]>([]);
  const [error, setError] = useState('');
  const load = () => api<{ items: Incident[] }>('/incidents?limit=100').then((r) => setItems(r.items), (err) => setError(message(err)));
  useEffect(() => void load(), [id]);
  const canWork = role === 'admin' || role === 'reviewer';
  const open = async (e: Event) => {
    e.preventDefault();
    const el = e.currentTarget as HTMLFormElement;
    const f = new FormData(el);
    try {
      const trace = String(f.get('trace_id') ?? '').trim();
      const art73 = String(f.get('art73') ?? '');
      const inc = await api<Incident>('/incidents', { method: 'POST', body: { title: String(f.get('title')), severity: String(f.get('severity')), ...(trace ? { trace_ids: [trace] } : {}), ...(art73 ? { art73 } : {}) } });
      el.reset();
      location.hash = `#/incidents/${inc.id}`;
    } catch (err) {
      setError(message(err));
    }
  };
  return (
    <main>
      <h1>Incidents</h1>
      <ErrorLine error={error} />
      {id && <IncidentDetail id={id} canWork={canWork} />}
      <table aria-label="Incident list">
        <thead>
          <tr>
            <th scope="col">Opened</th>
            <th scope="col">Title</th>
            <th scope="col">Severity</th>
            <th scope="col">Status</th>
            <th scope="col">Report due</th>
          </tr>
        </thead>
        <tbody>
          {items.map((i) => (
            <tr key={i.id}>
              <td>{i.created_at}</td>
              <td>
                <a href={`#/incidents/${i.id}`}>{i.title}</a>
              </td>
              <td>{i.severity}</td>
              <td>{i.status}</td>
              <td>{i.deadlines.report_due_at ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {canWork && (
        <form class="filters card" onSubmit={open} aria-label="Open an incident">
          <label>
            Title
            <input name="title" required />
          </label>
          <label>
            Severity
            <select name="severity">
              <option>low</option>
              <option>medium</option>
              <option selected>high</option>
              <option>critical</option>
            </select>
          </label>
          <label>
            Trace id (optional)
            <input name="trace_id" />
          </label>
          <label>
            Art. 73
            <select name="art73">
              <option value="">not a serious incident</option>
              <option value="serious">serious (15 days)</option>
              <option value="widespread_or_critical_infrastructure">widespread or critical infrastructure (2 days)</option>
              <option value="death">death (10 days)</option>
            </select>
          </label>
          <button type="submit">Open the incident</button>
        </form>
      )}
    </main>
  );
}
