// Small pieces every page uses: the error line, a problem's message, the verification badge.
import { ApiProblem } from './api';
import type { Verdict } from './verify';

/** A failure the page could not recover from, announced to assistive technology. */
export function ErrorLine({ error }: { error: string }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null;
}

export const message = (err: unknown) => (err instanceof ApiProblem ? `${err.problem.title}: ${err.problem.detail}` : String(err));


export function Badge({ verdict }: { verdict: Verdict }) {
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
