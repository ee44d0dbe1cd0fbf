/**
 * The `backfill` command line: commander parses, a command module calls an operation and
 * renders. Text output by default, `-o json` for scripts; exit codes 0 ok, 1 failed,
 * 2 bad input, 130 interrupted.
 */
import { Command, Option } from 'commander';
import { ensureTemporalCli } from '../dev/temporal-cli';
import { specJsonSchema } from '../specs/json-schema';
import { controlCommand, LIMIT_FLAG_HELP, retryFailedCommand, setLimitsCommand, watchCommand } from './commands/control';
import { demoCommand } from './commands/demo';
import { staleCommand } from './commands/stale';
import { devCommand } from './commands/dev';
import { planCommand } from './commands/plan';
import { startCommand } from './commands/start';
import { migrateCommand } from './commands/migrate';
import { afterCommand, approveCommand, cleanupCommand, reportCommand, verifyCommand } from './commands/proof';
import { listCommand, statusCommand } from './commands/status';
import { reportError, type OutputOptions } from './output';

// choices: a wrong format is refused before the command acts (cancel must not cancel, then fail to print)
const outputOption = () => new Option('-o, --output <format>', 'text or json').choices(['text', 'json']).default('text');
const databaseOption = () =>
  new Option('--database <ENV>', 'name of the environment variable holding the ledger database URL').default('DATABASE_URL');

