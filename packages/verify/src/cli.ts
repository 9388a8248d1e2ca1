// `audit-ledger-verify BUNDLE --public-key FILE`: runs the command and exits with its status
// (0 verified, 1 a check failed, 2 unreadable or a usage error, 3 consistent but unpinned).
import { CommanderError } from 'commander';
import { program, VerifyExit } from './program.js';

try {
  await program().parseAsync(process.argv);
  process.exitCode = 0;
} catch (err) {
  if (err instanceof VerifyExit) process.exitCode = err.code;
  else if (err instanceof CommanderError) process.exitCode = err.exitCode === 0 ? 0 : 2;
  else {
    console.error(`audit-ledger-verify: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 2;
  }
}
