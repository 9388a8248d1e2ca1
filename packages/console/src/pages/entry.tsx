// One entry: every field, the exact text hashed, and its verification in this browser.
import { canonicalJson, entryBody } from '@audit-ledger/core';
import { useEffect, useState } from 'preact/hooks';
import { asEntryBody } from '@audit-ledger/sdk';
import { api } from '../api';
import { type Verdict, pinnedKeys, verifyEntry } from '../verify';
import type { Entry } from './logs';
import { Badge, ErrorLine, message } from '../ui';

export function EntryPage({ id }: { id: string }) {
  const [entry, setEntry] = useState<Entry | null>(null);
  const [verdict, setVerdict] = useState<Verdict | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    setVerdict(null);
    api<Entry>(`/logs/${id}`).then(setEntry, (err) => setError(message(err)));
  }, [id]);
  if (error)
    return (
      <main>
        <ErrorLine error={error} />
      </main>
    );
  if (!entry) return <main aria-busy="true">Loading…</main>;
  const verify = async () => {
    if (pinnedKeys().length === 0) {
      location.hash = `#/keys?return=${encodeURIComponent(`#/logs/${id}`)}`;
      return;
    }
    try {
      setVerdict(await verifyEntry(entry));
    } catch (err) {
      setError(message(err));
    }
  };
  const { data, extra, ...fields } = entry;
  return (
    <main>
      <p>
        <a href="#/logs">← Logs</a>
      </p>
      <h1>
        Entry {entry.seq}: {entry.event_type}
      </h1>
      <button type="button" onClick={() => void verify()}>
        Verify in this browser
      </button>{' '}
      {entry.event_type === 'decision.made' && typeof entry.data?.decision_id === 'string' && (
        <a href={`#/reviews?decision_id=${encodeURIComponent(entry.data.decision_id)}`}>Review this decision</a>
      )}
      {verdict && <Badge verdict={verdict} />}
      <section class="drawer" aria-label="Entry fields">
        <dl class="fields">
          {Object.entries(fields).map(([k, v]) => (
            <>
              <dt key={`${k}-t`}>{k}</dt>
              <dd key={`${k}-d`} class="mono">
                {v === null ? '—' : String(v)}
              </dd>
            </>
          ))}
        </dl>
        <h2>data</h2>
        {data === null ? (
          <p data-testid="erased">
            Content erased at {String(entry.erased_at)} (erasure record <a href={`#/logs/${String(entry.erasure_id)}`}>{String(entry.erasure_id)}</a>). The entry still verifies through its content commitment.
          </p>
        ) : (
          <pre class="mono">{JSON.stringify(data, null, 2)}</pre>
        )}
        <h2>The exact text hashed (RFC 8785 canonical JSON of the entry body)</h2>
        <pre class="mono" data-testid="canonical-json">{canonicalJson(entryBody(asEntryBody(entry)))}</pre>
        {extra !== null && extra !== undefined && (
          <>
            <h2>extra</h2>
            <pre class="mono">{JSON.stringify(extra, null, 2)}</pre>
          </>
        )}
      </section>
    </main>
  );
}
