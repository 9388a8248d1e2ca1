// `audit-ledger keys rotate`: asks the running service to rotate its signing key, so every
// process switches at once and no entry is ever signed by a retired key. Rotating from the
// command line alone (rewriting the key file under a running service) cannot promise that,
// so this command never touches the store itself.
import { readBounded } from '../egress/bounded.js';

export async function rotateKeyCommand(opts: { url: string; token: string | undefined; pkcs11KeyLabel?: string | undefined }): Promise<{ code: number; output: string }> {
  if (!opts.token) return { code: 2, output: 'keys rotate: set LEDGER_OPERATOR_TOKEN (the same token the service has) in the environment\n' };
  // A token an HTTP header cannot carry (the README's "…" placeholder, copied as is) would fail in
  // fetch before anything is sent, and read as "no service answered".
  if (!/^[\x21-\x7e]+$/.test(opts.token)) {
    return { code: 2, output: 'keys rotate: LEDGER_OPERATOR_TOKEN is not a token (it holds spaces or characters outside printable ASCII: is it still a placeholder?); set it to the token the service was started with\n' };
  }
  const endpoint = `${opts.url.replace(/\/+$/, '')}/api/v1/integrity/keys/rotate`;
  let res: Response;
  try {
    const body = opts.pkcs11KeyLabel === undefined ? {} : { body: JSON.stringify({ pkcs11_key_label: opts.pkcs11KeyLabel }), headers: { authorization: `Bearer ${opts.token}`, 'content-type': 'application/json' } };
    res = await fetch(endpoint, { method: 'POST', headers: { authorization: `Bearer ${opts.token}` }, ...body });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
    return {
      code: 1,
      output: `keys rotate: no service answered at ${endpoint} (${cause}). The rotation is done by the running service, so that every process switches at once: start it (or pass --url) and run this again.\n`,
    };
  }
  const body = (await readBounded(res, 1024 * 1024).then((t) => JSON.parse(t) as unknown).catch(() => ({}))) as { old_key_id?: string; new_key_id?: string; created_at?: string; detail?: string };
  if (res.status === 401 || res.status === 403) {
    return { code: 1, output: `keys rotate: the service at ${endpoint} refused the operator token (${res.status}: ${body.detail ?? 'no detail'}): LEDGER_OPERATOR_TOKEN must be the token the service was started with, and the service must have one\n` };
  }
  if (!res.ok) return { code: 1, output: `keys rotate: the service answered ${res.status}: ${body.detail ?? 'no detail'}\n` };
  return {
    code: 0,
    output:
      `active signing key is now ${body.new_key_id} (was ${body.old_key_id}, retired at ${body.created_at})\n` +
      'every process signs with it from now on; the old key endorsed it in a signed key-transition statement (GET /api/v1/integrity/keys)\n',
  };
}
