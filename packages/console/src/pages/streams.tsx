// Log streams (admins, on the Administration page): each stream's destination, state, cursor and
// lag with its last error, pause and resume behind a confirmation, and a form to add one. Tokens
// and keys are write-only; an HTTPS stream's signing secret is shown once (docs/integrations.md).
import type { Answer } from '@audit-ledger/sdk';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { Confirm, ErrorLine, message } from '../ui';

type StreamRow = Answer<'listStreams'>['items'][number];

/** The fields each destination type asks for (besides its type). */
const DESTINATIONS: Record<string, Array<{ name: string; label: string; type?: 'number' | 'url'; secret?: boolean; optional?: boolean; pem?: boolean }>> = {
  syslog: [
    { name: 'host', label: 'Host' },
    { name: 'port', label: 'Port', type: 'number' },
    { name: 'ca', label: 'CA certificate (PEM; empty: the system CAs)', optional: true, pem: true },
  ],
  splunk_hec: [
    { name: 'url', label: 'HEC URL', type: 'url' },
    { name: 'token', label: 'HEC token', secret: true },
    { name: 'ca', label: 'CA certificate (PEM; empty: the system CAs)', optional: true, pem: true },
  ],
  datadog: [
    { name: 'url', label: 'Logs intake URL', type: 'url' },
    { name: 'api_key', label: 'API key', secret: true },
  ],
  https: [{ name: 'url', label: 'URL', type: 'url' }],
  directory: [{ name: 'folder', label: 'Folder' }],
};

const n = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;

const where = (d: StreamRow['destination']) => {
  const v = d as Record<string, unknown>;
  return d.type === 'syslog' ? `syslog ${String(v.host)}:${String(v.port)}` : d.type === 'directory' ? `directory ${String(v.folder)}` : `${d.type} ${String(v.url)}`;
};

export function Streams({ onShown }: { onShown: (text: string) => void }) {
  const [streams, setStreams] = useState<StreamRow[]>([]);
  const [type, setType] = useState('syslog');
  const [error, setError] = useState('');
  const load = () => api<{ items: StreamRow[] }>('/streams').then((r) => setStreams(r.items), (err) => setError(message(err)));
  useEffect(() => void load(), []);
  const create = async (e: Event) => {
    e.preventDefault();
    const el = e.currentTarget as HTMLFormElement;
    const form = new FormData(el);
    setError('');
    const destination: Record<string, unknown> = { type };
    for (const f of DESTINATIONS[type] ?? []) {
      const v = String(form.get(f.name) ?? '').trim();
      if (v !== '' || !f.optional) destination[f.name] = f.type === 'number' ? Number(v) : v;
    }
    const types = String(form.get('event_types') ?? '')
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean);
    try {
      const r = await api<{ name: string; secret?: string }>('/streams', {
        method: 'POST',
        body: { name: String(form.get('name')), destination, format: String(form.get('format')), start: String(form.get('start')), ...(types.length ? { filter: { event_types: types } } : {}) },
      });
      if (r.secret) onShown(`Signing secret for the stream ${r.name} (shown once): ${r.secret}`);
      el.reset();
      await load();
    } catch (err) {
      setError(message(err));
    }
  };
  return (
    <section class="card" aria-label="Log streams">
      <h2>Log streams</h2>
      <p>
        The ledger sent as it grows to your SIEM, syslog server or a folder; every batch carries its checkpoint and proofs, so the copy verifies with <code>audit-ledger-verify --stream</code>.
      </p>
      <ErrorLine error={error} />
      <div class="table-scroll">
        <table aria-label="Log streams">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Destination</th>
              <th scope="col">Format</th>
              <th scope="col">State</th>
              <th scope="col">Lag</th>
              <th scope="col">Delivered</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {streams.map((s) => (
              <tr key={s.id}>
                <td>{s.name}</td>
                <td class="mono">{where(s.destination)}</td>
                <td>{s.format}</td>
                <td>
                  {s.status}
                  {s.last_error && <div class="badge bad">{`${n(s.attempts, 'failed attempt', 'failed attempts')}: ${s.last_error}`}</div>}
                  {s.status_reason && s.status !== 'active' && <div>{s.status_reason}</div>}
                </td>
                <td>{s.lag.entries === 0 ? 'caught up' : `${n(s.lag.entries, 'entry', 'entries')}, oldest ${s.lag.seconds} s`}</td>
                <td>{`${n(s.delivered_entries, 'entry', 'entries')} in ${n(s.delivered_batches, 'batch', 'batches')}; cursor at seq ${s.cursor_seq}`}</td>
                <td>
                  {s.status === 'active' ? (
                    <Confirm label={`Pause ${s.name}`} title={`Pause the stream ${s.name}`} what="Nothing is sent until you resume it; then it continues from where it stopped. Recorded in the ledger under your name." run={async () => void (await api(`/streams/${s.id}/pause`, { method: 'POST' }), await load())} />
                  ) : (
                    <Confirm label={`Resume ${s.name}`} title={`Resume the stream ${s.name}`} what={`Sends again from seq ${s.cursor_seq}, at once, with a new retry window. Recorded in the ledger under your name.`} run={async () => void (await api(`/streams/${s.id}/resume`, { method: 'POST' }), await load())} />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <form class="filters" onSubmit={(e) => void create(e)} aria-label="Add a log stream">
        <label>
          Name
          <input name="name" required maxLength={200} />
        </label>
        <label>
          Destination
          <select name="type" value={type} onChange={(e) => setType((e.currentTarget as HTMLSelectElement).value)}>
            <option value="syslog">syslog over TLS</option>
            <option value="splunk_hec">Splunk HEC</option>
            <option value="datadog">Datadog</option>
            <option value="https">HTTPS (NDJSON)</option>
            <option value="directory">directory</option>
          </select>
        </label>
        {(DESTINATIONS[type] ?? []).map((f) => (
          <label key={`${type}-${f.name}`}>
            {f.label}
            {f.pem ? <textarea name={f.name} rows={2} /> : <input name={f.name} type={(f.secret ? 'password' : (f.type ?? 'text')) as 'text'} required={!f.optional} autoComplete="off" />}
          </label>
        ))}
        <label>
          Format
          <select name="format">
            {type === 'syslog' || type === 'directory' ? <option value="cef">CEF</option> : null}
            <option value="ocsf">OCSF</option>
            <option value="ledger">ledger JSON</option>
          </select>
        </label>
        <label>
          Event types (comma-separated, empty: all)
          <input name="event_types" />
        </label>
        <label>
          Start
          <select name="start">
            <option value="now">from now</option>
            <option value="beginning">from the first entry</option>
          </select>
        </label>
        <button type="submit">Add stream</button>
      </form>
    </section>
  );
}
