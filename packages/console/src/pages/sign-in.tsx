// Signing in (the session cookie) and replacing a one-time password.
import { useEffect, useState } from 'preact/hooks';
import { type Session, api, signIn } from '../api';
import { ErrorLine, message } from '../ui';

interface Methods {
  password: boolean;
  oidc: { name: string; login_url: string } | null;
}

export function SignIn({ onSession, notice = '' }: { onSession: (s: Session) => void; notice?: string }) {
  // A refusal of single sign-on comes back in the address (#/?sso_error=…).
  const ssoError = new URLSearchParams(location.hash.split('?')[1] ?? '').get('sso_error');
  const [error, setError] = useState(ssoError ? `Single sign-on refused: ${ssoError}` : '');
  const [methods, setMethods] = useState<Methods>({ password: true, oidc: null });
  useEffect(() => void api<Methods>('/auth/methods').then(setMethods, () => undefined), []);
  const back = ssoError ? '#/' : location.hash || '#/';
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
        {notice && (
          <p role="status" class="badge warn">
            {notice}
          </p>
        )}
        {methods.oidc && (
          <a class="button" href={`${methods.oidc.login_url}?return=${encodeURIComponent(back)}`}>
            Sign in with {methods.oidc.name}
          </a>
        )}
        {methods.password && (
          <>
            <label>
              Email
              <input name="email" type="email" autocomplete="username" required />
            </label>
            <label>
              Password
              <input name="password" type="password" autocomplete="current-password" required />
            </label>
            <button type="submit">Sign in</button>
          </>
        )}
        <ErrorLine error={error} />
      </form>
    </main>
  );
}

export function ChangePassword({ onDone }: { onDone: () => void }) {
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
