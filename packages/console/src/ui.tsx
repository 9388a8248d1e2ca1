// Small pieces every page uses: the error line, a problem's message, the verification badge.
import { useState } from 'preact/hooks';
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

const UUID = /\b([0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;

/**
 * A problem in words: its title and detail, with every identifier shortened to its first eight
 * characters (as a short commit hash is: enough to find it, not a wall of hex in a sentence).
 */
export const message = (err: unknown): string => {
  if (!(err instanceof ApiProblem)) return err instanceof Error ? err.message : String(err);
  const detail = (err.problem.detail ?? '').replace(UUID, '$1…');
  return detail ? `${err.problem.title}: ${detail}` : err.problem.title;
};



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

/**
 * A change that needs an explicit confirmation (never one keystroke): the button opens a panel
 * saying exactly what will happen, with the fields it needs, and only its Confirm button acts.
 */
export function Confirm({ label, title, what, fields, run, danger }: { label: string; title: string; what: string; fields?: Array<{ name: string; label: string; required?: boolean }>; run: (values: Record<string, string>) => Promise<void>; danger?: boolean }) {
  const [open, setOpen] = useState(false);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  if (!open)
    return (
      <button type="button" class={danger ? 'danger' : ''} onClick={() => setOpen(true)}>
        {label}
      </button>
    );
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    setBusy(true);
    try {
      await run(Object.fromEntries((fields ?? []).map((f) => [f.name, String(form.get(f.name) ?? '').trim()])));
      setOpen(false);
      setError('');
    } catch (err) {
      setError(message(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div role="dialog" aria-label={title}>
    <form class="confirm" onSubmit={submit}>
      <strong>{title}</strong>
      <p>{what}</p>
      {(fields ?? []).map((f) => (
        <label key={f.name}>
          {f.label}
          <input name={f.name} required={f.required ?? false} />
        </label>
      ))}
      <ErrorLine error={error} />
      <div class="actions">
        <button type="submit" disabled={busy}>
          Confirm: {label.toLowerCase()}
        </button>
        <button type="button" class="secondary" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
    </form>
    </div>
  );
}
