// The logs table: filters, columns and cursor pages, all in the URL.
import type { LedgerEntry } from '@audit-ledger/sdk';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorLine, message } from '../ui';

/** A stored entry as GET /logs/{id} answers it (the SDK's generated type). */
export type Entry = LedgerEntry;

const COLUMNS = [
  ['seq', 'Seq'],
  ['created_at', 'Created'],
  ['timestamp', 'Client time'],
  ['event_type', 'Event type'],
  ['source', 'Source'],
  ['agent_id', 'Agent'],
  ['trace_id', 'Trace'],
  ['session_id', 'Session'],
] as const;
const DEFAULT_COLUMNS = ['seq', 'created_at', 'event_type', 'source', 'agent_id', 'trace_id'];

const FILTERS = [
  ['event_type', 'Event type (end with * for a prefix)'],
  ['source', 'Source'],
  ['agent_id', 'Agent'],
  ['trace_id', 'Trace id'],
  ['session_id', 'Session id'],
  ['from', 'From (UTC day)'],
  ['to', 'To (UTC day, included)'],
] as const;

/** The event types docs/event-types.md describes, offered as suggestions (any type can be typed). */
const KNOWN_TYPES = ['agent.invoked', 'agent.step', 'llm.call', 'tool.called', 'tool.failed', 'context.retrieved', 'policy.evaluated', 'policy.denied', 'decision.made', 'action.executed', 'action.blocked', 'hitl.*', 'hitl.rejected', 'approval.*', 'incident.*', 'agent.completed', 'agent.failed'];

/**
 * The API's query for a filter as the URL keeps it: a day (from the date picker) becomes the
 * instant it starts, and `to` the start of the next day (the day is included); a full timestamp
 * typed in the URL passes as it is.
 */
function apiValue(key: string, value: string): string {
  if ((key === 'from' || key === 'to') && /^\d{4}-\d{2}-\d{2}$/.test(value)) {
    const start = Date.parse(`${value}T00:00:00Z`);
    return new Date(key === 'to' ? start + 86_400_000 : start).toISOString();
  }
  return value;
}

/** The export's query for the filters it takes (trace, event type, time). */
function exportQuery(query: URLSearchParams, format: 'jsonl' | 'csv'): string {
  const q = new URLSearchParams({ format });
  for (const k of ['trace_id', 'event_type', 'from', 'to']) {
    const v = query.get(k);
    if (v) q.set(k, apiValue(k, v));
  }
  return q.toString();
}

/**
 * The logs table: one page of 100 entries at a time, newest first, following the API's cursor
 * (kept in the URL as `page`, so a page is a link). The page never holds more than 100 rows,
 * however large the ledger: it stays as fast at 100,000 entries as at 100.
 */
