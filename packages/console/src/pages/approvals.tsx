// Approvals (docs/governance.md, docs/console.md): the reviewers' queue, each request with its
// arguments exactly as they will be checked and their hash, its risk and SLA countdown; approve,
// reject and escalate each need an explicit confirmation naming what will happen. Admins grant and
// revoke standing approvals here too.
import type { Answer } from '@audit-ledger/sdk';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { Confirm, ErrorLine, message } from '../ui';

type Approval = Answer<'getApproval'>;
type Team = Answer<'listApprovalTeams'>['items'][number];

const minutes = (ms: number) => `${Math.round(Math.abs(ms) / 60_000)} min`;

function Sla({ a, now }: { a: Approval; now: number }) {
  if (a.sla_due_at === null) return <span>no SLA</span>;
  const left = Date.parse(a.sla_due_at) - now;
  return <span class={left < 0 ? 'sla late' : 'sla'}>{left < 0 ? `SLA passed ${minutes(left)} ago` : `SLA: ${minutes(left)} left`}</span>;
}

function Request({ a, now, canDecide, me, onChange }: { a: Approval; now: number; canDecide: boolean; me: string; onChange: () => Promise<void> }) {
  const mine = a.requested_by.kind === 'user' && a.requested_by.email === me;
  const already = a.approvals.some((x) => x.email === me);
  const decide = (verb: 'approve' | 'reject' | 'escalate') => async (v: Record<string, string>) => {
    await api(`/approvals/${a.id}/${verb}`, { method: 'POST', body: verb === 'escalate' ? { to: v.to, reason: v.reason } : v.reason ? { reason: v.reason } : {} });
    await onChange();
  };
  return (
    <article class="card" aria-label={`Approval request ${a.action}`} data-testid="approval-request">
      <h3>
        {a.action} {a.tool ? `via ${a.tool}` : ''} <span class={`risk-${a.risk}`}>{a.risk}</span>
      </h3>
      <p>
        Asked by {a.requested_by.kind === 'api_key' ? `API key ${a.requested_by.key_prefix ?? ''}` : a.requested_by.email}
        {a.agent_id ? ` for agent ${a.agent_id}` : ''} at {a.created_at}. {a.reason ?? ''}
      </p>
      <p>
        Team {a.assignee ?? a.team ?? '(none)'} · <Sla a={a} now={now} /> · expires {a.expires_at} · {a.approvals.length} of {a.required_approvals} approvals
        {a.required_approvals > 1 ? ' (four eyes)' : ''}
        {a.trace_id ? (
          <>
            {' '}
            · <a href={`#/logs?trace_id=${a.trace_id}`}>trace</a>
          </>
        ) : null}
      </p>
      <div>Arguments, exactly as an execution must send them:</div>
      <pre class="args mono" data-testid="approval-arguments">
        {JSON.stringify(a.arguments, null, 2)}
      </pre>
      <div class="mono">arguments_hash {a.arguments_hash}</div>
      {canDecide && !mine && !already && (
        <div class="actions">
          <Confirm label="Approve" title={`Approve ${a.action}`} what={`You approve ${a.action} with exactly the arguments above (hash ${a.arguments_hash?.slice(0, 16)}…). This is recorded in the ledger under your name.`} fields={[{ name: 'reason', label: 'Reason (optional)' }]} run={decide('approve')} />
          <Confirm label="Reject" danger title={`Reject ${a.action}`} what="The agent will not be allowed to run it. Recorded in the ledger under your name." fields={[{ name: 'reason', label: 'Reason', required: true }]} run={decide('reject')} />
          <Confirm label="Escalate" title={`Escalate ${a.action}`} what="Hands the request to another team or person." fields={[{ name: 'to', label: 'To (a team or an email)', required: true }, { name: 'reason', label: 'Reason', required: true }]} run={decide('escalate')} />
        </div>
      )}
      {mine && <p>You asked for this: someone else decides it.</p>}
      {already && <p>You approved it; it needs another approver.</p>}
    </article>
  );
}

