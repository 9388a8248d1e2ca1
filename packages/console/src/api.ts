// The console's only way to the service: same-origin fetch with the session cookie (HttpOnly: no
// script here ever sees it) and, on every request that changes something, the CSRF token the
// service answered at sign-in (kept in memory only, fetched again after a reload).
import type { Answer } from '@audit-ledger/sdk';

export interface Problem {
  status: number;
  code: string;
  title: string;
  detail: string;
}

export class ApiProblem extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail || problem.title);
  }
}

/** The console session (POST and GET /auth/session; the SDK's generated type). */
export type Session = Answer<'getSession'>;

let csrf: string | null = null;
/** Whether this page holds a session (set at sign-in, cleared when a request answers 401). */
let signedIn = false;
/** Dispatched on window when the session ends under the page; detail: the hash to come back to. */
export const SESSION_ENDED = 'audit-ledger:session-ended';

export async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const method = init.method ?? 'GET';
  const headers: Record<string, string> = { accept: 'application/json' };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrf !== null) headers['x-csrf-token'] = csrf;
  const res = await fetch(`/api/v1${path}`, { method, headers, credentials: 'same-origin', ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}) });
  if (!res.ok) {
    const body = (await res.json().catch(() => ({ status: res.status, code: 'unknown', title: res.statusText, detail: '' }))) as Problem;
    // A session that ended (idle timeout, signed out elsewhere) is never shown as an empty page:
    // the app goes to sign-in, says why, and comes back here after.
    if (res.status === 401 && signedIn && path !== '/auth/session') {
      signedIn = false;
      csrf = null;
      dispatchEvent(new CustomEvent(SESSION_ENDED, { detail: location.hash }));
    }
    throw new ApiProblem(body);
  }
  return (res.status === 204 ? undefined : await res.json()) as T;
}

/** The current session, or null when signed out (after a reload, this fetches the CSRF token again). */
export async function currentSession(): Promise<Session | null> {
  try {
    const s = await api<Session>('/auth/session');
    csrf = s.csrf_token;
    signedIn = true;
    return s;
  } catch (err) {
    if (err instanceof ApiProblem && (err.problem.status === 401 || err.problem.status === 403)) return null;
    throw err;
  }
}

export async function signIn(email: string, password: string): Promise<Session> {
  const s = await api<Session>('/auth/session', { method: 'POST', body: { email, password } });
  csrf = s.csrf_token;
  signedIn = true;
  return s;
}

export async function signOut(): Promise<void> {
  await api('/auth/session', { method: 'DELETE' });
  csrf = null;
  signedIn = false;
}
