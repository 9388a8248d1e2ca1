// A SoftHSM2 token of the test's own (Debian's softhsm2; .ci/run installs it): its own token
// directory and configuration, so nothing on the machine is touched, removed when the test ends.
// Keys are made with OpenSC's pkcs11-tool, as an operator makes them in a token.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const SOFTHSM_MODULE = '/usr/lib/softhsm/libsofthsm2.so';

export interface TestToken {
  module: string;
  label: string;
  pin: string;
  pinFile: string;
  /** The LEDGER_PKCS11_* settings for this token (add LEDGER_PKCS11_KEY_LABEL to start with a key). */
  env: Record<string, string>;
  /** Makes an Ed25519 key pair in the token with pkcs11-tool (never extractable); returns its raw public key. */
  keygen(label: string): Uint8Array;
  /** pkcs11-tool's listing of the token's objects (attributes such as "never extractable"). */
  listing(): string;
  dispose(): void;
}

/**
 * SoftHSM2 reads SOFTHSM2_CONF when a process initializes it, so the test process points it at
 * this token's configuration (set before any token is opened); child processes get it in env.
 */
export function createTestToken(label = 'audit-ledger-test'): TestToken {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'softhsm-'));
  fs.mkdirSync(path.join(dir, 'tokens'));
  const conf = path.join(dir, 'softhsm2.conf');
  fs.writeFileSync(conf, `directories.tokendir = ${path.join(dir, 'tokens')}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  process.env.SOFTHSM2_CONF = conf;
  const pin = '246810';
  const pinFile = path.join(dir, 'pin');
  fs.writeFileSync(pinFile, `${pin}\n`, { mode: 0o600 });
  const env = { SOFTHSM2_CONF: conf };
  execFileSync('softhsm2-util', ['--init-token', '--free', '--label', label, '--pin', pin, '--so-pin', '13579111'], { env: { ...process.env, ...env }, stdio: 'pipe' });
  const tool = (args: string[]) => execFileSync('pkcs11-tool', ['--module', SOFTHSM_MODULE, '--token-label', label, '--login', '--pin', pin, ...args], { env: { ...process.env, ...env }, encoding: 'utf8', stdio: 'pipe' });
  return {
    module: SOFTHSM_MODULE,
    label,
    pin,
    pinFile,
    env: { ...env, LEDGER_PKCS11_MODULE: SOFTHSM_MODULE, LEDGER_PKCS11_TOKEN_LABEL: label, LEDGER_PKCS11_PIN_FILE: pinFile },
    keygen(keyLabel) {
      const out = tool(['--keypairgen', '--key-type', 'EC:edwards25519', '--label', keyLabel]);
      const point = /EC_POINT:\s+([0-9a-f]+)/.exec(out)?.[1];
      if (!point?.startsWith('0420') || point.length !== 68) throw new Error(`pkcs11-tool gave no Ed25519 public key:\n${out}`);
      return new Uint8Array(Buffer.from(point.slice(4), 'hex'));
    },
    listing: () => tool(['--list-objects']),
    dispose: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
