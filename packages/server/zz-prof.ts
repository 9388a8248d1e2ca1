// Attribute self time of samples in a chosen stage to functions (top 30).
import fs from 'node:fs';
import path from 'node:path';
const [dir, want, nStr] = process.argv.slice(2);
const { stagesOf } = await import('./bench/profile-stages.ts');
const agg = new Map<string, number>();
let total = 0;
for (const f of fs.readdirSync(dir as string)) {
  const p = JSON.parse(fs.readFileSync(path.join(dir as string, f), 'utf8'));
  const byId = new Map(p.nodes.map((n: any) => [n.id, n]));
  // per node stage via stagesOf on a single-node-sample profile is expensive; replicate: compute stage for each sampled node by building a mini profile
  const ids = [...new Set(p.samples as number[])];
  const stageOf = new Map<number, string>();
  for (const id of ids) {
    const mini = { ...p, samples: [id], timeDeltas: [1] };
    stageOf.set(id, [...stagesOf(mini).keys()][0] as string);
  }
  p.samples.forEach((id: number, i: number) => {
    if (stageOf.get(id) !== want) return;
    const n: any = byId.get(id);
    const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`;
    agg.set(k, (agg.get(k) ?? 0) + p.timeDeltas[i]);
    total += p.timeDeltas[i];
  });
}
const n = Number(nStr);
console.log(`${want}: ${(total / n).toFixed(1)} µs per request`);
for (const [k, v] of [...agg].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log((v / n).toFixed(2).padStart(8), k);
