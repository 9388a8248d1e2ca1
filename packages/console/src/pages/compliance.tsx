// The compliance lifecycle (docs/compliance.md, docs/console.md): retention, legal holds,
// erasures, period reports (made, listed, downloaded, verified in this browser) and witnesses.
// Every change says what it will do and waits for a confirmation; the API enforces who may make it.
import { parseTrustedKeys, verifyReport } from '@audit-ledger/core';
import type { Answer } from '@audit-ledger/sdk';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { Confirm, ErrorLine, message } from '../ui';
import { pinnedKeys } from '../verify';

type Retention = Answer<'getRetention'>;
type Hold = Answer<'listHolds'>['items'][number];
type Erasure = Answer<'listErasures'>['items'][number];
type Report = Answer<'listReports'>['items'][number];
type Status = Answer<'getIntegrityStatus'>;

const day = (d: string) => `${d}T00:00:00Z`;
const dayAfter = (d: string) => new Date(Date.parse(`${d}T00:00:00Z`) + 86_400_000).toISOString();

export function Compliance({ role }: { role: string }) {
  const [retention, setRetention] = useState<Retention | null>(null);
  const [preview, setPreview] = useState<Answer<'previewRetention'> | null>(null);
  const [holds, setHolds] = useState<Hold[]>([]);
  const [erasures, setErasures] = useState<Erasure[]>([]);
  const [reports, setReports] = useState<Report[]>([]);
  const [status, setStatus] = useState<Status | null>(null);
  const [error, setError] = useState('');
  const [done, setDone] = useState('');
  const [scope, setScope] = useState<{ kind: string; value: string }>({ kind: 'trace_id', value: '' });
  const [erase, setErase] = useState<{ by: 'subject' | 'log_ids'; value: string }>({ by: 'subject', value: '' });
  const [period, setPeriod] = useState({ from: '', to: '' });
  const [checked, setChecked] = useState<Record<string, string>>({});
  const isAdmin = role === 'admin';
  const canReport = role === 'admin' || role === 'auditor';
  const load = async () => {
    const fail = (err: unknown) => setError(message(err));
    await Promise.all([
      api<Retention>('/compliance/retention').then(setRetention, fail),
      api<Answer<'previewRetention'>>('/compliance/retention/preview').then(setPreview, fail),
      api<{ items: Hold[] }>('/compliance/holds').then((r) => setHolds(r.items), fail),
      api<{ items: Erasure[] }>('/compliance/erasures').then((r) => setErasures(r.items), fail),
      canReport ? api<{ items: Report[] }>('/compliance/reports').then((r) => setReports(r.items), fail) : Promise.resolve(),
      api<Status>('/integrity/status').then(setStatus, fail),
    ]);
  };
  useEffect(() => void load(), []);
  const after = (text: string) => async () => {
    setDone(text);
    setError('');
    await load();
  };
  const verifyInBrowser = async (id: string) => {
    // What an earlier attempt said is not left on screen.
    setError('');
    try {
      const doc = await api<unknown>(`/compliance/reports/${id}`);
      const pinned = pinnedKeys();
      if (pinned.length === 0) {
        setChecked({ ...checked, [id]: 'Pin the service key first (Pinned keys): the report is checked only against keys you trust.' });
        return;
      }
      const r = verifyReport(doc, parseTrustedKeys(JSON.stringify({ items: pinned })));
      setChecked({ ...checked, [id]: r.ok ? `Verified in this browser: ${r.checks.find((c) => c.status === 'ok')?.message ?? ''}` : `FAILED: ${r.checks.filter((c) => c.status === 'fail').map((c) => c.message).join('; ')}` });
    } catch (err) {
      setError(message(err));
    }
  };
  const holdScope = () => (scope.kind === 'all' ? { all: true } : scope.kind === 'from' ? { from: day(scope.value) } : { [scope.kind]: scope.value.trim() });
  return (
    <main>
      <h1>Compliance</h1>
      <ErrorLine error={error} />
      {done && (
        <p role="status" class="badge ok">
          {done}
        </p>
      )}

      <section class="card" aria-label="Retention">
        <h2>Retention</h2>
        {retention && (
          <p>
            Content is kept {retention.content_days === null ? 'forever' : `${retention.content_days} days after it was appended`}
            {Object.keys(retention.by_event_type).length > 0 ? `; by event type: ${Object.entries(retention.by_event_type).map(([t, d]) => `${t} ${d} days`).join(', ')}` : ''}. Last run {retention.last_run_at ?? 'never'}; {retention.erased_total} entries erased so far
            {retention.pending_erasures > 0 ? `; ${retention.pending_erasures} erasures still to apply` : ''}. An erased entry keeps its place, hash and signature: the chain still verifies.
          </p>
        )}
        {preview && (
          <p data-testid="retention-preview">
            The next run would erase the content of {preview.due}
            {preview.capped ? '+' : ''} entr{preview.due === 1 ? 'y' : 'ies'}
            {preview.held > 0 ? `; ${preview.held} more are past their time but kept by a legal hold` : ''}.
          </p>
        )}
        {isAdmin && (
          <div class="actions">
            <Confirm
              label="Set retention"
              title="Set the retention of content"
              what="The next run erases the content (data and extra) of every entry older than this many days, except what a legal hold covers; the entries themselves stay and verify. Leave empty to keep content forever."
              fields={[{ name: 'days', label: 'Days content is kept (empty: forever)' }]}
              run={async (v) => {
                await api('/compliance/retention', { method: 'PUT', body: { content_days: v.days === '' ? null : Number(v.days), by_event_type: retention?.by_event_type ?? {} } });
                await after('Retention set; recorded in the administrators’ trail.')();
              }}
            />
            <Confirm
              label="Run retention now"
              danger
              title="Apply the retention policy now"
              what={`Erases now the content of ${preview ? `${preview.due}${preview.capped ? '+' : ''} entries` : 'every entry'} past ${retention?.content_days === null ? 'their event type\'s limit' : `${retention?.content_days} days`} that no legal hold covers. This cannot be undone.`}
              run={async () => {
                const r = await api<{ erased_count: number }>('/compliance/retention/run', { method: 'POST', body: {} });
                await after(`Retention ran: ${r.erased_count} entries erased.`)();
              }}
            />
          </div>
        )}
      </section>

      <section class="card" aria-label="Legal holds">
        <h2>Legal holds</h2>
        <table aria-label="Legal holds list">
          <thead>
            <tr>
              <th scope="col">Scope</th>
              <th scope="col">Reason</th>
              <th scope="col">Case</th>
              <th scope="col">Status</th>
              <th scope="col" />
            </tr>
          </thead>
          <tbody>
            {holds.map((h) => (
              <tr key={h.id}>
                <td class="mono">{JSON.stringify(h.scope)}</td>
                <td>{h.reason}</td>
                <td>{h.case_reference ?? ''}</td>
                <td>{h.status}</td>
                <td>
                  {isAdmin && h.status === 'active' && (
                    <Confirm label="Release" danger title={`Release the hold ${h.case_reference ?? h.reason}`} what="What it covers can be erased again (by retention or on request)." fields={[{ name: 'reason', label: 'Reason', required: true }]} run={async (v) => {
                      await api(`/compliance/holds/${h.id}/release`, { method: 'POST', body: { reason: v.reason } });
                      await after('Hold released.')();
                    }} />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {isAdmin && (
          <form class="filters" aria-label="Place a legal hold" onSubmit={(e) => e.preventDefault()}>
            <label>
              Scope
              <select value={scope.kind} onChange={(e) => setScope({ ...scope, kind: (e.currentTarget as HTMLSelectElement).value })}>
                <option value="trace_id">a trace</option>
                <option value="session_id">a session</option>
                <option value="agent_id">an agent</option>
                <option value="from">everything from a day</option>
                <option value="all">everything</option>
              </select>
            </label>
            {scope.kind !== 'all' && (
              <label>
                {scope.kind === 'from' ? 'From (UTC day)' : 'Which'}
                {scope.kind === 'from' ? (
                  <input type="date" value={scope.value} onInput={(e) => setScope({ ...scope, value: (e.currentTarget as HTMLInputElement).value })} />
                ) : (
                  <input value={scope.value} onInput={(e) => setScope({ ...scope, value: (e.currentTarget as HTMLInputElement).value })} />
                )}
              </label>
            )}
            <Confirm
              label="Place the hold"
              title="Place a legal hold"
              what="Nothing in its scope can be erased, by retention or on request, until the hold is released."
              fields={[{ name: 'reason', label: 'Reason', required: true }, { name: 'case', label: 'Case reference (optional)' }]}
              run={async (v) => {
                await api('/compliance/holds', { method: 'POST', body: { scope: holdScope(), reason: v.reason, ...(v.case ? { case_reference: v.case } : {}) } });
                await after('Hold placed; recorded in the administrators’ trail.')();
              }}
            />
          </form>
        )}
      </section>

      <section class="card" aria-label="Erasures">
        <h2>Erasures</h2>
        <table aria-label="Erasures list">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Kind</th>
              <th scope="col">Legal basis</th>
              <th scope="col">Erased</th>
              <th scope="col">Record</th>
            </tr>
          </thead>
          <tbody>
            {erasures.map((x) => (
              <tr key={x.id}>
                <td>{x.created_at}</td>
                <td>{x.kind}</td>
                <td>{x.legal_basis}</td>
                <td>{x.erased_count}</td>
                <td>{x.record_log_ids[0] ? <a href={`#/logs/${x.record_log_ids[0]}`}>entry</a> : ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {isAdmin && (
          <form class="filters" aria-label="Request an erasure" onSubmit={(e) => e.preventDefault()}>
            <label>
              By
              <select value={erase.by} onChange={(e) => setErase({ ...erase, by: (e.currentTarget as HTMLSelectElement).value as 'subject' | 'log_ids' })}>
                <option value="subject">a data subject</option>
                <option value="log_ids">entries (log ids, comma separated)</option>
              </select>
            </label>
            <label>
              {erase.by === 'subject' ? 'Subject' : 'Log ids'}
              <input value={erase.value} onInput={(e) => setErase({ ...erase, value: (e.currentTarget as HTMLInputElement).value })} />
            </label>
            <Confirm
              label="Erase"
              danger
              title="Erase content"
              what="Removes the content (data and extra) of the selected entries for good. What remains: each entry's type, times, links and hash (its skeleton), so the chain still verifies. Refused if a legal hold covers any of them."
              fields={[{ name: 'basis', label: 'Legal basis', required: true }]}
              run={async (v) => {
                const body = erase.by === 'subject' ? { subject: erase.value.trim(), legal_basis: v.basis } : { log_ids: erase.value.split(',').map((s) => s.trim()).filter(Boolean), legal_basis: v.basis };
                const r = await api<{ erased_count: number }>('/compliance/erasures', { method: 'POST', body });
                await after(`Erased the content of ${r.erased_count} entries.`)();
              }}
            />
          </form>
        )}
      </section>

      {canReport && (
        <section class="card" aria-label="Period reports">
          <h2>Period reports</h2>
          <table aria-label="Reports list">
            <thead>
              <tr>
                <th scope="col">Period</th>
                <th scope="col">Made</th>
                <th scope="col">Download</th>
                <th scope="col">Verify</th>
              </tr>
            </thead>
            <tbody>
              {reports.map((r) => (
                <tr key={r.id}>
                  <td>
                    {r.from} – {r.to}
                  </td>
                  <td>{r.created_at}</td>
                  <td>
                    <a href={`/api/v1/compliance/reports/${r.id}`} download={`compliance-report-${r.id}.json`}>
                      JSON
                    </a>{' '}
                    ·{' '}
                    <a href={`/api/v1/compliance/reports/${r.id}?format=pdf`} download={`compliance-report-${r.id}.pdf`}>
                      PDF
                    </a>
                  </td>
                  <td>
                    <button type="button" class="secondary" onClick={() => void verifyInBrowser(r.id)}>
                      Verify in this browser
                    </button>
                    {checked[r.id] && <div role="status">{checked[r.id]}</div>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <form class="filters" aria-label="Make a period report" onSubmit={(e) => e.preventDefault()}>
            <label>
              From (UTC day)
              <input type="date" value={period.from} onInput={(e) => setPeriod({ ...period, from: (e.currentTarget as HTMLInputElement).value })} />
            </label>
            <label>
              To (UTC day, included)
              <input type="date" value={period.to} onInput={(e) => setPeriod({ ...period, to: (e.currentTarget as HTMLInputElement).value })} />
            </label>
            <Confirm
              label="Make the report"
              title="Make a signed period report"
              what="Verifies every entry of the period and signs the report with the service key; the report is kept and recorded in the administrators’ trail."
              run={async () => {
                await api('/compliance/reports', { method: 'POST', body: { from: day(period.from), to: dayAfter(period.to) } });
                await after('Report made and signed.')();
              }}
            />
          </form>
        </section>
      )}

      <section class="card" aria-label="Witnesses">
        <h2>Witnesses</h2>
        {status && status.witnesses.items.length === 0 && <p>No witness is configured (WITNESSES): checkpoints are signed by the service alone.</p>}
        {status && status.witnesses.items.length > 0 && (
          <>
            <p>
              Quorum {status.witnesses.quorum}: {status.witnesses.quorum_met ? 'met' : 'NOT met'} for the latest checkpoint.
            </p>
            <ul>
              {status.witnesses.items.map((w) => (
                <li key={w.name} class="mono">
                  {JSON.stringify(w)}
                </li>
              ))}
            </ul>
          </>
        )}
      </section>
    </main>
  );
}
