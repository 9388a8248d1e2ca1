// The shell blocks of a doc (```sh <name>), and running one as written: bash, one line at a time,
// with the `audit-ledger` command on PATH (the built CLI) and the variables the doc names.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.join(import.meta.dirname, '..', '..', '..', '..');

export interface DocBlock {
  name: string;
  lines: string[];
}

/** Every ```sh block of the doc, in order, with its name (the word after sh). */
export function shellBlocks(doc: string): DocBlock[] {
  const text = fs.readFileSync(path.join(ROOT, doc), 'utf8');
  const blocks: DocBlock[] = [];
  for (const m of text.matchAll(/^```sh(?: +(\S+))?\n([\s\S]*?)^```$/gm)) {
    blocks.push({ name: m[1] ?? '', lines: (m[2] as string).split('\n').filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#')) });
  }
  return blocks;
}

/** A directory with an `audit-ledger` that runs this checkout's built CLI (npx audit-ledger does the same in an install). */
export function cliOnPath(dir: string): string {
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  const shim = path.join(bin, 'audit-ledger');
  fs.writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${path.join(ROOT, 'packages', 'server', 'bin', 'audit-ledger.js')}" "$@"\n`, { mode: 0o755 });
  return bin;
}

/** Runs one line of a doc with bash, in `cwd`, with `env` (and PATH led by `bin`). */
export async function runLine(line: string, opts: { cwd: string; env: Record<string, string>; bin?: string; user?: string }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(DATABASE_URL|REDIS_URL|LEDGER_|TLS_|PORT|HOST)/.test(k))) as Record<string, string>;
  const env = { ...base, ...opts.env, PATH: `${opts.bin ? `${opts.bin}:` : ''}${process.env.PATH}` };
  const [cmd, args] = opts.user ? ['runuser', ['-u', opts.user, '--', 'bash', '-c', line]] : ['bash', ['-c', line]];
  const child = spawn(cmd as string, args as string[], { cwd: opts.cwd, env, stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  child.stdin.end();
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stdout, stderr };
}
