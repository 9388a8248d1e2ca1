// Ingestion by event size (issue 33: "a bench case with realistic event sizes, a 300–500 byte
// data and 4 KB, as well as the small ones"), and the verification ceiling. One SQLite service
// takes batches of small events (about 60 bytes of data), of the run's usual events (about 400
// bytes) and of 4 KB events (200 to a batch, so a body stays under MAX_BODY_BYTES' 1 MiB); each a
// rate in events/s, set against the one-core signing rate of the same run.
import type { ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomUUID, sign, verify } from 'node:crypto';
import { ed25519Backend, verifyEd25519 } from '@audit-ledger/core';

export interface SizeRow {
  /** Bytes of data (its JSON) per event, and the events per batch. */
  dataBytes: number;
  batch: number;
  eventsPerSecond: number;
}

export interface SizesRow {
  small: SizeRow;
  usual: SizeRow;
  large: SizeRow;
  /** The same usual and 4 KB loads on a service started with SEARCH_INDEX=off: what the index of words costs. */
  searchOff: { usual: SizeRow; large: SizeRow };
}

type Start = (env: Record<string, string>) => Promise<{ url: string; child: ChildProcess }>;
type LoadFn = (url: string, body: string, connections: number, headers: Record<string, string>) => Promise<{ rps: number; non2xx: number }>;

const TRACES = Array.from({ length: 20 }, () => randomUUID());
function eventOf(i: number, data: Record<string, unknown>) {
  return { event_type: 'tool.called', source: 'bench-agent', trace_id: TRACES[Math.floor(i / 50) % TRACES.length], data };
}
/** The data of each size: a tool call's arguments and a short answer; a 4 KB one carries a retrieved passage. */
const DATA = {
  small: (i: number) => ({ tool: 'search', k: 5, user: `u-${i}`, ok: true }),
  usual: (i: number) => ({ tool: 'search', query: 'q'.repeat(330), k: 5, user: `u-${i}`, ok: true }),
  large: (i: number) => ({ tool: 'retrieve', query: 'what is the refund policy for orders over 100 euros', user: `u-${i}`, passage: 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(70).slice(0, 3950), ok: true }),
};

export function body(kind: keyof typeof DATA, n: number): { text: string; dataBytes: number } {
  const logs = Array.from({ length: n }, (_, i) => eventOf(i, DATA[kind](i)));
  return { text: JSON.stringify({ logs }), dataBytes: Buffer.byteLength(JSON.stringify(logs[0]?.data)) };
}

export async function ingestionBySize(start: Start, dataDir: (name: string) => string, load: LoadFn, stop: (c: ChildProcess) => Promise<void>): Promise<SizesRow> {
  const on = await bySize(start, dataDir('on'), {}, load, stop, ['small', 'usual', 'large']);
  const off = await bySize(start, dataDir('off'), { SEARCH_INDEX: 'off' }, load, stop, ['usual', 'large']);
  return { small: on.small as SizeRow, usual: on.usual as SizeRow, large: on.large as SizeRow, searchOff: { usual: off.usual as SizeRow, large: off.large as SizeRow } };
}

async function bySize(start: Start, dataDir: string, env: Record<string, string>, load: LoadFn, stop: (c: ChildProcess) => Promise<void>, kinds: Array<keyof typeof DATA>): Promise<Partial<Record<keyof typeof DATA, SizeRow>>> {
  const { url, child } = await start({ LEDGER_DATA_DIR: dataDir, ...env });
  try {
    const post = async (p: string, b: unknown, h: Record<string, string>) => {
      const res = await fetch(`${url}${p}`, { method: 'POST', headers: { 'content-type': 'application/json', ...h }, body: JSON.stringify(b) });
      if (!res.ok) throw new Error(`${p}: ${res.status} ${await res.text()}`);
      return (await res.json()) as Record<string, string>;
    };
    const { access_token } = await post('/api/v1/auth/login', { email: 'bench@example.com', password: 'bench password 123' }, {});
    const { key } = await post('/api/v1/auth/api_keys', { name: 'bench', rate_limit_per_minute: 1_000_000 }, { authorization: `Bearer ${access_token}` });
    const headers = { 'x-api-key': key as string };
    const one = async (kind: keyof typeof DATA, n: number): Promise<SizeRow> => {
      const b = body(kind, n);
      console.log(`  sizes: ${kind} (${b.dataBytes} bytes of data, ${n} to a batch)${env.SEARCH_INDEX === 'off' ? ', SEARCH_INDEX=off' : ''}`);
      const r = await load(`${url}/api/v1/logs/batch`, b.text, 4, headers);
      if (r.non2xx > 0) throw new Error(`sizes ${kind}: ${r.non2xx} answers not 2xx`);
      return { dataBytes: b.dataBytes, batch: n, eventsPerSecond: r.rps * n };
    };
    await load(`${url}/api/v1/logs/batch`, body('usual', 1000).text, 4, headers); // warm-up
    const out: Partial<Record<keyof typeof DATA, SizeRow>> = {};
    for (const k of kinds) out[k] = await one(k, k === 'large' ? 200 : 1000);
    return out;
  } finally {
    await stop(child);
  }
}

const rate = (r: SizeRow) => `${Math.round(r.eventsPerSecond).toLocaleString('en-US')} events/s`;
export const sizesLine = (s: SizesRow) =>
  `${(['small', 'usual', 'large'] as const).map((k) => `${s[k].dataBytes} B of data: ${rate(s[k])} (batches of ${s[k].batch})`).join('; ')}; with SEARCH_INDEX=off: ${rate(s.searchOff.usual)} and ${rate(s.searchOff.large)} (${s.usual.dataBytes} B and ${s.large.dataBytes} B)`;

/**
 * One core's Ed25519 rates over a message like an entry's: signatures/s, verifications/s as the
 * ledger verifies (the core's verifyEd25519: libsodium when installed), and OpenSSL's own.
 */
export function ed25519Rates(): { signs: number; verifies: number; opensslVerifies: number; backend: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const msg = Buffer.from(`audit-ledger/v1/entry-signature\n${'ab'.repeat(32)}`);
  const sig = sign(null, msg, privateKey);
  const rate = (op: () => void) => {
    let n = 0;
    const started = performance.now();
    while (performance.now() - started < 2000) {
      for (let i = 0; i < 500; i++) op();
      n += 500;
    }
    return n / ((performance.now() - started) / 1000);
  };
  const signs = rate(() => sign(null, msg, privateKey));
  const raw = new Uint8Array(publicKey.export({ format: 'der', type: 'spki' }).subarray(-32));
  const verifies = rate(() => {
    if (!verifyEd25519(raw, msg, sig)) throw new Error('ed25519 verify failed');
  });
  const opensslVerifies = rate(() => {
    if (!verify(null, msg, publicKey, sig)) throw new Error('ed25519 verify failed');
  });
  return { signs, verifies, opensslVerifies, backend: ed25519Backend() };
}
