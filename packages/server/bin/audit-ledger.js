#!/usr/bin/env node
// The `audit-ledger` command. This launcher is committed (with its executable bit) so that
// `npm ci` links it into node_modules/.bin on a fresh clone, before the build has made
// dist/src/cli.js: npm does not link a bin whose file does not exist yet. It checks the Node
// version first (check-node.js), then loads the command.
import './check-node.js';

await import('../dist/src/cli.js');
