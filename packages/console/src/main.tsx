// The console's entry point: the session, the navigation, and the page the URL names (docs/console.md).
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { type Session, SESSION_ENDED, currentSession, signOut } from './api';
import { Admin } from './pages/admin';
import { Compliance } from './pages/compliance';
import { Overview } from './pages/overview';
import { EntryPage } from './pages/entry';
import { Evidence } from './pages/evidence';
import { Integrity } from './pages/integrity';
import { Keys } from './pages/keys';
import { Logs } from './pages/logs';
import { Reviews } from './pages/reviews';
import { ChangePassword, SignIn } from './pages/sign-in';
import { Replay, Traces } from './pages/traces';
import { type Route, useRoute } from './route';

const GOVERNANCE_PAGES = new Set<Route['page']>(['approvals', 'policies', 'decisions', 'incidents']);
type GovernancePages = typeof import('./pages/approvals') & typeof import('./pages/governance');

/** The governance pages' code, loaded the first time one of them is opened (a chunk of its own). */
function useGovernancePages(wanted: boolean): GovernancePages | null {
  const [pages, setPages] = useState<GovernancePages | null>(null);
  useEffect(() => {
    if (wanted && !pages) void Promise.all([import('./pages/approvals'), import('./pages/governance')]).then(([a, g]) => setPages({ ...a, ...g }));
  }, [wanted]);
  return pages;
}

function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const route = useRoute();
  const gov = useGovernancePages(GOVERNANCE_PAGES.has(route.page));
  const [ended, setEnded] = useState<string | null>(null);
  useEffect(() => void currentSession().then(setSession), []);
  useEffect(() => {
    const on = (e: Event) => {
      setEnded((e as CustomEvent<string>).detail || '#/');
      setSession(null);
    };
    addEventListener(SESSION_ENDED, on);
    return () => removeEventListener(SESSION_ENDED, on);
  }, []);
  if (session === undefined) return <main aria-busy="true">Loading…</main>;
  if (session === null)
    return (
      <SignIn
        notice={ended ? 'Your session expired: sign in again to go back to where you were.' : ''}
        onSession={(s) => {
          setSession(s);
          if (ended) {
            const back = ended;
            setEnded(null);
            // Back to the page the session ended on; a hashchange reloads its data.
            if (location.hash === back) dispatchEvent(new HashChangeEvent('hashchange'));
            else location.hash = back;
          }
        }}
      />
    );
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
          {nav('overview', '#/', 'Overview')}
          {nav('logs', '#/logs', 'Logs')}
          {nav('traces', '#/traces', 'Traces')}
          {nav('integrity', '#/integrity', 'Integrity')}
          {nav('evidence', '#/evidence', 'Evidence')}
          {nav('approvals', '#/approvals', 'Approvals')}
          {nav('reviews', '#/reviews', 'Human review')}
          {nav('decisions', '#/decisions', 'Decisions')}
          {nav('policies', '#/policies', 'Policies')}
          {nav('incidents', '#/incidents', 'Incidents')}
          {nav('compliance', '#/compliance', 'Compliance')}
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
      {GOVERNANCE_PAGES.has(route.page) && !gov ? <main aria-busy="true">Loading…</main> : gov && route.page === 'approvals' ? <gov.Approvals query={route.query} role={session.user.role} email={session.user.email} /> : gov && route.page === 'policies' ? <gov.Policies query={route.query} /> : gov && route.page === 'decisions' ? <gov.Decisions id={route.id} /> : gov && route.page === 'incidents' ? <gov.Incidents id={route.id} role={session.user.role} /> : route.page === 'entry' && route.id ? <EntryPage id={route.id} query={route.query} /> : route.page === 'traces' ? <Traces /> : route.page === 'evidence' ? <Evidence query={route.query} /> : route.page === 'reviews' ? <Reviews query={route.query} role={session.user.role} email={session.user.email} /> : route.page === 'admin' ? <Admin role={session.user.role} /> : route.page === 'replay' && route.id ? <Replay id={route.id} /> : route.page === 'integrity' ? <Integrity /> : route.page === 'keys' ? <Keys query={route.query} /> : route.page === 'compliance' ? <Compliance role={session.user.role} /> : route.page === 'logs' ? <Logs query={route.query} /> : <Overview />}
    </>
  );
}

render(<App />, document.getElementById('app') as HTMLElement);