export function Logs({ query }: { query: URLSearchParams }) {
  const [items, setItems] = useState<Entry[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState('');
  const page = query.get('page');
  const load = useCallback(
    async (after: string | null) => {
      // Only the filters go to the API (the URL also holds view state such as the columns).
      const q = new URLSearchParams();
      for (const [k] of FILTERS) {
        const v = query.get(k);
        if (v) q.set(k, apiValue(k, v));
      }
      q.set('limit', '100');
      // Words or JSON-path conditions: the search (newest first); otherwise the list.
      const words = query.get('q');
      const where = query.getAll('where').filter(Boolean);
      const searching = Boolean(words) || where.length > 0;
      if (words) q.set('q', words);
      for (const w of where) q.append('where', w);
      if (!searching) q.set('order', 'desc');
      if (searching) {
        q.delete('source');
        q.delete('session_id');
      }
      if (after) q.set('cursor', after);
      try {
        const answer = await api<{ items: Entry[]; next_cursor: string | null }>(`${searching ? '/logs/search' : '/logs'}?${q}`);
        setItems(answer.items);
        setCursor(answer.next_cursor);
        setError('');
      } catch (err) {
        setError(message(err));
      }
    },
    [query.toString()],
  );
  useEffect(() => void load(page), [load, page]);
  const goTo = (next: string | null) => {
    const q = new URLSearchParams(query);
    if (next) q.set('page', next);
    else q.delete('page');
    location.hash = `#/logs?${q}`;
  };
  const cols = (query.get('cols') ?? DEFAULT_COLUMNS.join(',')).split(',').filter((c) => COLUMNS.some(([k]) => k === c));
  const toggle = (col: string) => {
    const next = cols.includes(col) ? cols.filter((c) => c !== col) : COLUMNS.map(([k]) => k).filter((k) => k === col || cols.includes(k));
    const q = new URLSearchParams(query);
    q.set('cols', next.join(','));
    location.hash = `#/logs?${q}`;
  };
  const filter = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const q = new URLSearchParams();
    if (query.get('cols')) q.set('cols', query.get('cols') as string);
    for (const [k] of FILTERS) {
      const v = String(form.get(k) ?? '').trim();
      if (v) q.set(k, v);
    }
    const words = String(form.get('q') ?? '').trim();
    if (words) q.set('q', words);
    for (const w of String(form.get('where') ?? '').split('\n').map((x) => x.trim()).filter(Boolean)) q.append('where', w);
    location.hash = `#/logs${q.size ? `?${q}` : ''}`;
  };
  return (
    <main>
      <h1>Logs</h1>
      <form class="filters" onSubmit={filter} aria-label="Filter entries">
        <label>
          Search inside events (words)
          <input name="q" type="search" defaultValue={query.get('q') ?? ''} placeholder="refund margaret" />
        </label>
        <label>
          Conditions on data (one a line)
          <textarea name="where" rows={2} defaultValue={query.getAll('where').join('\n')} placeholder={'data.customer_id = "c-42"\ndata.amount > 100'} />
        </label>
        {FILTERS.map(([k, label]) => (
          <label key={k}>
            {label}
            <input name={k} defaultValue={query.get(k) ?? ''} {...(k === 'from' || k === 'to' ? { type: 'date' } : k === 'event_type' ? { list: 'known-event-types' } : {})} />
          </label>
        ))}
        <datalist id="known-event-types">
          {KNOWN_TYPES.map((t) => (
            <option key={t} value={t} />
          ))}
        </datalist>
        <button type="submit">Filter</button>
      </form>
      <p>
        Export what this filter selects (every page, in seq order; the export is recorded in the ledger):{' '}
        <a href={`/api/v1/exports/logs?${exportQuery(query, 'jsonl')}`} download="audit-ledger-export.jsonl">
          JSON Lines (verifiable)
        </a>{' '}
        ·{' '}
        <a href={`/api/v1/exports/logs?${exportQuery(query, 'csv')}`} download="audit-ledger-export.csv">
          CSV
        </a>
      </p>
      <details class="card">
        <summary>Columns</summary>
        <fieldset>
          <legend>Columns shown</legend>
          {COLUMNS.map(([k, label]) => (
            <label key={k} class="inline">
              <input type="checkbox" checked={cols.includes(k)} onChange={() => toggle(k)} /> {label}
            </label>
          ))}
        </fieldset>
      </details>
      <ErrorLine error={error} />
      <table aria-label="Ledger entries">
        <thead>
          <tr>
            {COLUMNS.filter(([k]) => cols.includes(k)).map(([k, label]) => (
              <th key={k} scope="col">
                {label}
              </th>
            ))}
            <th scope="col">Open</th>
          </tr>
        </thead>
        <tbody>
          {items.map((e) => (
            <tr key={e.log_id} class="row" onClick={() => (location.hash = `#/logs/${e.log_id}`)}>
              {COLUMNS.filter(([k]) => cols.includes(k)).map(([k]) => (
                <td key={k} class={k.endsWith('_id') ? 'mono' : undefined}>
                  {e[k] === null || e[k] === undefined ? '' : String(e[k])}
                </td>
              ))}
              <td>
                <a href={`#/logs/${e.log_id}`} aria-label={`Open entry ${e.seq}`}>
                  open
                </a>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <nav aria-label="Pages" class="pages">
        <button type="button" class="secondary" disabled={!page} onClick={() => goTo(null)}>
          Newest
        </button>{' '}
        <button type="button" class="secondary" disabled={!cursor || items.length === 0} onClick={() => goTo(cursor)}>
          Older
        </button>{' '}
        <span>
          {items.length} entries on this page{items.length > 0 ? `: seq ${items[0]?.seq} to ${items.at(-1)?.seq}` : ''}.
        </span>
      </nav>
    </main>
  );
}
