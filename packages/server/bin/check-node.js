// Stops at once, with what to do, on a Node.js older than the service runs on. Imported first by
// the `audit-ledger` launcher (before any compiled code or native module loads: an older Node
// used to crash with a bare "Segmentation fault" in better-sqlite3), and by the workspace's build
// script (`npm start`, `npm run build`, `npm test`) before it does any work. npm itself refuses
// `npm ci` and `npm start` earlier, by the root package.json's devEngines (npm ≥ 10.9). Written for any Node,
// however old: no syntax or API newer than Node 12.
const MIN = [22, 14];
const parts = process.versions.node.split('.').map(Number);
const ok = parts[0] > MIN[0] || (parts[0] === MIN[0] && parts[1] >= MIN[1]);
if (!ok) {
  process.stderr.write(
    'audit-ledger: Node \u2265 ' + MIN.join('.') + ' required (this is Node ' + process.versions.node + '); ' +
      '`source .ci/use-node.sh` gets Node 24 (in a checkout), or install Node 24 LTS from https://nodejs.org\n',
  );
  process.exit(1);
}
