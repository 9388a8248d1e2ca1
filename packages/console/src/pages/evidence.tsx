// Evidence: exports and bundles downloaded with the session, and the offline verify command.
import { pinnedKeys } from '../verify';

export function Evidence({ query }: { query: URLSearchParams }) {
  const trace = query.get('trace_id') ?? '';
  const from = query.get('from_seq') ?? '';
  const to = query.get('to_seq') ?? '';
  const select = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const q = new URLSearchParams();
    for (const k of ['trace_id', 'from_seq', 'to_seq']) {
      const v = String(form.get(k) ?? '').trim();
      if (v) q.set(k, v);
    }
    location.hash = `#/evidence?${q}`;
  };
  const selection = trace ? `trace_id=${encodeURIComponent(trace)}` : from && to ? `from_seq=${from}&to_seq=${to}` : '';
  const exportFilter = trace ? `&trace_id=${encodeURIComponent(trace)}` : '';
  const downloadKeys = () => {
    const blob = new Blob([JSON.stringify({ items: pinnedKeys() }, null, 2)], { type: 'application/json' });
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = 'pinned-keys.json';
    a.click();
    URL.revokeObjectURL(a.href);
  };
  return (
    <main>
      <h1>Evidence</h1>
      <p>Exports and evidence bundles for a trace or a range of entries, to hand to an auditor or a regulator. Downloads use your session.</p>
      <form class="filters" onSubmit={select} aria-label="Select entries">
        <label>
          Trace id
          <input name="trace_id" defaultValue={trace} />
        </label>
        <label>
          From seq
          <input name="from_seq" inputMode="numeric" defaultValue={from} />
        </label>
        <label>
          To seq (inclusive)
          <input name="to_seq" inputMode="numeric" defaultValue={to} />
        </label>
        <button type="submit">Select</button>
      </form>
      <div class="card">
        <h2>Downloads</h2>
        <ul>
          <li>
            <a href={`/api/v1/exports/logs?format=jsonl${exportFilter}`}>JSON Lines export</a> (verifiable; the whole ledger when no trace is selected)
          </li>
          <li>
            <a href={`/api/v1/exports/logs?format=csv${exportFilter}`}>CSV export</a> (for reading)
          </li>
          <li>{selection ? <a href={`/api/v1/exports/evidence?${selection}`}>Evidence bundle</a> : 'Evidence bundle: select a trace or a range first'}</li>
          <li>
            <button type="button" class="secondary" onClick={downloadKeys} disabled={pinnedKeys().length === 0}>
              Download the keys you pinned
            </button>
          </li>
        </ul>
      </div>
      <div class="card">
        <h2>Verify a bundle offline</h2>
        <p>
          With the keys you pinned (never the ones inside the bundle), on any machine with Node.js 22.14 or later. Install the verifier from the release files (<code>npm run release</code> in the repository makes them; check them
          with <code>sha256sum -c SHA256SUMS</code>): it is not on the public npm registry, so never <code>npx</code> it by name.
        </p>
        <pre class="mono">npm install ./audit-ledger-core-0.1.0.tgz ./audit-ledger-verify-0.1.0.tgz{'\n'}npx audit-ledger-verify evidence.json --public-key pinned-keys.json</pre>
        <p>It recomputes every hash, checks every signature and inclusion proof and the checkpoint's signature, and exits 0 only when all hold.</p>
      </div>
    </main>
  );
}
