// The bench's figures as data: saved as docs/performance.json beside docs/performance.md, and
// compared with a previous run's file (`npm run bench -- --compare FILE`). Wherever a ceiling is
// measured in the same run the figure is kept as a ratio to it too, since this machine's
// absolute speed varies from run to run: the ratio is what to compare.
import fs from 'node:fs';

export interface Figure {
  value: number;
  unit: string;
  /** Which way is better. */
  better: 'higher' | 'lower';
}

export interface FiguresFile {
  run_at: string;
  machine: string;
  figures: Record<string, Figure>;
}

export function saveFigures(file: string, data: FiguresFile): void {
  fs.writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
}

/** Each figure beside the previous run's, with the change in percent and whether it got better or worse. */
export function compareFigures(previous: FiguresFile, now: FiguresFile): string {
  const names = [...new Set([...Object.keys(now.figures), ...Object.keys(previous.figures)])];
  const width = Math.max(...names.map((n) => n.length));
  const lines = [`compared with ${previous.run_at} (${previous.machine})`, `${'figure'.padEnd(width)}  ${'before'.padStart(12)}  ${'now'.padStart(12)}  change`];
  for (const name of names) {
    const a = previous.figures[name];
    const b = now.figures[name];
    const show = (f: Figure | undefined) => (f ? `${+f.value.toPrecision(4)} ${f.unit}` : '—');
    let change = '';
    if (a && b && a.value !== 0) {
      const pct = ((b.value - a.value) / Math.abs(a.value)) * 100;
      const better = b.better === 'higher' ? pct > 0 : pct < 0;
      change = `${pct >= 0 ? '+' : ''}${pct.toFixed(1)}%${Math.abs(pct) >= 5 ? (better ? ' better' : ' WORSE') : ''}`;
    }
    lines.push(`${name.padEnd(width)}  ${show(a).padStart(12)}  ${show(b).padStart(12)}  ${change}`);
  }
  return lines.join('\n');
}

export function readFigures(file: string): FiguresFile {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as FiguresFile;
}
