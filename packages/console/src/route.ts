// Routing: the view and its parameters live in the URL hash (#/logs?…, #/logs/<id>, #/replays/<id>…),
// so every view can be shared as a link.
import { useEffect, useState } from 'preact/hooks';

export interface Route {
  page: 'overview' | 'compliance' | 'logs' | 'entry' | 'integrity' | 'keys' | 'traces' | 'replay' | 'evidence' | 'reviews' | 'admin' | 'approvals' | 'policies' | 'decisions' | 'incidents';
  id?: string;
  query: URLSearchParams;
}

function parseHash(): Route {
  const [path = '', q = ''] = location.hash.replace(/^#/, '').split('?');
  const parts = path.split('/').filter(Boolean);
  const query = new URLSearchParams(q);
  if (parts[0] === 'logs' && parts[1]) return { page: 'entry', id: parts[1], query };
  if (parts[0] === 'logs') return { page: 'logs', query };
  if (parts[0] === 'compliance') return { page: 'compliance', query };
  if (parts[0] === 'integrity') return { page: 'integrity', query };
  if (parts[0] === 'traces') return { page: 'traces', query };
  if (parts[0] === 'evidence') return { page: 'evidence', query };
  if (parts[0] === 'reviews') return { page: 'reviews', query };
  if (parts[0] === 'admin') return { page: 'admin', query };
  if (parts[0] === 'approvals') return { page: 'approvals', query };
  if (parts[0] === 'policies') return { page: 'policies', query };
  if (parts[0] === 'decisions') return { page: 'decisions', ...(parts[1] ? { id: decodeURIComponent(parts[1]) } : {}), query };
  if (parts[0] === 'incidents') return { page: 'incidents', ...(parts[1] ? { id: parts[1] } : {}), query };
  if (parts[0] === 'replays' && parts[1]) return { page: 'replay', id: parts[1], query };
  if (parts[0] === 'keys') return { page: 'keys', query };
  // The landing page after sign-in (and for any address the console does not know).
  return { page: 'overview', query };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(parseHash);
  useEffect(() => {
    const on = () => setRoute(parseHash());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}
