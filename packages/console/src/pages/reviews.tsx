// Human review: recorded rejections, and recording one (admins and reviewers).
import type { Answer } from '@audit-ledger/sdk';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorLine, message } from '../ui';

type Override = Answer<'listOverrides'>['items'][number];

/** Human review: recorded rejections; reviewers and admins record one (auditors read only). */
export function Reviews({ query, role, email }: { query: URLSearchParams; role: string; email: string }) {
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
