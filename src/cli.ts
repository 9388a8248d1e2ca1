#!/usr/bin/env node
// The `audit-ledger` command: serve, migrate, users create, keys rotate, verify-bundle.
import { parseArgs } from 'node:util';
import { AccountInputError, createUser } from './accounts.js';
import { ConfigError, loadConfig } from './config.js';
import { rotateSigningKey, signingKeyPath } from './ledger/keyring.js';
import { handleSignals, startService } from './server.js';
import { openStore } from './store/open.js';
import { EmailTakenError } from './store/store.js';
import { VERSION } from './version.js';
import { VERIFY_USAGE, verifyCommand } from './integrity/verify-command.js';

const USAGE = `audit-ledger ${VERSION}

Usage:
  audit-ledger serve                     start the HTTP service (configured by environment variables)
  audit-ledger migrate                   apply pending database migrations and exit
  audit-ledger users create --company NAME --email EMAIL --password-stdin [--role admin|member]
                                         create a user (and the company if it is new); the
                                         password is read from standard input
  audit-ledger keys rotate               make a new signing key the active one (restart the service
                                         to sign with it); entries signed earlier keep verifying
  audit-ledger verify-bundle FILE [--public-key KEYFILE] [--checkpoint CHECKPOINT]
                                         verify an evidence bundle, or an export against a
                                         checkpoint, offline (no configuration or database)
  audit-ledger --version | --help
`;

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  // Strip one trailing newline (echo adds it); keep any other whitespace.
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === 'help') {
    process.stdout.write(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command === '--version') {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  if (command === 'verify-bundle') {
    const { values, positionals } = parseArgs({
      args: rest,
      options: { 'public-key': { type: 'string' }, checkpoint: { type: 'string' }, help: { type: 'boolean' } },
      allowPositionals: true,
      strict: true,
    });
    if (values.help) {
      process.stdout.write(VERIFY_USAGE);
      return 0;
    }
    if (positionals.length !== 1) {
      console.error(VERIFY_USAGE);
      return 2;
    }
    try {
      const { code, output } = await verifyCommand(positionals[0] as string, { publicKey: values['public-key'], checkpoint: values.checkpoint });
      process.stdout.write(output);
      return code;
    } catch (err) {
      console.error(`verify-bundle: ${err instanceof Error ? err.message : String(err)}`);
      return 2;
    }
  }

  const config = loadConfig();

  if (command === 'serve') {
    const service = await startService(config);
    handleSignals(service);
    service.app.log.info({ url: service.url, store: config.databaseUrl ? 'postgres' : 'sqlite', version: VERSION }, 'audit-ledger listening');
    return -1; // keep running
  }

  if (command === 'migrate') {
    const store = openStore(config);
    try {
      const applied = await store.migrate();
      const state = await store.migrationState();
      console.log(applied.length ? `applied: ${applied.join(', ')}` : 'nothing to apply', `(schema at ${state.current})`);
    } finally {
      await store.close();
    }
    return 0;
  }

  if (command === 'users' && rest[0] === 'create') {
    const { values } = parseArgs({
      args: rest.slice(1),
      options: {
        company: { type: 'string' },
        email: { type: 'string' },
        'password-stdin': { type: 'boolean' },
        role: { type: 'string', default: 'admin' },
      },
      strict: true,
    });
    if (!values.company || !values.email || !values['password-stdin']) {
      console.error('users create needs --company, --email and --password-stdin\n\n' + USAGE);
      return 2;
    }
    if (values.role !== 'admin' && values.role !== 'member') {
      console.error('--role must be admin or member');
      return 2;
    }
    const password = await readStdin();
    const store = openStore(config);
    try {
      await store.migrate();
      const { company, user } = await createUser(store, { company: values.company, email: values.email, password, role: values.role });
      console.log(`created user ${user.email} (${user.role}) in company "${company.name}" (${company.company_id})`);
      return 0;
    } catch (err) {
      if (err instanceof AccountInputError || err instanceof EmailTakenError) {
        console.error(err.message);
        return 1;
      }
      throw err;
    } finally {
      await store.close();
    }
  }

  if (command === 'keys' && rest[0] === 'rotate') {
    const store = openStore(config);
    try {
      await store.migrate();
      const { old, current } = await rotateSigningKey(config, store, Date.now());
      console.log(`active signing key is now ${current}${old ? ` (was ${old}; its file is kept as ${signingKeyPath(config)}.retired-${old})` : ''}`);
      console.log('restart every service process so it signs with the new key');
      return 0;
    } finally {
      await store.close();
    }
  }

  console.error(`unknown command: ${argv.join(' ')}\n\n${USAGE}`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exitCode = 2;
    } else {
      console.error(err instanceof Error ? err.message : err);
      process.exitCode = 1;
    }
  },
);
