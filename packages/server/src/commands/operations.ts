// The operator's continuity commands (docs/operations.md): backup, restore, and continuity
// status/resolve. Each imports what it runs when it runs (cli.ts), so --help loads no store.
import type { Command } from 'commander';
import { loadConfig } from '../kernel/config.js';
import { collectValues, Exit } from './exit.js';

export function defineOperations(cli: Command): void {
  cli
    .command('backup')
    .description(
      'make a consistent online backup while the service runs: SQLite, the database file (VACUUM INTO); both stores, a JSON Lines export of every company ' +
        'and its checkpoints, and a manifest with each company\'s tree size and root, signed by the service key (docs/operations.md, "Backups")',
    )
    .requiredOption('--to <dir>', 'a new (or empty) directory for the backup')
    .action(async (opts: { to: string }) => {
      const config = loadConfig();
      const [{ openStore }, { takeBackup, BackupTargetError }, { Keyring }, { openSecretBox }, { SchemaNewerError }] = await Promise.all([
        import('../store/open.js'),
        import('../continuity/backup.js'),
        import('../ledger/keyring.js'),
        import('../store/secret-box.js'),
        import('../store/migrate.js'),
      ]);
      const store = openStore(config);
      let keyring;
      try {
        // A backup changes no schema: it is what an operator takes before an upgrade, and the
        // service may be running an older version. A database a newer version migrated is refused.
        const plan = await store.migrationPlan();
        if (plan.unknown.length > 0) throw new SchemaNewerError(plan.unknown);
        keyring = await Keyring.open({ config, signingKeys: store.signingKeys, secretBox: openSecretBox(config), clock: Date.now });
        const key = keyring.active;
        const manifest = await takeBackup({ store, dir: opts.to, origin: config.ledgerOrigin, key: { raw: key.raw, sign: (m) => key.custody.sign(m) }, say: (line) => console.log(line) });
        console.log(`backup of ${manifest.companies.length} compan${manifest.companies.length === 1 ? 'y' : 'ies'} in ${opts.to}, manifest signed by key ${key.keyId}`);
      } catch (err) {
        if (err instanceof BackupTargetError || err instanceof SchemaNewerError) {
          console.error(`audit-ledger backup: ${err.message}`);
          throw new Exit(err instanceof BackupTargetError ? 2 : 1);
        }
        throw err;
      } finally {
        keyring?.close();
        await store.close();
      }
    });

  cli
    .command('restore')
    .description(
      'restore a backup (or rebuild from complete JSON Lines exports) with the service stopped, never behind a checkpoint the outside world has seen: ' +
        'each company is verified and compared with the checkpoint files given and with the witnesses (WITNESSES); if it is behind, nothing is written ' +
        'and the missing entries are named, to be supplied with --entries (docs/operations.md, "Restore")',
    )
    .option('--from <dir>', 'a backup directory (audit-ledger backup --to)')
    .option('--export <file>', 'a complete JSON Lines export of one company, from seq 0 (when there is no backup; repeat)', collectValues, [])
    .option('--entries <file>', 'a JSON Lines export that supplies entries the backup lacks (repeat)', collectValues, [])
    .option('--checkpoint <file>', 'a checkpoint seen outside: a signed note, a JSON answer or bundle holding one, or a monitor state file (repeat)', collectValues, [])
    .option('--keys <file>', 'the service keys, as GET /api/v1/integrity/keys answers (required with --export and no backup)')
    .option('--force', 'SQLite: replace an existing ledger.db (kept beside it, renamed)')
    .action(async (opts: { from?: string; export: string[]; entries: string[]; checkpoint: string[]; keys?: string; force?: boolean }) => {
      const config = loadConfig();
      const [{ restore }, { RestoreInputError }, { SeenFileError }] = await Promise.all([import('../continuity/restore.js'), import('../continuity/sources.js'), import('../continuity/seen.js')]);
      try {
        const result = await restore({
          config,
          ...(opts.from ? { from: opts.from } : {}),
          exports: opts.export,
          entries: opts.entries,
          checkpoints: opts.checkpoint,
          ...(opts.keys ? { keysFile: opts.keys } : {}),
          force: opts.force === true,
          say: (line) => console.log(line),
        });
        if (!result.ok) {
          console.error('audit-ledger restore: refused; nothing was written (see above for each company)');
          throw new Exit(1);
        }
        console.log(`restored ${result.companies.length} compan${result.companies.length === 1 ? 'y' : 'ies'}; start the service: it signs a checkpoint that extends the ones seen`);
      } catch (err) {
        if (err instanceof RestoreInputError || err instanceof SeenFileError) {
          console.error(`audit-ledger restore: ${err.message}`);
          throw new Exit(1);
        }
        throw err;
      }
    });

  const continuity = cli.command('continuity').description('companies whose ledger is behind a checkpoint seen outside (after a failover or restore), and the operator\'s decision').helpOption('-h, --help', 'show this help and do nothing else');
  continuity
    .command('status')
    .description('list the continuity holds: companies whose appends are refused until an operator decides, and past decisions')
    .action(async () => {
      const [{ openStore }, { continuityStatus }] = await Promise.all([import('../store/open.js'), import('../continuity/resolve.js')]);
      const store = openStore(loadConfig());
      try {
        await store.migrate();
        for (const line of await continuityStatus(store)) console.log(line);
      } finally {
        await store.close();
      }
    });
  continuity
    .command('resolve')
    .description('decide for a held company: --entries supplies the missing entries (verified, then appended), or --accept-loss records that they are lost (the witnesses will refuse what follows)')
    .requiredOption('--company <id>', 'the held company')
    .option('--entries <file>', 'a JSON Lines export that holds the missing entries (repeat)', collectValues, [])
    .option('--accept-loss', 'accept that the missing entries are lost; needs --reason')
    .option('--reason <text>', 'why (recorded in the company\'s chain)')
    .action(async (opts: { company: string; entries: string[]; acceptLoss?: boolean; reason?: string }) => {
      if ((opts.entries.length > 0) === (opts.acceptLoss === true)) {
        console.error('audit-ledger continuity resolve: give either --entries <file> or --accept-loss --reason <text>');
        throw new Exit(2);
      }
      if (opts.acceptLoss && !opts.reason?.trim()) {
        console.error('audit-ledger continuity resolve: --accept-loss needs --reason <text>');
        throw new Exit(2);
      }
      const [{ openStore }, { acceptLoss, supplyEntries }, { RestoreInputError }] = await Promise.all([import('../store/open.js'), import('../continuity/resolve.js'), import('../continuity/sources.js')]);
      const store = openStore(loadConfig());
      try {
        await store.migrate();
        if (opts.acceptLoss) {
          const n = await acceptLoss(store, opts.company, (opts.reason as string).trim());
          if (n === 0) {
            console.error(`audit-ledger continuity resolve: company ${opts.company} has no open continuity hold`);
            throw new Exit(1);
          }
          console.log(`company ${opts.company}: loss accepted; the service records it in the company's chain and appends again within seconds`);
        } else if (!(await supplyEntries(store, opts.company, opts.entries, (line) => console.log(line)))) throw new Exit(1);
      } catch (err) {
        if (err instanceof RestoreInputError) {
          console.error(`audit-ledger continuity resolve: ${err.message}`);
          throw new Exit(1);
        }
        throw err;
      } finally {
        await store.close();
      }
    });

}
