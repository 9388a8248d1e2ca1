// What key custody and agent signatures cost (issue 32): signing with a key in a PKCS#11 token
// (SoftHSM2, a token of the bench's own) against a key in memory, one signature at a time and a
// batch spread over the token's sessions; SQLite batch ingestion with the service's key in the
// token against a key file; and batch ingestion of events every one of which its agent signed,
// against the same events unsigned. Each as a ratio to the key-file path in the same run.
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { agentKeyRegistration, agentSigner, signAgentEvent } from '@audit-ledger/sdk';
import { memoryCustody } from '../src/crypto/custody.js';
import { Pkcs11Token } from '../src/crypto/pkcs11.js';

export interface CustodyRow {
  /** µs per signature on the calling thread: a key in memory (node:crypto), and the token's key. */
  fileSignUs: number;
  tokenSignUs: number;
  /** µs of wall time per signature for 1,000 at once: the token spreads them over its sessions. */
  tokenBatchUs: number;
  /** SQLite batch ingestion, events/s, with the service's key in a file and in the token. */
  ingestFile: number;
  ingestToken: number;
  /** SQLite batch ingestion, events/s, of the same events unsigned and signed by their agent. */
  agentNone: number;
  agentSigned: number;
}

type Start = (env: Record<string, string>) => Promise<{ url: string; child: ChildProcess }>;
type LoadFn = (url: string, body: string, connections: number, headers: Record<string, string>) => Promise<{ rps: number; non2xx: number }>;
type EventOf = (i: number) => { event_type: string; source: string; trace_id: string; data: Record<string, unknown> };

const SOFTHSM = '/usr/lib/softhsm/libsofthsm2.so';
const PIN = '135790';

