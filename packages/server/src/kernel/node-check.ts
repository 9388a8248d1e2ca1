// Stops the CLI at once, with what to do, on a Node.js older than the service runs on. The
// launcher (bin/audit-ledger.js) checks first with bin/check-node.js, but a systemd unit or a
// container often starts the compiled module itself (`node dist/src/cli.js serve`), and on Node 20
// better-sqlite3 then crashed with a bare "Segmentation fault" after leaving a ledger.db behind. So
// the CLI module imports this first: ES modules evaluate their imports in order, and nothing
// imported before it opens a store. The same rule and message as bin/check-node.js (which must run
// uncompiled, before a build exists).
const MIN = [22, 14] as const;
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (!(major > MIN[0] || (major === MIN[0] && minor >= MIN[1]))) {
  process.stderr.write(`audit-ledger: Node \u2265 ${MIN.join('.')} required (this is Node ${process.versions.node}); \`source .ci/use-node.sh\` gets Node 24 (in a checkout), or install Node 24 LTS from https://nodejs.org\n`);
  process.exit(1);
}
export {};