export function buildProgram(): Command {
  const program = new Command('backfill')
    .description('Plan and run historical data backfills on Temporal and PostgreSQL')
    .showHelpAfterError()
    .configureOutput({ outputError: (text, write) => write(text) })
    .exitOverride();

  program
    .command('start')
    .description('check a spec against the database, plan it and start a durable run')
    .argument('<spec>', 'the spec file (YAML)')
    .option('--run-id <id>', 'run id (default: generated from the time)')
    .option('--wait', 'follow progress until the run finishes; exit 1 if it did not succeed')
    .option('--actor <name>', 'who starts it, for the audit record (default: OS user)')
    .option('--plan <file>', 'start only if the spec still makes this saved plan (backfill plan --save); refused, naming each difference, otherwise')
    .option('--approved-by <name>', 'who approved the plan (with --plan); kept with the run')
    .option('--only-stale', 'only the partitions backfill stale lists: written by another transform version, or before an accepted input change')
    .addOption(outputOption())
    .addHelpText('after', '\nExamples:\n  backfill start examples/orders-usd.yaml --wait\n  backfill start spec.yaml --run-id inc-142-retry -o json\n  backfill start spec.yaml --plan plan.json --approved-by alice')
    .action(startCommand);

  program
    .command('plan')
    .description('check a spec and show its partitions and inputs without starting or writing anything')
    .argument('<spec>', 'the spec file (YAML)')
    .option('--save <file>', 'write the plan (hashes, partitions, input fingerprints, estimates) for review; start it with start --plan')
    .option('--measure-writes', 'also write the sample chunks, in a transaction that is rolled back, to measure write time and WAL')
    .addOption(outputOption())
    .action(planCommand);

  program
    .command('stale')
    .description('list the partitions written by another transform version than the spec\'s, or before an accepted input change (re-run them with start --only-stale)')
    .argument('<spec>', 'the spec file (YAML)')
    .addOption(outputOption())
    .action(staleCommand);

  program
    .command('status')
    .description("a run's partitions, rows, failures and recent events, from the ledger")
    .argument('[run]', 'run id or workflow id (omit with --all)')
    .option('--all', 'list recent runs')
    .addOption(databaseOption())
    .addOption(outputOption())
    .action(statusCommand);

  for (const action of ['pause', 'resume', 'cancel'] as const) {
    const cmd = program
      .command(action)
      .description(
        action === 'pause'
          ? 'pause a run: chunks in flight finish, no new chunk starts'
          : action === 'resume'
            ? 'resume a paused run'
            : 'cancel a run: partitions stop at a chunk boundary; committed chunks stay',
      )
      .argument('<run>', 'run id or workflow id')
      .option('--actor <name>', 'who does it, for the audit record (default: OS user)')
      .addOption(databaseOption())
      .addOption(outputOption());
    if (action === 'cancel') cmd.requiredOption('--reason <text>', 'why; kept in the audit record');
    else cmd.option('--reason <text>', 'why; kept in the audit record');
    if (action === 'resume') {
      cmd.option('--accept-input-change', 'go on although a table or function the SQL transform reads changed since the run started (needs --reason)');
    }
    cmd.action((run: string, opts: Parameters<typeof controlCommand>[2]) => controlCommand(action, run, opts));
  }

  program
    .command('set-limits')
    .description('change a running run\'s limits; they take effect within one chunk')
    .argument('<run>', 'run id or workflow id')
    .option('--concurrency <n>', LIMIT_FLAG_HELP.concurrency)
    .option('--chunk-size <n>', LIMIT_FLAG_HELP.chunkSize)
    .option('--rows-per-second <n|off>', 'rows/s cap, or off')
    .option('--window <hours|off>', 'allowed hours, e.g. "22:00-06:00 Europe/Berlin", or off')
    .option('--actor <name>', 'who does it, for the audit record (default: OS user)')
    .option('--reason <text>', 'why; kept in the audit record')
    .addOption(databaseOption())
    .addOption(outputOption())
    .addHelpText('after', '\nExamples:\n  backfill set-limits 20261130-0245-447f --concurrency 2 --reason "replica lag"\n  backfill set-limits 20261130-0245-447f --rows-per-second off')
    .action(setLimitsCommand);

  program
    .command('retry-failed')
    .description('re-run only the failed and cancelled partitions of a finished run, from their checkpoints, as a new attempt')
    .argument('<run>', 'run id or workflow id')
    .option('--actor <name>', 'who does it, for the audit record (default: OS user)')
    .option('--reason <text>', 'why; kept in the audit record')
    .option('--wait', 'follow progress until the attempt finishes')
    .addOption(databaseOption())
    .addOption(outputOption())
    .action(retryFailedCommand);

  program
    .command('approve')
    .description('let a run held by its canary (validate.canary) expand to the rest of its scope')
    .argument('<run>', 'run id or workflow id')
    .requiredOption('--reason <text>', 'why it may expand; kept in the audit record with who approved')
    .option('--actor <name>', 'who approves, for the audit record (default: OS user)')
    .addOption(databaseOption())
    .addOption(outputOption())
    .action(approveCommand);

  program
    .command('verify')
    .description("recompute the run's frozen transform and compare it with the target now, partition by partition; exit 1 on mismatches")
    .argument('<run>', 'run id or workflow id')
    .option('--partition <id>', 'only this partition')
    .addOption(databaseOption())
    .addOption(outputOption())
    .action(verifyCommand);

  program
    .command('after')
    .description("run a succeeded run's after-actions (analyze, refresh, sql, notify, webhook) that have not succeeded yet")
    .argument('<run>', 'run id or workflow id')
    .option('--actor <name>', 'who does it, for the audit record (default: OS user)')
    .addOption(databaseOption())
    .addOption(outputOption())
    .action(afterCommand);

  program
    .command('cleanup')
    .description("remove a verified run's temporary state (runs do it themselves when their gates and after-actions succeeded)")
    .argument('<run>', 'run id or workflow id')
    .option('--actor <name>', 'who does it, for the audit record (default: OS user)')
    .addOption(databaseOption())
    .addOption(outputOption())
    .action(cleanupCommand);

  program
    .command('report')
    .description("a run's report for reviewers: scope, frozen transform, partitions, throughput and chunk charts, gates, downstream, audit trail")
    .argument('<run>', 'run id or workflow id')
    .addOption(new Option('--format <format>', 'markdown, or html (one self-contained page with charts)').choices(['markdown', 'html']).default('markdown'))
    .option('--out <file>', 'write to this file instead of standard output')
    .addOption(databaseOption())
    .action(reportCommand);

  program
    .command('watch')
    .description('follow a run live (progress bar, rows/s, ETA); exits 0 if it succeeds, 1 otherwise')
    .argument('<run>', 'run id or workflow id')
    .addOption(databaseOption())
    .addOption(outputOption())
    .action(watchCommand);

  program
    .command('list')
    .description('runs in the ledger, newest first')
    .option('--status <status>', 'only runs in this status')
    .option('--name <name>', 'only runs of this spec name')
    .addOption(databaseOption())
    .addOption(outputOption())
    .action(listCommand);

  program
    .command('migrate')
    .description("create or update the backfill ledger (schema backfill) in a database; run it as the ledger's owner when workers run as a least-privilege role")
    .addOption(databaseOption())
    .addOption(outputOption())
    .action(migrateCommand);

  program
    .command('schema')
    .description('print the JSON Schema of spec files (for editor completion and checks)')
    .action(() => {
      process.stdout.write(`${JSON.stringify(specJsonSchema(), null, 2)}\n`);
    });

  program
    .command('worker')
    .description('run a worker (TEMPORAL_ADDRESS, BACKFILL_TASK_QUEUE, and the database variables your specs name)')
    .action(async () => {
      // loaded on demand: the other commands need no worker runtime
      const { runWorker } = await import('../worker');
      await runWorker();
    });

  program
    .command('dev')
    .description('run the local Temporal dev server (Web UI :8233) and, without DATABASE_URL, an embedded PostgreSQL, until Ctrl-C')
    .action(devCommand);

  program
    .command('demo')
    .description('the demo: services, a worker, 1.2M demo orders and a backfill with live progress; stays up until Ctrl-C')
    .option('--exit', 'exit when the run finishes instead of staying up')
    .action(async (opts: { exit?: boolean }) => {
      process.exitCode = await demoCommand({ exit: opts.exit ? true : false });
    });

  program
    .command('setup')
    .description('make sure the Temporal CLI is available (download, or build with Go), and print its path')
    .action(async () => {
      const path = await ensureTemporalCli((line) => process.stderr.write(`${line}\n`));
      process.stdout.write(`${path}\n`);
    });

  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    const commanderCode = (err as { code?: string; exitCode?: number }).code;
    if (commanderCode?.startsWith('commander.')) {
      return commanderCode === 'commander.helpDisplayed' || commanderCode === 'commander.version' || commanderCode === 'commander.help' ? 0 : 2;
    }
    const output = (program.commands.find((c) => argv.includes(c.name()))?.opts() as OutputOptions | undefined) ?? {};
    return reportError(err, output);
  }
}