/** A SoftHSM2 token in a directory of its own, initialized with softhsm2-util; its settings for a service. */
function benchToken(dir: string): Record<string, string> {
  fs.mkdirSync(path.join(dir, 'tokens'), { recursive: true });
  const conf = path.join(dir, 'softhsm2.conf');
  fs.writeFileSync(conf, `directories.tokendir = ${path.join(dir, 'tokens')}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  process.env.SOFTHSM2_CONF = conf;
  execFileSync('softhsm2-util', ['--init-token', '--free', '--label', 'bench', '--pin', PIN, '--so-pin', '24681357'], { stdio: 'pipe' });
  fs.writeFileSync(path.join(dir, 'pin'), PIN, { mode: 0o600 });
  return { SOFTHSM2_CONF: conf, LEDGER_PKCS11_MODULE: SOFTHSM, LEDGER_PKCS11_TOKEN_LABEL: 'bench', LEDGER_PKCS11_PIN_FILE: path.join(dir, 'pin') };
}

function perSignatureUs(sign: (m: Uint8Array) => Uint8Array, n: number): number {
  const messages = Array.from({ length: n }, () => randomBytes(96));
  for (const m of messages.slice(0, 100)) sign(m);
  const t0 = performance.now();
  for (const m of messages) sign(m);
  return ((performance.now() - t0) * 1000) / n;
}

async function call(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/** Batch ingestion of `bodyFor`'s body on a fresh SQLite service started with `env`: events/s. */
async function batchRate(start: Start, load: LoadFn, stop: (c: ChildProcess) => Promise<void>, env: Record<string, string>, bodyFor: (url: string, admin: Record<string, string>) => Promise<string>): Promise<number> {
  const { url, child } = await start({ LEDGER_DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'al-bench-custody-')), ...env });
  try {
    const { access_token } = (await call(`${url}/api/v1/auth/login`, { email: 'bench@example.com', password: 'bench password 123' })) as { access_token: string };
    const admin = { authorization: `Bearer ${access_token}` };
    const { key } = (await call(`${url}/api/v1/auth/api_keys`, { name: 'bench', rate_limit_per_minute: 1_000_000 }, admin)) as { key: string };
    const body = await bodyFor(url, admin);
    const agent = { 'x-api-key': key };
    await load(`${url}/api/v1/logs/batch`, body, 4, agent); // warm-up
    const r = await load(`${url}/api/v1/logs/batch`, body, 4, agent);
    if (r.non2xx > 0) throw new Error(`custody bench: ${r.non2xx} answers were not 2xx`);
    return r.rps * 1000;
  } finally {
    await stop(child);
  }
}

export async function custodyCosts(start: Start, load: LoadFn, stop: (c: ChildProcess) => Promise<void>, eventOf: EventOf): Promise<CustodyRow> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-bench-hsm-'));
  try {
    const tokenEnv = benchToken(dir);
    const token = Pkcs11Token.open({ module: SOFTHSM, tokenLabel: 'bench', pin: PIN });
    let fileSignUs: number;
    let tokenSignUs: number;
    let tokenBatchUs: number;
    try {
      const inToken = token.generate('bench-signing').custody;
      fileSignUs = perSignatureUs(memoryCustody(generateKeyPairSync('ed25519').privateKey).sign, 5000);
      tokenSignUs = perSignatureUs(inToken.sign, 5000);
      const batch = Array.from({ length: 1000 }, () => randomBytes(96));
      await inToken.signMany(batch);
      const t0 = performance.now();
      for (let i = 0; i < 5; i++) await inToken.signMany(batch);
      tokenBatchUs = ((performance.now() - t0) * 1000) / 5000;
    } finally {
      token.close();
    }
    console.log(`  custody: sign ${fileSignUs.toFixed(1)} µs (key in memory), ${tokenSignUs.toFixed(1)} µs (token), ${tokenBatchUs.toFixed(1)} µs per signature of a 1,000 batch (token sessions)`);
    const plainBody = async () => JSON.stringify({ logs: Array.from({ length: 1000 }, (_, i) => eventOf(i)) });
    const ingestFile = await batchRate(start, load, stop, {}, plainBody);
    const ingestToken = await batchRate(start, load, stop, { ...tokenEnv, LEDGER_PKCS11_KEY_LABEL: 'bench-signing' }, plainBody);
    console.log(`  custody: batch ingestion ${Math.round(ingestFile)} ev/s (key file), ${Math.round(ingestToken)} ev/s (token key)`);
    // The same events for one agent, unsigned and signed by it (registered first).
    const signer = await agentSigner('bench-agent', generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
    const events = Array.from({ length: 1000 }, (_, i) => ({ ...eventOf(i), agent_id: 'bench-agent', data: eventOf(i).data as never }));
    const signedLogs = await Promise.all(events.map((e) => signAgentEvent(e, signer)));
    const agentNone = await batchRate(start, load, stop, {}, async () => JSON.stringify({ logs: events }));
    const agentSigned = await batchRate(start, load, stop, {}, async (url, admin) => {
      const me = await (await fetch(`${url}/api/v1/auth/me`, { headers: admin })).json() as { company_id: string };
      await call(`${url}/api/v1/agent-keys`, await agentKeyRegistration(signer, me.company_id), admin);
      return JSON.stringify({ logs: signedLogs });
    });
    console.log(`  custody: batch ingestion ${Math.round(agentNone)} ev/s unsigned, ${Math.round(agentSigned)} ev/s every event signed by its agent`);
    return { fileSignUs, tokenSignUs, tokenBatchUs, ingestFile, ingestToken, agentNone, agentSigned };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function custodyLine(r: CustodyRow): string {
  const f = (n: number) => Math.round(n).toLocaleString('en-US');
  return (
    `an Ed25519 signature costs ${r.fileSignUs.toFixed(1)} µs with the key in memory and ${r.tokenSignUs.toFixed(1)} µs through the PKCS#11 token (${(r.tokenSignUs / r.fileSignUs).toFixed(2)}×), ` +
    `${r.tokenBatchUs.toFixed(1)} µs each in a batch of 1,000 spread over the token's sessions; SQLite batch ingestion ${f(r.ingestToken)} events/s with the key in the token against ${f(r.ingestFile)} with a key file (${(r.ingestToken / r.ingestFile).toFixed(2)}×); ` +
    `${f(r.agentSigned)} events/s with every event signed by its agent against ${f(r.agentNone)} unsigned (${(r.agentSigned / r.agentNone).toFixed(2)}×)`
  );
}
