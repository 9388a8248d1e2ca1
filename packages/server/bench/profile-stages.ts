// Attributes the samples of V8 CPU profiles (node --cpu-prof, one file per thread) to the stages
// of a request: the deepest frame of each sample that belongs to a stage names it. Used for the
// single-event breakdown in docs/performance.md:
//   node packages/server/dist/bench/profile-stages.js REQUESTS PROFILE…
import fs from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

/** Stage by frame, tested in this order on each frame from the sampled one outward. */
const STAGES: Array<[string, (fn: string, url: string) => boolean]> = [
  ['startup', (_fn, url) => /modules\/(esm|cjs)|bootstrap\/realm/.test(url)],
  // The SQLite writer thread's code is evaluated from a string: its row signing, then the rest of it (inserts, commit).
  ['signature', (fn, url) => fn === 'signRows' || (url === '[worker eval]' && fn === 'sign')],
  ['commit', (_fn, url) => url === '[worker eval]'],
  ['signature', (fn, url) => fn === 'sign' || url.includes('/crypto/signing') || url.includes('/ledger/signer') || fn === 'signOneShot'],
  ['hash', (fn, url) => url.endsWith('crypto/hash') || (url.includes('/crypto/node') && /sha256/.test(fn))],
  ['tree', (_fn, url) => url.includes('/core/') && url.includes('merkle')],
  ['canonicalize', (fn, url) => /canonical|contentText|contentCommitment/.test(fn) || url.includes('canonicalize') || (url.includes('/core/') && url.includes('json'))],
  ['log line', (_fn, url) => /pino|sonic-boom|thread-stream|quick-format|\/logger\./.test(url)],
  ['metrics', (_fn, url) => url.includes('prom-client') || url.includes('/ops/metrics') || url.includes('/ops/usage')],
  ['auth', (_fn, url) => url.includes('/auth/') || url.includes('/ratelimit/')],
  ['validate', (_fn, url) => url.includes('/http/validation') || url.includes('typebox') || url.includes('ajv') || url.includes('/ingestion/input') || url.includes('/ledger/entry-check')],
  ['parse', (_fn, url) => url.includes('/http/json-body') || url.includes('/http/body') || url.includes('/http/request-text') || url.includes('secure-json-parse')],
  ['commit', (_fn, url) => url.includes('sqlite') || url.includes('better-sqlite3') || url.includes('/pg/') || url.includes('pg-protocol') || url.includes('kysely') || url.includes('/store/')],
  ['hand-off', (_fn, url) => url.includes('/ledger/appender') || url.includes('worker_threads') || url.includes('internal/worker')],
  ['HTTP', (_fn, url) => url.includes('fastify') || url.includes('find-my-way') || url.includes('light-my-request') || url.includes('node:_http') || url.includes('node:net') || url.includes('internal/stream') || url.includes('/routes/') || url.includes('avvio')],
  ['garbage collection', (fn) => fn === '(garbage collector)'],
];

export function stagesOf(profile: Profile): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stageOfNode = new Map<number, string>();
  const stage = (id: number): string => {
    const known = stageOfNode.get(id);
    if (known) return known;
    const n = byId.get(id) as Node;
    const own = STAGES.find(([, test]) => test(n.callFrame.functionName, n.callFrame.url))?.[0];
    const p = parent.get(id);
    const s = own ?? (n.callFrame.functionName === '(idle)' ? 'idle' : p === undefined ? 'other' : stage(p));
    stageOfNode.set(id, s);
    return s;
  };
  const out = new Map<string, number>();
  const others = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const s = stage(id);
    out.set(s, (out.get(s) ?? 0) + (profile.timeDeltas[i] ?? 0));
    if (s === 'other' && process.env.PROFILE_OTHERS) {
      const f = (byId.get(id) as Node).callFrame;
      const k = `${f.functionName} ${f.url.split('/').slice(-3).join('/')}`;
      others.set(k, (others.get(k) ?? 0) + (profile.timeDeltas[i] ?? 0));
    }
  });
  if (process.env.PROFILE_OTHERS) console.log([...others].sort((a, b) => b[1] - a[1]).slice(0, 25));
  return out;
}

function main(): void {
  const [requests, ...files] = process.argv.slice(2);
  const total = new Map<string, number>();
  for (const f of files) for (const [s, t] of stagesOf(JSON.parse(fs.readFileSync(f, 'utf8')) as Profile)) total.set(s, (total.get(s) ?? 0) + t);
  total.delete('idle');
  const n = Number(requests);
  const all = [...total.values()].reduce((a, b) => a + b, 0);
  for (const [s, t] of [...total].sort((a, b) => b[1] - a[1])) console.log(`${s.padEnd(20)} ${(t / n).toFixed(1).padStart(7)} µs  ${((t / all) * 100).toFixed(0).padStart(3)}%`);
  console.log(`${'all threads'.padEnd(20)} ${(all / n).toFixed(1).padStart(7)} µs`);
}

if (import.meta.url === `file://${process.argv[1]}`) main();
