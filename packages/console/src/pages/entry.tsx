// One entry: every field, the exact text hashed, and its verification in this browser.
import { canonicalJson, entryBody } from '@audit-ledger/core';
import { useEffect, useState } from 'preact/hooks';
import { asEntryBody } from '@audit-ledger/sdk';
import { api } from '../api';
import { type Verdict, pinnedKeys, verifyEntry } from '../verify';
import type { Entry } from './logs';
import { Badge, ErrorLine, message } from '../ui';

export function EntryPage({ id, query }: { id: string; query?: URLSearchParams }) {
  const [entry, setEntry] = useState<Entry | null>(null);
  const [verdict, setVerdict] = useState<Verdict | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    setVerdict(null);
    api<Entry>(`/logs/${id}`).then(setEntry, (err) => setError(message(err)));
  }, [id]);
  // Back from pinning a key (?verify=1): the check the user asked for runs now.
  const autoVerify = query?.get('verify') === '1';
  useEffect(() => {
    if (entry && autoVerify && pinnedKeys().length > 0) void verifyEntry(entry).then(setVerdict, (err) => setError(message(err)));
  }, [entry, autoVerify]);
  if (error)
    return (
      <main>
        <ErrorLine error={error} />
      </main>
    );
  if (!entry) return <main aria-busy="true">Loading…</main>;
  const verify = async () => {
    if (pinnedKeys().length === 0) {
      location.hash = `#/keys?return=${encodeURIComponent(`#/logs/${id}?verify=1`)}`;
      return;
    }
    try {
      setVerdict(await verifyEntry(entry));
    } catch (err) {
      setError(message(err));
    }
  };
  // The governance checks are shown above, not among the entry's own fields (they are not part of it).
  const { data, extra, approval_check: _approvalCheck, policy_check: _policyCheck, ...fields } = entry;
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
      {entry.approval_check && (
        <p class={`badge ${entry.approval_check.result === 'ok' ? 'ok' : 'bad'}`} data-testid="approval-check">
          Approval check (recorded by the service beside this entry, not part of it): {entry.approval_check.result}
          {entry.approval_check.basis ? ` (${entry.approval_check.basis})` : ''} for approval <span class="mono">{entry.approval_check.approval_id}</span>
          {entry.approval_check.detail ? `: ${entry.approval_check.detail}` : ''}
          {entry.approval_check.check_log_id ? (
            <>
              {' · '}
              <a href={`#/logs/${entry.approval_check.check_log_id}`}>its approval.checked entry</a>
            </>
          ) : null}
        </p>
      )}
      {entry.policy_check && (
        <p class={`badge ${entry.policy_check.result === 'ok' ? 'ok' : 'warn'}`} data-testid="policy-check">
          Policy register: {entry.policy_check.result === 'ok' ? `version ${entry.policy_check.version} of ${entry.policy_check.policy_id} is registered` : `${entry.policy_check.result.replace('_', ' ')} (${entry.policy_check.policy_id})`}{' '}
          · <a href={`#/policies?policy=${encodeURIComponent(entry.policy_check.policy_id)}`}>the policy</a>
        </p>
      )}
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
