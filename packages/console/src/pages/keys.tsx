// Pinned keys: what this browser trusts, and keys endorsed by a pinned one in a signed transition.
import { useEffect, useState } from 'preact/hooks';
import { type ServiceKey, pinKey, pinnedKeys, serviceKeys, trustedKeys, unpinAll } from '../verify';

export function Keys({ query }: { query: URLSearchParams }) {
  const [keys, setKeys] = useState<ServiceKey[]>([]);
  const [pinned, setPinned] = useState(pinnedKeys);
  const [endorsed, setEndorsed] = useState<Map<string, string>>(new Map());
  useEffect(() => void serviceKeys().then((r) => setKeys(r.items)), []);
  useEffect(() => void trustedKeys().then((t) => setEndorsed(t.endorsed)), [pinned]);
  const back = query.get('return');
  return (
    <main>
      <h1>Pinned keys</h1>
      {back && pinned.length === 0 && (
        <p class="badge warn" role="status">
          To verify in this browser, the console needs a key it trusts, and this browser has pinned none yet. Compare the key below with the one your operator published (out of band), then pin it: you go back, and the check runs.
        </p>
      )}
      <p>
        The console trusts only the keys you pin here, in this browser. Compare a key's id and verifier key with the ones your operator published
        (out of band) before you pin it. A key the service shows that you did not pin is never used.
      </p>
      <table aria-label="Signing keys">
        <thead>
          <tr>
            <th scope="col">Key id</th>
            <th scope="col">Verifier key</th>
            <th scope="col">Active</th>
            <th scope="col">Pinned</th>
          </tr>
        </thead>
        <tbody>
          {keys.map((k) => {
            const isPinned = pinned.some((p) => p.key_id === k.key_id && p.public_key === k.public_key);
            const conflict = pinned.some((p) => p.key_id === k.key_id && p.public_key !== k.public_key);
            return (
              <tr key={k.key_id}>
                <td class="mono">{k.key_id}</td>
                <td class="mono">{k.note_verifier_key}</td>
                <td>
                  {k.active_from} – {k.active_to ?? 'now'}
                </td>
                <td>
                  {conflict ? (
                    <span class="badge bad">Changed: not the key you pinned</span>
                  ) : isPinned ? (
                    <span class="badge ok">Pinned</span>
                  ) : endorsed.has(k.key_id) ? (
                    <span class="badge ok">Trusted: {endorsed.get(k.key_id)}</span>
                  ) : pinned.length > 0 ? (
                    <>
                      <span class="badge bad" role="alert">
                        Not trusted: no signed transition from a key you pinned
                      </span>{' '}
                      <button
                        type="button"
                        class="secondary"
                        onClick={() => {
                          pinKey(k);
                          setPinned(pinnedKeys());
                        }}
                      >
                        Pin key {k.key_id} anyway
                      </button>
                    </>
                  ) : (
                    <button
                      type="button"
                      onClick={() => {
                        pinKey(k);
                        setPinned(pinnedKeys());
                        if (back) location.hash = back;
                      }}
                    >
                      Pin key {k.key_id}
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <p>
        <button
          type="button"
          class="secondary"
          onClick={() => {
            unpinAll();
            setPinned([]);
          }}
        >
          Forget all pinned keys
        </button>
      </p>
    </main>
  );
}
