// The audit-ledger-verify command line, parsed by commander. The server's CLI mounts the same
// command as `audit-ledger verify-bundle`.
import fs from 'node:fs';
import { Command } from 'commander';
import { VERIFY_EXIT_CODES, verifyCommand } from './verify-command.js';

/** This package's version (its package.json is next to dist/ in the checkout and in the tarball). */
export const VERSION = (JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Thrown by the action to end with an exit status (the caller exits with `code`). */
export class VerifyExit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/** Adds the verify command's argument, options, help and action to `cmd`. */
export function defineVerify(cmd: Command, name: string): Command {
  return cmd
    .description('verify an evidence bundle, a signed period report, an export against a checkpoint, or a log stream\'s copy, offline (no configuration, service or database)')
    .argument(
      '<file>',
      'an evidence bundle (GET /api/v1/exports/evidence), a signed period report (GET /api/v1/compliance/reports/{id}), with --checkpoint a JSON Lines export complete from seq 0, or with --stream what a log stream delivered (a file such as rsyslog wrote, or a directory of segments)',
    )
    .option('--public-key <keyfile>', 'the public key(s) you trust: SPKI PEM, a C2SP verifier key, or the JSON of GET /api/v1/integrity/keys')
    .option('--stream', 'the file (or every file of the directory) is a log stream\'s copy: syslog, CEF, OCSF or JSON lines, batches in any order and repeated')
    .option('--checkpoint <checkpoint>', 'a checkpoint (the JSON of GET /api/v1/integrity/checkpoint, or its signed note)')
    .option('--witness <vkey>', 'a witness you trust: its cosignature/v1 verifier key (name+keyid+key), or a file holding it; repeat for several', (v: string, all: string[] = []) => [...all, v])
    .option('--tsa-ca <pem>', 'the RFC 3161 Time Stamping Authority you trust: its CA certificate(s), PEM; the bundle\'s timestamp must be signed by a timestamping certificate that chains to it')
    .option('--agent-keys <file>', "the agent key register you trust (the JSON of GET /api/v1/agent-keys): agent signatures are checked against it, in place of the register a bundle carries; an export's are checked only with it")
    .option('--witness-quorum <n>', 'how many of the --witness keys must have cosigned the checkpoint (default: all of them)')
    .addHelpText(
      'after',
      `\nExit status: ${VERIFY_EXIT_CODES.verified} verified; ${VERIFY_EXIT_CODES.failed} a check failed; ${VERIFY_EXIT_CODES.unreadable} the files cannot be read; ` +
        `${VERIFY_EXIT_CODES.unpinned} consistent but UNVERIFIED: no --public-key, so the signer is not pinned.\n`,
    )
    .action(async (file: string, opts: { publicKey?: string; checkpoint?: string; stream?: boolean; witness?: string[]; witnessQuorum?: string; tsaCa?: string; agentKeys?: string }) => {
      let result: { code: number; output: string };
      try {
        result = await verifyCommand(file, opts);
      } catch (err) {
        console.error(`${name}: ${err instanceof Error ? err.message : String(err)}`);
        throw new VerifyExit(VERIFY_EXIT_CODES.unreadable);
      }
      process.stdout.write(result.output);
      throw new VerifyExit(result.code);
    });
}

/** The standalone command. */
export function program(): Command {
  return defineVerify(new Command('audit-ledger-verify').version(VERSION, '-V, --version'), 'audit-ledger-verify').exitOverride().showHelpAfterError();
}
