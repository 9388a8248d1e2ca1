// Stops at once, with what to do, on a Node.js older than the service runs on. Imported first by
// the `audit-ledger` launcher (before any compiled code or native module loads: an older Node
// used to crash with a bare "Segmentation fault" in better-sqlite3), and run by the workspace's
// `npm start`, `npm run build` and `npm test` before they do any work. Written for any Node,
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
