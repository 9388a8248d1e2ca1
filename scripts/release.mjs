// `npm run release`: the installable artefacts of a release, in release/ (or --out DIR):
// - the `npm pack` tarballs of @audit-ledger/core, @audit-ledger/verify, @audit-ledger/sdk and
//   audit-ledger (the service, with the built console inside it, under console/);
// - SHA256SUMS, in the format `sha256sum -c` checks;
// - sbom.cdx.json, a CycloneDX SBOM of the packages and their production dependencies (`npm sbom`);
// - INSTALL.txt: how to install them, with nothing but these files and the public registry.
// It builds first (scripts/build.mjs). Every tarball ships LICENSE, its README, its sources (so
// the source maps and the export conditions resolve) and its dist/.
import '../packages/server/bin/check-node.js';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const at = process.argv.indexOf('--out');
const out = path.resolve(at > 0 ? process.argv[at + 1] : path.join(root, 'release'));
const PACKAGES = ['core', 'verify', 'sdk', 'server'];

execFileSync(process.execPath, [path.join(root, 'scripts', 'build.mjs')], { cwd: root, stdio: 'inherit' });

fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(out, { recursive: true });
const pack = (dir) => JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', out], { cwd: dir, encoding: 'utf8' }))[0].filename;

// The service is packed from a staging copy of what its package ships, with the built console
// added under console/ (the checkout itself is left as it is: a running service or test there keeps
// using packages/console/dist). The console's source maps stay out (they carry no sources:
// docs/console.md), and so does the comment that would point at them.
const serverDir = path.join(root, 'packages', 'server');
const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'audit-ledger-release-'));
const manifest = JSON.parse(fs.readFileSync(path.join(serverDir, 'package.json'), 'utf8'));
for (const f of [...manifest.files.filter((x) => x !== 'console'), 'package.json']) fs.cpSync(path.join(serverDir, f), path.join(stage, f), { recursive: true });
fs.cpSync(path.join(root, 'packages', 'console', 'dist'), path.join(stage, 'console'), { recursive: true, filter: (f) => !f.endsWith('.map') });
for (const f of fs.readdirSync(path.join(stage, 'console', 'assets')).filter((x) => x.endsWith('.js'))) {
  const file = path.join(stage, 'console', 'assets', f);
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/\n?\/\/# sourceMappingURL=\S+\s*$/, '\n'));
}
const tarballs = [...PACKAGES.filter((p) => p !== 'server').map((p) => pack(path.join(root, 'packages', p))), pack(stage)];
fs.rmSync(stage, { recursive: true, force: true });

const sums = tarballs.map((f) => `${createHash('sha256').update(fs.readFileSync(path.join(out, f))).digest('hex')}  ${f}`);
fs.writeFileSync(path.join(out, 'SHA256SUMS'), `${sums.join('\n')}\n`);
const sbom = execFileSync('npm', ['sbom', '--sbom-format', 'cyclonedx', '--omit', 'dev', ...PACKAGES.map((p) => `--workspace=packages/${p}`)], { cwd: root, encoding: 'utf8', maxBuffer: 1 << 26 });
fs.writeFileSync(path.join(out, 'sbom.cdx.json'), sbom);

const [core, verify, sdk, server] = tarballs;
fs.writeFileSync(
  path.join(out, 'INSTALL.txt'),
  `audit-ledger release artefacts. Check them first, in this directory:

  sha256sum -c SHA256SUMS

The auditor's offline verifier (no service, database or native module):

  npm install ${core} ${verify}
  npx audit-ledger-verify evidence.json --public-key service-key.pem

The TypeScript SDK, in an agent's project:

  npm install ${core} ${sdk}

The service (SQLite in ./data by default; the console at /console):

  npm install ${core} ${verify} ${server}
  npx audit-ledger serve

Give npm the paths of these files (here or elsewhere): the @audit-ledger packages are not on the
public registry, so a bare "npx @audit-ledger/verify" would ask it for a name this project does not
publish. Their dependencies come from the registry as usual. sbom.cdx.json lists them (CycloneDX).
`,
);
console.log(`release: ${out}\n${sums.join('\n')}`);
