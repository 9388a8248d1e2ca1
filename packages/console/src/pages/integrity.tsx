// Integrity: the chain's status, the last full verification's violations, a live run, tree size over time.
import type { Answer } from '@audit-ledger/sdk';
import { useEffect, useState } from 'preact/hooks';
import { ApiProblem, api } from '../api';
import { ErrorLine, message } from '../ui';

// The service's answers, typed from its OpenAPI document (through the SDK's generated types).
export type Status = Answer<'getIntegrityStatus'>;
type Job = Answer<'getVerificationJob'>;

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

export function Integrity() {
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
    // What an earlier attempt said is not left on screen.
    setError('');
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
