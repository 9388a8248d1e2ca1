// The core bundles for a browser: esbuild with platform 'browser' resolves '#crypto' to the
// pure-JS implementation and must find no Node built-in anywhere in the graph. The bundle is then
// run (outside Node's module system, as a browser would load it) on the published vectors.
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const PKG = path.join(import.meta.dirname, '..');

describe('the browser bundle of @audit-ledger/core', () => {
  it('builds with no Node built-in and verifies the RFC 8032 and RFC 6962 vectors', async () => {
    const result = await build({
      entryPoints: [path.join(PKG, 'src', 'index.ts')],
      bundle: true,
      platform: 'browser',
      // Bundle the TypeScript source (a published package resolves the same map to dist/).
      conditions: ['@audit-ledger/source'],
      format: 'esm',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.filter((f) => f.startsWith('node:') || /crypto[\\/]node\.ts$/.test(f))).toEqual([]);
    expect(inputs.some((f) => /crypto[\\/]browser\.ts$/.test(f))).toBe(true);
    const code = result.outputFiles[0]?.text as string;
    expect(code).not.toMatch(/from\s*["']node:|require\(["']node:/);

    // Load it as a browser would: a data: URL module, with no access to the package's imports.
    const core = (await import(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`)) as typeof import('../src/index.js');
    expect(core.CRYPTO_IMPLEMENTATION).toMatch(/noble/);
    const ed = JSON.parse(fs.readFileSync(path.join(PKG, 'testdata', 'rfc8032-ed25519.json'), 'utf8')) as { good: Array<{ public_key: string; message: string; signature: string }> };
    for (const v of ed.good) expect(core.verifyEd25519(core.fromHex(v.public_key), core.fromHex(v.message), core.fromHex(v.signature))).toBe(true);
    const tree = JSON.parse(fs.readFileSync(path.join(PKG, 'testdata', 'rfc6962.json'), 'utf8')) as { leaf_inputs: string[]; roots: string[] };
    const leaves = tree.leaf_inputs.map((x) => core.leafHash(core.fromHex(x)));
    expect(core.toHex(core.referenceRoot(leaves))).toBe(tree.roots[8]);
    console.log(`browser bundle: ${(code.length / 1024).toFixed(0)} KiB unminified, ${inputs.length} modules`);
  });
});
