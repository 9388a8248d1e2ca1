#!/usr/bin/env node
// The `audit-ledger-verify` command. Committed (with its executable bit) so that npm links it
// before the build has made dist/cli.js.
import '../dist/cli.js';
