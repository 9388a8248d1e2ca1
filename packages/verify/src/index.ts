// @audit-ledger/verify: the auditor's offline check, as a library and as the audit-ledger-verify
// command. It depends only on @audit-ledger/core (no database, no native module).
export { defineVerify, program, VerifyExit } from './program.js';
export { reportLines, VERIFY_EXIT_CODES, verifyCommand } from './verify-command.js';
export { pemCertificates, tsaSignatureProblem } from './tsa.js';