function Standing({ isAdmin }: { isAdmin: boolean }) {
  const [items, setItems] = useState<Approval[]>([]);
  const [error, setError] = useState('');
  const load = () => api<{ items: Approval[] }>('/approvals/standing?limit=100').then((r) => setItems(r.items), (err) => setError(message(err)));
  useEffect(() => void load(), []);
  const grant = async (e: Event) => {
    e.preventDefault();
    const el = e.currentTarget as HTMLFormElement;
    const f = new FormData(el);
    try {
      const constraints = String(f.get('constraints') ?? '').trim();
      await api('/approvals/standing', {
        method: 'POST',
        body: { action: String(f.get('action')), ...(String(f.get('agent_id')) ? { agent_id: String(f.get('agent_id')) } : {}), ...(constraints ? { constraints: JSON.parse(constraints) } : {}), valid_until: new Date(String(f.get('valid_until'))).toISOString(), reason: String(f.get('reason')) },
      });
      el.reset();
      setError('');
      await load();
    } catch (err) {
      setError(message(err));
    }
  };
  return (
    <section class="card" aria-label="Standing approvals">
      <h2>Standing approvals</h2>
      <ErrorLine error={error} />
      <table aria-label="Standing approvals list">
        <thead>
          <tr>
            <th scope="col">Action</th>
            <th scope="col">Agent</th>
            <th scope="col">Constraints</th>
            <th scope="col">Until</th>
            <th scope="col">Uses</th>
            <th scope="col">Status</th>
            <th scope="col" />
          </tr>
        </thead>
        <tbody>
          {items.map((s) => (
            <tr key={s.id}>
              <td>{s.action}</td>
              <td>{s.agent_id ?? 'any'}</td>
              <td class="mono">{s.constraints ? JSON.stringify(s.constraints) : 'none'}</td>
              <td>{s.expires_at}</td>
              <td>
                {s.uses}
                {s.max_uses !== null ? ` / ${s.max_uses}` : ''}
              </td>
              <td>{s.status}</td>
              <td>{isAdmin && s.status === 'approved' && <Confirm label="Revoke" danger title={`Revoke the standing approval of ${s.action}`} what="Executions naming it are then refused (not_approved)." fields={[{ name: 'reason', label: 'Reason', required: true }]} run={async (v) => void (await api(`/approvals/standing/${s.id}/revoke`, { method: 'POST', body: { reason: v.reason } }), await load())} />}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {isAdmin && (
        <form class="filters" onSubmit={grant} aria-label="Grant a standing approval">
          <label>
            Action
            <input name="action" required />
          </label>
          <label>
            Agent (optional)
            <input name="agent_id" />
          </label>
          <label>
            Constraints (JSON Schema, optional)
            <input name="constraints" placeholder='{"type":"object","properties":{"amount":{"maximum":100}}}' />
          </label>
          <label>
            Valid until
            <input name="valid_until" type="datetime-local" required />
          </label>
          <label>
            Reason
            <input name="reason" required />
          </label>
          <button type="submit">Grant</button>
        </form>
      )}
    </section>
  );
}

export function Approvals({ query, role, email }: { query: URLSearchParams; role: string; email: string }) {
  const [pending, setPending] = useState<Approval[]>([]);
  const [recent, setRecent] = useState<Approval[]>([]);
  const [teams, setTeams] = useState<Team[]>([]);
  const [error, setError] = useState('');
  const [now, setNow] = useState(Date.now());
  const team = query.get('team') ?? '';
  const load = async () => {
    try {
      const [p, r, t] = await Promise.all([
        api<{ items: Approval[] }>(`/approvals?status=pending&limit=100${team ? `&team=${encodeURIComponent(team)}` : ''}`),
        api<{ items: Approval[] }>('/approvals?limit=50'),
        api<{ items: Team[] }>('/approval-teams'),
      ]);
      setPending(p.items);
      setRecent(r.items.filter((a) => a.status !== 'pending'));
      setTeams(t.items);
      setNow(Date.now());
      setError('');
    } catch (err) {
      setError(message(err));
    }
  };
  useEffect(() => {
    void load();
    const timer = setInterval(() => setNow(Date.now()), 30_000);
    return () => clearInterval(timer);
  }, [team]);
  const canDecide = role === 'admin' || role === 'reviewer';
  return (
    <main>
      <h1>Approvals</h1>
      <form class="filters" aria-label="Queue filter" onSubmit={(e) => e.preventDefault()}>
        <label>
          Team
          <select value={team} onChange={(e) => (location.hash = `#/approvals${(e.currentTarget as HTMLSelectElement).value ? `?team=${encodeURIComponent((e.currentTarget as HTMLSelectElement).value)}` : ''}`)}>
            <option value="">every team</option>
            {teams.map((t) => (
              <option key={t.name} value={t.name}>
                {t.name}
              </option>
            ))}
          </select>
        </label>
      </form>
      <ErrorLine error={error} />
      <h2>Pending ({pending.length})</h2>
      {pending.length === 0 && <p>Nothing waits for a decision.</p>}
      {pending.map((a) => (
        <Request key={a.id} a={a} now={now} canDecide={canDecide} me={email} onChange={load} />
      ))}
      <h2>Decided recently</h2>
      <table aria-label="Decided approvals">
        <thead>
          <tr>
            <th scope="col">Action</th>
            <th scope="col">Status</th>
            <th scope="col">By</th>
            <th scope="col">Reason</th>
            <th scope="col">Uses</th>
            <th scope="col">Entry</th>
          </tr>
        </thead>
        <tbody>
          {recent.map((a) => (
            <tr key={a.id}>
              <td>{a.action}</td>
              <td>{a.status}</td>
              <td>{a.decided_by?.email ?? a.decided_by?.task ?? ''}</td>
              <td>{a.decision_reason ?? ''}</td>
              <td>
                {a.uses}/{a.max_uses ?? '∞'}
              </td>
              <td>
                <a href={`#/logs/${a.log_id}`}>request</a>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <Standing isAdmin={role === 'admin'} />
    </main>
  );
}
