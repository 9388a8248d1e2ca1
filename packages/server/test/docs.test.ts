// The documents state what the code does: figures they give that the build can check are checked
// here (the README's and docs/integrations.md's shell examples run in readme.test.ts, docs/compliance.md's in witness.test.ts, the release READMEs' in release.test.ts, the SDK's TypeScript in doc-examples.test.ts,
// the format doc's examples in ledger-format.test.ts).
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { PROBLEM_TITLES } from '../src/http/problems.js';

const REPO = path.join(import.meta.dirname, '..', '..', '..');
const read = (f: string) => fs.readFileSync(path.join(REPO, f), 'utf8');

describe('the docs', () => {
  it('give one size for the console bundle, everywhere, within 2 % of the built one (gzipped index chunk, and the graph chunk)', () => {
    const assets = path.join(REPO, 'packages', 'console', 'dist', 'assets');
    const gz = (prefix: string) => {
      const f = fs.readdirSync(assets).find((x) => x.startsWith(prefix) && x.endsWith('.js'));
      if (!f) throw new Error(`no ${prefix}*.js in ${assets}: build the console first (npm run build)`);
      return zlib.gzipSync(fs.readFileSync(path.join(assets, f))).length / 1024; // KB as the bench counts them (bench/console.ts)
    };
    const [index, graph] = [gz('index-'), gz('graph-')];
    const stated = [
      ...[...read('docs/console.md').matchAll(/initial JavaScript is \*\*([\d.]+) KB gzipped\*\*[^+]*plus ([\d.]+) KB/g)].map((m) => [m[1], m[2]]),
      ...[...read('docs/performance.md').matchAll(/(?:initial JS|\| Initial JavaScript, gzipped[^|]*\|) ([\d.]+) KB(?: gzipped)? \(\+([\d.]+) KB on the replay page/g)].map((m) => [m[1], m[2]]),
    ].map(([a, b]) => [Number(a), Number(b)]);
    expect(stated).toHaveLength(3);
    for (const [i, g] of stated) {
      expect(Math.abs((i as number) - index) / index, `stated ${i} KB, built ${index.toFixed(1)} KB`).toBeLessThan(0.02);
      expect(Math.abs((g as number) - graph), `graph chunk stated ${g} KB, built ${graph.toFixed(1)} KB`).toBeLessThan(0.2);
    }
  });

  it("the README's error table lists exactly the problem codes the service has", () => {
    const readme = read('README.md');
    const table = [...readme.matchAll(/^\| (\d{3}) \| `([a-z_]+)` \|/gm)].map((m) => m[2]);
    expect([...table].sort()).toEqual(Object.keys(PROBLEM_TITLES).sort());
  });

  it('docs/integrations.md describes OTLP as it is, naming no open issue', () => {
    const text = read('docs/integrations.md');
    expect(text).not.toMatch(/planned|\(issue \d+\)/);
  });
  it("show every console page with a screenshot that exists (npm run docs:screenshots copies the tests' own)", () => {
    const doc = read('docs/console.md');
    const images = [...doc.matchAll(/!\[[^\]]*\]\((img\/console\/[\w.-]+\.png)\)/g)].map((m) => m[1] as string);
    expect(images.length).toBeGreaterThanOrEqual(15);
    for (const img of images) expect(fs.existsSync(path.join(REPO, 'docs', img)), img).toBe(true);
  });
});
