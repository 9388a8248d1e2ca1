// One entry: every field, the exact text hashed, and its verification in this browser.
import { type AgentKey, type AgentSignatureState, agentSignatureState, canonicalJson, entryBody, type JsonObject } from '@audit-ledger/core';
import { useEffect, useState } from 'preact/hooks';
import { asEntryBody } from '@audit-ledger/sdk';
import { api } from '../api';
import { copyRebuildsCommitment, type Verdict, pinnedKeys, verifyEntry } from '../verify';
import { lineDiff } from '../diff';
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
      {entry.agent_key_id ? <AgentSignature entry={entry} /> : null}
      {verdict?.contentChanged && <ChangedContent entry={entry} />}
      <section class="drawer" aria-label="Entry fields">
        {verdict?.hashChanged && (
          <p class="changed-note" data-testid="fields-changed">
            These fields no longer rebuild the hash that was signed: one of them was changed after the entry was recorded. The hash cannot say which; the signature over the stored hash shows what was signed.
          </p>
        )}
        <dl class={`fields${verdict?.hashChanged ? ' changed' : ''}`}>
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
          <pre class={`mono${verdict?.contentChanged ? ' changed' : ''}`} data-testid="entry-data" aria-describedby={verdict?.contentChanged ? 'changed-content' : undefined}>
            {JSON.stringify(data, null, 2)}
          </pre>
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

/**
 * The agent's own signature (format version 4, docs/ledger-format.md §20), checked in this browser
 * against the company's agent key register: which agent signed the event, with which key.
 */
function AgentSignature({ entry }: { entry: Entry }) {
  const [state, setState] = useState<AgentSignatureState | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    api<{ items: AgentKey[] }>(`/agent-keys?agent_id=${encodeURIComponent(String(entry.agent_id ?? ''))}`).then(
      (r) => setState(agentSignatureState(asEntryBody(entry) as Parameters<typeof agentSignatureState>[0], r.items)),
      (err) => setError(message(err)),
    );
  }, [entry.log_id]);
  if (error) return <ErrorLine error={error} />;
  if (!state) return <p aria-busy="true">Checking the agent's signature…</p>;
  const text =
    state.state === 'valid'
      ? `✓ Signed by the agent itself: ${state.agent_id}, with its key ${state.key_id} (checked in this browser against the agent key register)`
      : state.state === 'erased'
        ? `Signed by the agent with its key ${state.key_id}; the content was erased, so the signature can no longer be checked`
        : state.state === 'invalid'
          ? `✗ Agent signature does not hold: ${state.detail}`
          : 'Not signed by the agent';
  return (
    <p class={`badge ${state.state === 'invalid' ? 'bad' : 'ok'}`} data-testid="agent-signature">
      {text}
    </p>
  );
}

/** Pretty JSON with keys in canonical order, so two copies differ only where their content does. */
const pretty = (v: unknown) => JSON.stringify(JSON.parse(canonicalJson(v as JsonObject)), null, 2);

/**
 * The content does not rebuild its commitment. The commitment is a salted hash of data and extra
 * together, so it cannot say which field changed; a copy of the content as the agent sent it can,
 * once the page has checked that the copy rebuilds the commitment (so it is what was recorded).
 */
function ChangedContent({ entry }: { entry: Entry }) {
  const [copy, setCopy] = useState('');
  const [result, setResult] = useState<{ matches: boolean; original: JsonObject } | null>(null);
  const [error, setError] = useState('');
  const compare = (e: Event) => {
    e.preventDefault();
    setResult(null);
    let parsed: unknown;
    try {
      parsed = JSON.parse(copy);
    } catch {
      setError('That is not JSON: paste the data object exactly as your agent sent it.');
      return;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      setError('The data of an entry is a JSON object: paste the object your agent sent.');
      return;
    }
    setError('');
    const original = parsed as JsonObject;
    setResult({ matches: copyRebuildsCommitment(entry, original, (entry.extra ?? null) as JsonObject | null), original });
  };
  return (
    <section class="card changed" id="changed-content" aria-label="Changed content" data-testid="content-changed">
      <h2>The stored content was changed after it was recorded</h2>
      <p>
        The data and extra stored now do not rebuild the content commitment <span class="mono">{String(entry.content_commitment).slice(0, 16)}…</span> that the signed hash covers. The commitment is a salted hash of the
        whole content, so it cannot say which field changed. Paste the data as your agent sent it (from its own logs or outbox): this page checks that your copy rebuilds the commitment, and if it does, marks every line that differs from what is stored.
      </p>
      <form onSubmit={compare}>
        <label>
          Your copy of data (JSON)
          <textarea name="original" rows={5} class="mono" value={copy} onInput={(e) => setCopy((e.currentTarget as HTMLTextAreaElement).value)} />
        </label>
        <button type="submit">Compare with what is stored</button>
      </form>
      <ErrorLine error={error} />
      {result && !result.matches && (
        <p class="badge bad" role="status">
          Your copy does not rebuild the commitment either: it is not the content that was recorded, so it cannot show what changed.
        </p>
      )}
      {result?.matches && (
        <>
          <p class="badge ok" role="status">
            Your copy rebuilds the commitment: it is what was recorded. Lines marked − were recorded, lines marked + are what is stored now.
          </p>
          <div class="diff" role="group" aria-label="Recorded content against stored content" data-testid="content-diff">
            {lineDiff(pretty(result.original), pretty(entry.data)).map((l, i) => (
              <div key={i} class={l.kind}>
                {l.kind === 'added' ? '+ ' : l.kind === 'removed' ? '− ' : '  '}
                {l.text}
              </div>
            ))}
          </div>
        </>
      )}
    </section>
  );
}
