// Administration (admins): health, usage, webhooks and deliveries, log streams (streams.tsx), the API key, users and roles.
import type { Answer } from '@audit-ledger/sdk';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { Confirm, ErrorLine, message } from '../ui';
import { Streams } from './streams';

// The service's answers, typed from its OpenAPI document (through the SDK's generated types).
type UserRow = Answer<'listUsers'>['items'][number];
type KeyRow = Answer<'listApiKeys'>['items'][number];
type EndpointRow = Answer<'listWebhookEndpoints'>['items'][number];
type DeliveryRow = Answer<'listWebhookDeliveries'>['items'][number];
const EVENT_TYPES = ['api_key.created', 'api_key.revoked', 'integrity.violation_detected', 'integrity.verification_completed', 'hitl.rejected', 'forensics.anomaly_detected', 'webhook_endpoint.disabled'];

/** Events and requests per day, as bars (the usage of the period the service reports). */
function UsageChart({ days }: { days: Array<{ day: string; api_requests: number; events_ingested: number }> }) {
  if (days.length === 0) return <p>No usage recorded yet.</p>;
  const max = Math.max(1, ...days.map((d) => Math.max(d.api_requests, d.events_ingested)));
  const bw = 14;
  return (
    <svg width={days.length * (2 * bw + 10) + 20} height={140} role="img" aria-label={`Usage per day: ${days.map((d) => `${d.day}: ${d.events_ingested} events, ${d.api_requests} requests`).join('; ')}`} data-testid="usage-chart">
      {days.map((d, i) => {
        const x = 10 + i * (2 * bw + 10);
        const he = (d.events_ingested / max) * 110;
        const hr = (d.api_requests / max) * 110;
        return (
          <g key={d.day}>
            <rect x={x} y={115 - he} width={bw} height={he} fill="#0b57d0">
              <title>{`${d.day}: ${d.events_ingested} events`}</title>
            </rect>
            <rect x={x + bw} y={115 - hr} width={bw} height={hr} fill="#7a4f01">
              <title>{`${d.day}: ${d.api_requests} requests`}</title>
            </rect>
            <text x={x} y={132} font-size="10">
              {d.day.slice(5)}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

function Webhooks({ onShown }: { onShown: (text: string) => void }) {
  const [endpoints, setEndpoints] = useState<EndpointRow[]>([]);
  const [open, setOpen] = useState<string | null>(null);
  const [deliveries, setDeliveries] = useState<DeliveryRow[]>([]);
  const [error, setError] = useState('');
  const load = () => api<{ items: EndpointRow[] }>('/webhooks/endpoints').then((r) => setEndpoints(r.items), (err) => setError(message(err)));
  useEffect(() => void load(), []);
  const show = async (id: string) => {
    setOpen(id);
    // What an earlier attempt said is not left on screen.
    setError('');
    try {
      setDeliveries((await api<{ items: DeliveryRow[] }>(`/webhooks/endpoints/${id}/deliveries?limit=20`)).items);
    } catch (err) {
      setError(message(err));
    }
  };
  const create = async (e: Event) => {
    e.preventDefault();
    const el = e.currentTarget as HTMLFormElement;
    const form = new FormData(el);
    setError('');
    try {
      const r = await api<{ secret: string; url: string }>('/webhooks/endpoints', { method: 'POST', body: { url: String(form.get('url')), event_types: form.getAll('event_types').map(String) } });
      onShown(`Signing secret for ${r.url} (shown once): ${r.secret}`);
      el.reset();
      setError('');
      await load();
    } catch (err) {
      setError(message(err));
    }
  };
  return (
    <section class="card" aria-label="Webhooks">
      <h2>Webhooks</h2>
      <ErrorLine error={error} />
      <table aria-label="Webhook endpoints">
        <thead>
          <tr>
            <th scope="col">URL</th>
            <th scope="col">Events</th>
            <th scope="col">State</th>
            <th scope="col">Deliveries</th>
          </tr>
        </thead>
        <tbody>
          {endpoints.map((ep) => (
            <tr key={ep.id}>
              <td class="mono">{ep.url}</td>
              <td>{ep.event_types.join(', ')}</td>
              <td>{ep.enabled ? 'enabled' : `disabled (${ep.disabled_reason ?? ''})`}</td>
              <td>
                <button type="button" class="secondary" onClick={() => void show(ep.id)}>
                  Deliveries of {ep.url}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {open && (
        <table aria-label="Deliveries">
          <thead>
            <tr>
              <th scope="col">Attempted</th>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Result</th>
            </tr>
          </thead>
          <tbody>
            {deliveries.map((d) => (
              <tr key={d.id}>
                <td>{d.attempted_at}</td>
                <td>{d.event_type}</td>
                <td>{d.status_code ?? d.error ?? ''}</td>
                <td>{d.result}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form class="filters" onSubmit={(e) => void create(e)} aria-label="Add a webhook endpoint">
        <label>
          URL
          <input name="url" type="url" required />
        </label>
        <fieldset>
          <legend>Events</legend>
          {EVENT_TYPES.map((t) => (
            <label key={t} class="inline">
              <input type="checkbox" name="event_types" value={t} defaultChecked={t === 'integrity.violation_detected'} /> {t}
            </label>
          ))}
        </fieldset>
        <button type="submit">Add endpoint</button>
      </form>
    </section>
  );
}

/**
 * A user's role: choosing another one changes nothing until Save, which asks for confirmation
 * (an arrow key on the list once changed the role at once, with a permanent ledger entry).
 */
function RoleEditor({ user, onSaved }: { user: UserRow; onSaved: () => Promise<void> }) {
  // What the admin chose and has not saved; null shows the stored role. No effect copies the stored
  // role into this state: one that ran after the first paint undid a choice made in that moment.
  const [chosen, setChosen] = useState<UserRow['role'] | null>(null);
  const role = chosen ?? user.role;
  return (
    <span class="actions">
      <select aria-label={`Role of ${user.email}`} value={role} onChange={(e) => setChosen((e.currentTarget as HTMLSelectElement).value as UserRow['role'])}>
        <option value="admin">admin</option>
        <option value="reviewer">reviewer</option>
        <option value="auditor">auditor</option>
      </select>
      {role !== user.role && (
        <Confirm
          label={`Save role of ${user.email}`}
          title={`Change the role of ${user.email}`}
          what={`From ${user.role} to ${role}: it takes effect on their next request, and is recorded in the ledger under your name.`}
          run={async () => {
            await api(`/users/${user.user_id}`, { method: 'PATCH', body: { role } });
            setChosen(null);
            await onSaved();
          }}
        />
      )}
    </span>
  );
}

/** Admins: the API key, users and roles, usage and health. The API enforces the role too. */
export function Admin({ role }: { role: string }) {
  const [users, setUsers] = useState<UserRow[]>([]);
  const [keys, setKeys] = useState<KeyRow[]>([]);
  const [usage, setUsage] = useState<{ from: string; to: string; totals: { api_requests: number; events_ingested: number }; by_day: Array<{ day: string; api_requests: number; events_ingested: number }> } | null>(null);
  const [health, setHealth] = useState<{ status: string } | null>(null);
  const [shown, setShown] = useState('');
  const [error, setError] = useState('');
  const load = async () => {
    try {
      const [u, k, us, h] = await Promise.all([
        api<{ items: UserRow[] }>('/users'),
        api<{ items: KeyRow[] }>('/auth/api_keys'),
        api<{ from: string; to: string; totals: { api_requests: number; events_ingested: number }; by_day: Array<{ day: string; api_requests: number; events_ingested: number }> }>('/usage'),
        api<{ status: string }>('/health').catch(() => ({ status: 'down' })),
      ]);
      setUsers(u.items);
      setKeys(k.items);
      setUsage(us);
      setHealth(h);
    } catch (err) {
      setError(message(err));
    }
  };
  useEffect(() => void (role === 'admin' && load()), []);
  if (role !== 'admin')
    return (
      <main>
        <h1>Administration</h1>
        <p role="alert">Administration is for admins; your role is {role}.</p>
      </main>
    );
  const act = async (f: () => Promise<unknown>) => {
    // What an earlier attempt said is not left on screen.
    setError('');
    try {
      await f();
      setError('');
      await load();
    } catch (err) {
      setError(message(err));
    }
  };
  const invite = (e: Event) => {
    e.preventDefault();
    const el = e.currentTarget as HTMLFormElement;
    const form = new FormData(el);
    void act(async () => {
      const r = await api<{ one_time_password: string | null; user: UserRow }>('/users', { method: 'POST', body: { email: String(form.get('email')), role: String(form.get('role')) } });
      el.reset();
      setShown(`One-time password for ${r.user.email} (shown once): ${r.one_time_password}`);
    });
  };
  const createKey = () =>
    void act(async () => {
      const r = await api<{ key: string }>('/auth/api_keys', { method: 'POST', body: { name: 'agents', rate_limit_per_minute: 6000 } });
      setShown(`New API key (shown once): ${r.key}`);
    });
  return (
    <main>
      <h1>Administration</h1>
      {shown && (
        <p class="badge warn mono" role="status">
          {shown}
        </p>
      )}
      <ErrorLine error={error} />
      <section class="card" aria-label="Health and usage">
        <h2>Health and usage</h2>
        <p>
          Service: {health?.status ?? '…'}. Requests {usage?.totals.api_requests ?? "…"}, events {usage?.totals.events_ingested ?? "…"} {usage ? `from ${usage.from} to ${usage.to} (UTC days)` : ''}.
        </p>
        <UsageChart days={usage?.by_day ?? []} />
        <p>Blue: events ingested; brown: API requests, per day.</p>
      </section>
      <Webhooks onShown={setShown} />
      <Streams onShown={setShown} />
      <section class="card" aria-label="API key">
        <h2>API key</h2>
        <table aria-label="API keys">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Prefix</th>
              <th scope="col">Status</th>
              <th scope="col">Rate limit</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <tr key={k.id}>
                <td>{k.name}</td>
                <td class="mono">{k.key_prefix}</td>
                <td>{k.status}</td>
                <td>{k.rate_limit_per_minute}/min</td>
                <td>
                  {k.status === 'active' && (
                    <Confirm
                      label={`Revoke ${k.key_prefix}`}
                      danger
                      title={`Revoke API key ${k.key_prefix}`}
                      what="Every agent using this key is refused from the next request on; this cannot be undone (create a new key after). Recorded in the ledger under your name."
                      run={async () => {
                        await api(`/auth/api_keys/${k.id}`, { method: 'DELETE' });
                        await load();
                      }}
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {!keys.some((k) => k.status === 'active') && (
          <button type="button" onClick={createKey}>
            Create the API key
          </button>
        )}
      </section>
      <section class="card" aria-label="Users">
        <h2>Users</h2>
        <table aria-label="Users and roles">
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">State</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {users.map((u) => (
              <tr key={u.user_id}>
                <td>{u.email}</td>
                <td>
                  <RoleEditor user={u} onSaved={load} />
                </td>
                <td>{u.disabled ? 'disabled' : u.password_change_required ? 'invited' : 'active'}</td>
                <td>
                  <Confirm
                    label={`${u.disabled ? 'Enable' : 'Disable'} ${u.email}`}
                    danger={!u.disabled}
                    title={`${u.disabled ? 'Enable' : 'Disable'} ${u.email}`}
                    what={u.disabled ? `${u.email} can sign in again with their password.` : `${u.email} is signed out everywhere and cannot sign in until enabled. Recorded in the ledger under your name.`}
                    run={async () => {
                      await api(`/users/${u.user_id}`, { method: 'PATCH', body: { disabled: !u.disabled } });
                      await load();
                    }}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <form class="filters" onSubmit={invite} aria-label="Invite a user">
          <label>
            Email
            <input name="email" type="email" required />
          </label>
          <label>
            Role
            <select name="role">
              <option value="auditor">auditor</option>
              <option value="reviewer">reviewer</option>
              <option value="admin">admin</option>
            </select>
          </label>
          <button type="submit">Invite</button>
        </form>
      </section>
    </main>
  );
}
