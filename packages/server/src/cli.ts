#!/usr/bin/env node
// The `audit-ledger` command: serve, migrate, backup, restore, continuity, users create, keys rotate, tree prune, witness serve, monitor, verify-bundle.
// Parsed by commander: every command and subcommand answers --help/-h with its usage and does
// nothing else; an unknown command or option prints the usage and exits 2. Each command imports
// what it runs when it runs, so --help and a usage error load no server, store or HTTP code.
// First: refuse an older Node before anything else loads (kernel/node-check.ts).
import './kernel/node-check.js';
import { Command, CommanderError, Option } from 'commander';
import { ConfigError, configTable, envExample, loadConfig } from './kernel/config.js';
import { flushLogs } from './logger.js';
import { VERSION } from './kernel/version.js';
import { defineVerify, VerifyExit } from '@audit-ledger/verify';
import { collectValues, Exit } from './commands/exit.js';
import { defineOperations } from './commands/operations.js';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  // Strip one trailing newline (echo adds it); keep any other whitespace.
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

function program(): Command {
  const cli = new Command('audit-ledger')
    .description('Self-hosted, tamper-evident audit log ledger for AI agents. Configured by environment variables (see the README).')
    .version(VERSION, '-V, --version')
    .helpOption('-h, --help', 'show this help and do nothing else')
    .showHelpAfterError()
    .exitOverride();

  cli
    .command('serve')
    .description('start the HTTP service (configured by environment variables)')
    .action(async () => {
      const config = loadConfig();
      const { handleSignals, startService } = await import('./server.js');
      const service = await startService(config);
      handleSignals(service);
      service.app.log.info({ url: service.url, store: config.databaseUrl ? 'postgres' : 'sqlite', version: VERSION }, 'audit-ledger listening');
      throw new Exit(-1); // keep running
    });

  cli
    .command('openapi')
    .description('print the OpenAPI document (JSON) and exit; touches no database (the service is built on an empty in-memory one)')
    .action(async () => {
      const { openApiDocument } = await import('./openapi-document.js');
      process.stdout.write(`${JSON.stringify(await openApiDocument(), null, 2)}\n`);
    });

  cli
    .command('env-example')
    .description('print .env.example: every configuration variable with its default, commented out')
    .action(() => {
      process.stdout.write(envExample());
    });

  cli
    .command('config-table')
    .description("print the README's configuration table (Markdown): every variable with its default, range and meaning")
    .action(() => {
      process.stdout.write(configTable());
    });

  cli
    .command('migrate')
    .description('apply pending database migrations and exit; a database migrated by a newer version is refused (no downgrade)')
    .option('--dry-run', 'say what would change (the migrations that would apply, each with what it does) and change nothing')
    .action(async (opts: { dryRun?: boolean }) => {
      const [{ openStore }, { MIGRATION_SUMMARIES, SchemaNewerError }, { CitusMissingError }] = await Promise.all([import('./store/open.js'), import('./store/migrate.js'), import('./store/store.js')]);
      const store = openStore(loadConfig());
      try {
        if (opts.dryRun) {
          const plan = await store.migrationPlan();
          if (plan.unknown.length > 0) throw new SchemaNewerError(plan.unknown);
          console.log(`schema at ${plan.current ?? 'nothing (an empty database)'}; this version knows up to ${plan.latest}`);
          if (plan.pending.length === 0) console.log('nothing to apply');
          for (const m of plan.pending) console.log(`would apply ${m}: ${MIGRATION_SUMMARIES[m] ?? ''}`);
          console.log('dry run: nothing was changed');
          return;
        }
        const started = Date.now();
        const applied = await store.migrate();
        const state = await store.migrationState();
        console.log(applied.length ? `applied: ${applied.join(', ')}` : 'nothing to apply', `(schema at ${state.current})`);
        const d = store.lastDistribution;
        if (d.distributed.length + d.reference.length > 0) {
          console.log(`citus: distributed ${d.distributed.length} tables by company_id and made ${d.reference.length} reference tables (existing rows copied to the workers) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
        } else if (await store.onCitus()) console.log('citus: the schema is distributed');
      } catch (err) {
        if (err instanceof SchemaNewerError || err instanceof CitusMissingError) {
          console.error(`audit-ledger migrate: ${err.message}`);
          throw new Exit(1);
        }
        throw err;
      } finally {
        await store.close();
      }
    });

  defineOperations(cli);

  const users = cli.command('users').description('manage users').helpOption('-h, --help', 'show this help and do nothing else');
  users
    .command('create')
    .description('create a user (and the company if it is new); the password is read from standard input')
    .requiredOption('--company <name>', 'company name')
    .requiredOption('--email <email>', 'login email')
    .requiredOption('--password-stdin', 'read the password from standard input (required: never on the command line)')
    .addOption(new Option('--role <role>', 'role of the user (member: the old name of reviewer)').choices(['admin', 'reviewer', 'auditor', 'member']).default('admin'))
    .action(async (opts: { company: string; email: string; role: 'admin' | 'reviewer' | 'auditor' | 'member' }) => {
      const config = loadConfig();
      const password = await readStdin();
      const [{ AccountInputError, createUser }, { openStore }, { CompanyNameAmbiguousError, EmailTakenError }] = await Promise.all([import('./users/accounts.js'), import('./store/open.js'), import('./store/accounts.js')]);
      const store = openStore(config);
      try {
        await store.migrate();
        const { company, user } = await createUser(store, { company: opts.company, email: opts.email, password, role: opts.role === 'member' ? 'reviewer' : opts.role });
        console.log(`created user ${user.email} (${user.role}) in company "${company.name}" (${company.company_id})`);
        console.log("the administrators' trail records it as user.created (via cli) within seconds while the service runs, else at its next start");
      } catch (err) {
        if (err instanceof AccountInputError || err instanceof EmailTakenError || err instanceof CompanyNameAmbiguousError) {
          console.error(err.message);
          throw new Exit(1);
        }
        throw err;
      } finally {
        await store.close();
      }
    });

  const keys = cli.command('keys').description('manage the signing key').helpOption('-h, --help', 'show this help and do nothing else');
  keys
    .command('rotate')
    .description(
      'make a new signing key the active one, online: asks the running service (POST /api/v1/integrity/keys/rotate) ' +
        'with the operator token, so every process switches and no entry is signed by a retired key. ' +
        'The old key endorses the new one in a signed key-transition statement.',
    )
    .option('--url <url>', 'base URL of the running service', `http://127.0.0.1:${process.env.PORT ?? 8080}`)
    .option('--pkcs11-key-label <label>', "rotate to this key in the service's PKCS#11 token (made there, never extractable, when the token has none of that label) instead of a new key sealed in the store")
    .action(async (opts: { url: string; pkcs11KeyLabel?: string }) => {
      const { rotateKeyCommand } = await import('./commands/rotate-key.js');
      const { code, output } = await rotateKeyCommand({ url: opts.url, token: process.env.LEDGER_OPERATOR_TOKEN, pkcs11KeyLabel: opts.pkcs11KeyLabel });
      (code === 0 ? process.stdout : process.stderr).write(output);
      throw new Exit(code);
    });

  const tree = cli.command('tree').description('maintain the stored Merkle tree').helpOption('-h, --help', 'show this help and do nothing else');
  tree
    .command('prune')
    .description(
      'remove the tree hash rows of levels no longer stored (written before the tree kept only levels 4, 8, 12, …); ' +
        'no proof, root or verification changes. Safe while the service runs.',
    )
    .action(async () => {
      const [{ openStore }, { pruneTree }] = await Promise.all([import('./store/open.js'), import('./commands/prune-tree.js')]);
      const store = openStore(loadConfig());
      try {
        await pruneTree(store.ledger, (line) => console.log(line));
      } finally {
        await store.close();
      }
    });

  const witness = cli.command('witness').description('an independent witness of checkpoints (C2SP tlog-witness)').helpOption('-h, --help', 'show this help and do nothing else');
  witness
    .command('serve')
    .description(
      'run a standalone witness: it cosigns a checkpoint of a log it follows only when a consistency proof shows it extends the last one it cosigned, ' +
        'and refuses a rewritten history (409/422). Give the service its verifier key (logged at start and served at GET /) in WITNESSES. ' +
        'Run it on another machine, by someone other than the service operator.',
    )
    .helpOption('-h, --help', 'show this help and do nothing else')
    .requiredOption('--name <name>', 'the witness name, a schema-less URL such as witness.example.com/w1')
    .requiredOption('--logs <file>', 'JSON {"logs": [{"origin_prefix": "<LEDGER_ORIGIN>/", "verifier_keys": ["<note_verifier_key from GET /api/v1/integrity/keys>"]}]}')
    .option('--key-file <file>', 'Ed25519 private key (PKCS#8 PEM), created when missing', './witness-key.pem')
    .option('--state <file>', 'the SQLite file of the witness state (latest cosigned checkpoint per log)', './witness.db')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'TCP port (0: a free one)', '8090')
    .action(async (opts: { name: string; logs: string; keyFile: string; state: string; host: string; port: string }) => {
      const { serveWitness } = await import('./programs/witness/serve.js');
      const log = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify({ time: Date.now(), ...line })}\n`);
      const running = await serveWitness({ name: opts.name, keyFile: opts.keyFile, logsFile: opts.logs, stateFile: opts.state, host: opts.host, port: Number(opts.port) }, log);
      await new Promise<void>((resolve) => {
        process.once('SIGTERM', resolve);
        process.once('SIGINT', resolve);
      });
      await running.close();
    });

  const collect = collectValues;
  cli
    .command('monitor')
    .description(
      'follow company logs through their C2SP tlog-tiles API (docs/transparency.md) and alarm on a fork, a rollback, a bad signature, ' +
        'a checkpoint signed by a retired key, a missing witness quorum, or a log that stopped growing. Once (for cron: exit 1 on any alarm), ' +
        'or with --interval as a daemon with Prometheus metrics. State is kept in --state; run it on another machine than the service.',
    )
    .helpOption('-h, --help', 'show this help and do nothing else')
    .option('--log <url>', '(required) a tlog prefix: https://ledger.example/api/v1/public/tlog/<company_id>, or …/api/v1/tlog with --header (repeat for more logs)', collect, [])
    .requiredOption('--public-key <file>', "the log's public key: a PEM, a base64 raw key, or the JSON of GET /api/v1/integrity/keys (as audit-ledger-verify takes)")
    .option('--keys-url <url>', "the service's GET /api/v1/integrity/keys: its signed key transitions are followed from --public-key, and a checkpoint signed outside its key's period alarms")
    .option('--header <name: value>', 'a header for every request, e.g. "x-api-key: alk_…" (repeat)', collect, [])
    .option('--witness <vkey>', 'a witness verifier key whose cosignature counts (repeat)', collect, [])
    .option('--quorum <n>', 'cosignatures required on each checkpoint (default: every --witness)')
    .option('--state <file>', 'where the accepted checkpoints are kept', './monitor-state.json')
    .option('--stall-seconds <s>', 'alarm when a log has not grown for this long (0: never)', '0')
    .option('--check-entries', 'also check every new entry bundle against its leaves')
    .option('--webhook <url>', 'POST each alarm here, signed as Standard Webhooks (needs --webhook-secret)')
    .option('--webhook-secret <whsec>', 'the Standard Webhooks secret (whsec_…); or AUDIT_LEDGER_MONITOR_WEBHOOK_SECRET')
    .option('--interval <s>', 'run as a daemon, every this many seconds')
    .option('--metrics-port <port>', 'with --interval: serve Prometheus metrics at /metrics on this port (127.0.0.1)')
    .action(async (opts: { log: string[]; publicKey: string; keysUrl?: string; header: string[]; witness: string[]; quorum?: string; state: string; stallSeconds: string; checkEntries?: boolean; webhook?: string; webhookSecret?: string; interval?: string; metricsPort?: string }) => {
      const fs = await import('node:fs');
      const [{ parseTrustedKeys }, { runMonitor }] = await Promise.all([import('@audit-ledger/core'), import('./programs/monitor/run.js')]);
      const usage = (msg: string) => {
        console.error(`audit-ledger monitor: ${msg}`);
        return new Exit(2);
      };
      if (opts.log.length === 0) throw usage('give at least one --log <url>');
      const headers: Record<string, string> = {};
      for (const h of opts.header) {
        const at = h.indexOf(':');
        if (at <= 0) throw usage(`--header ${JSON.stringify(h)} is not "name: value"`);
        headers[h.slice(0, at).trim().toLowerCase()] = h.slice(at + 1).trim();
      }
      let keys;
      try {
        keys = parseTrustedKeys(fs.readFileSync(opts.publicKey, 'utf8'));
      } catch (err) {
        throw usage(`--public-key ${opts.publicKey}: ${(err as Error).message}`);
      }
      const secret = opts.webhookSecret ?? process.env.AUDIT_LEDGER_MONITOR_WEBHOOK_SECRET;
      if (opts.webhook && !secret) throw usage('--webhook needs --webhook-secret (or AUDIT_LEDGER_MONITOR_WEBHOOK_SECRET)');
      const num = (name: string, v: string | undefined) => {
        if (v === undefined) return undefined;
        if (!/^\d+$/.test(v)) throw usage(`${name} must be a whole number, not ${JSON.stringify(v)}`);
        return Number(v);
      };
      const quorum = num('--quorum', opts.quorum) ?? opts.witness.length;
      const interval = num('--interval', opts.interval);
      if (interval === 0) throw usage('--interval must be at least 1 second');
      const write = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify({ time: Date.now(), ...line })}\n`);
      const stop = interval === undefined ? undefined : new Promise<void>((resolve) => {
        process.once('SIGTERM', () => resolve());
        process.once('SIGINT', () => resolve());
      });
      let result;
      try {
        result = await runMonitor(
          {
            logs: opts.log,
            headers,
            keys,
            ...(opts.keysUrl ? { keysUrl: opts.keysUrl } : {}),
            witnesses: opts.witness,
            quorum,
            stallSeconds: num('--stall-seconds', opts.stallSeconds) ?? 0,
            checkEntries: opts.checkEntries === true,
            statePath: opts.state,
            ...(opts.webhook && secret ? { webhook: { url: opts.webhook, secret } } : {}),
            ...(interval !== undefined ? { interval } : {}),
            ...(opts.metricsPort !== undefined ? { metricsPort: num('--metrics-port', opts.metricsPort) as number } : {}),
            write,
          },
          stop,
        );
      } catch (err) {
        if (err instanceof Exit) throw err;
        throw usage((err as Error).message);
      }
      if (interval === undefined && result.alerts.length > 0) throw new Exit(1);
    });

  // The auditor's offline check: the same command as @audit-ledger/verify's audit-ledger-verify.
  defineVerify(cli.command('verify-bundle'), 'verify-bundle');

  return cli;
}

async function main(argv: string[]): Promise<number> {
  const cli = program();
  if (argv.length === 0) {
    cli.outputHelp({ error: true });
    return 2;
  }
  try {
    await cli.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof Exit || err instanceof VerifyExit) return err.code;
    if (err instanceof CommanderError) {
      // --help and --version exit 0; a usage error (unknown command or option, missing value) exits 2.
      return err.exitCode === 0 ? 0 : 2;
    }
    throw err;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) {
      flushLogs();
      process.exit(code);
    }
  },
  (err: unknown) => {
    // A failed start (port taken, database unreachable, bad key file) exits non-zero at once, so a
    // supervisor restarts it; startService has already stopped whatever it had started.
    console.error(err instanceof ConfigError ? err.message : `audit-ledger: ${err instanceof Error ? err.message : String(err)}`);
    flushLogs();
    process.exit(err instanceof ConfigError ? 2 : 1);
  },
);
