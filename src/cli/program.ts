/**
 * The `backfill` command line: the list of its commands, each defined with its action in
 * src/cli/commands/<command>.ts (commander parses, the action calls an operation and renders).
 * Text output by default, `-o json` for scripts; exit codes 0 ok, 1 failed, 2 bad input,
 * 3 could not answer, 130 interrupted (docs/operating.md "Exit codes").
 */
import { Command, Option } from 'commander';
import { completionCommand } from './completion';
import { arrangeHelp, HELP_GROUPS } from './help';
import { reportError, type OutputOptions } from './output';
import { versionText } from '../util/engine-version';

interface CommandModule {
  command(): Command;
}

/**
 * Every command by name (its file in ./commands), loaded when used: `backfill plan` loads what
 * plan needs, not the Temporal client and every operation of the other commands (a third of a
 * second of every process). `--help` lists them in groups (help.ts HELP_GROUPS).
 */
export const COMMANDS: Record<string, () => CommandModule> = {
  start: () => require('./commands/start'),
  plan: () => require('./commands/plan'),
  validate: () => require('./commands/validate'),
  stale: () => require('./commands/stale'),
  status: () => require('./commands/status'),
  partitions: () => require('./commands/partitions'),
  pause: () => require('./commands/pause'),
  resume: () => require('./commands/resume'),
  cancel: () => require('./commands/cancel'),
  'set-limits': () => require('./commands/set-limits'),
  'retry-failed': () => require('./commands/retry-failed'),
  revert: () => require('./commands/revert'),
  approve: () => require('./commands/approve'),
  verify: () => require('./commands/verify'),
  after: () => require('./commands/after'),
  cleanup: () => require('./commands/cleanup'),
  report: () => require('./commands/report'),
  watch: () => require('./commands/watch'),
  list: () => require('./commands/list'),
  migrate: () => require('./commands/migrate'),
  schema: () => require('./commands/schema'),
  worker: () => require('./commands/worker'),
  'codec-server': () => require('./commands/codec-server'),
  dev: () => require('./commands/dev'),
  demo: () => require('./commands/demo'),
  setup: () => require('./commands/setup'),
};

/** The commands that reach Temporal: each takes the temporal CLI's connection flags. */
const REACH_TEMPORAL = new Set([
  'start',
  'status',
  'pause',
  'resume',
  'cancel',
  'set-limits',
  'retry-failed',
  'revert',
  'approve',
  'verify',
  'report',
  'watch',
  'list',
  'worker',
]);

/**
 * `--address`, `--namespace` and `--env` as the temporal CLI spells them. They set the variables
 * every connection is made from (temporal/config.ts), before the command's action runs, so a flag
 * wins over the environment and `--env` picks a temporal.toml profile as TEMPORAL_PROFILE does.
 */
function withTemporalFlags(command: Command): Command {
  const group = 'Temporal connection (else TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_PROFILE):';
  return command
    .addOption(new Option('--address <host:port>', 'the Temporal frontend').helpGroup(group))
    .addOption(new Option('--namespace <name>', 'the Temporal namespace').helpGroup(group))
    .addOption(new Option('--env <profile>', "a profile of temporal.toml (TEMPORAL_CONFIG_FILE, else the temporal CLI's default file)").helpGroup(group))
    .hook('preAction', (_command, action) => {
      const { address, namespace, env } = action.opts<{ address?: string; namespace?: string; env?: string }>();
      if (address) process.env.TEMPORAL_ADDRESS = address;
      if (namespace) process.env.TEMPORAL_NAMESPACE = namespace;
      if (env) process.env.TEMPORAL_PROFILE = env;
    });
}

/**
 * The program with every command, or with `only` the one named (what a run of one command needs:
 * its options, arguments and help are its own).
 */
export function buildProgram(options: { completion?: boolean; only?: string } = {}): Command {
  const program = new Command('backfill')
    .description('Plan and run historical data backfills on Temporal and PostgreSQL')
    .version(versionText(), '-V, --version', 'print the version (recorded with every run it registers), and the Temporal SDK and Node.js versions')
    .showHelpAfterError()
    .configureOutput({ outputError: (text, write) => write(text) })
    .exitOverride();
  // addCommand does not pass the program's settings on as .command() does: errors must throw, not exit
  const order = HELP_GROUPS.flatMap((g) => g.commands);
  const names = options.only ? [options.only] : Object.keys(COMMANDS);
  const commands = names.map((name) => COMMANDS[name]().command()).sort((a, b) => order.indexOf(a.name()) - order.indexOf(b.name()));
  for (const c of commands) program.addCommand((REACH_TEMPORAL.has(c.name()) ? withTemporalFlags(c) : c).copyInheritedSettings(program));
  if (options.completion !== false && !options.only) program.addCommand(completionCommand(program, () => buildProgram({ completion: false })));
  arrangeHelp(program);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  // `backfill <command> …` builds that command alone; anything else (help, a typo, `complete`) all of them
  const named = argv[2];
  const program = buildProgram(named !== undefined && Object.hasOwn(COMMANDS, named) ? { only: named } : {});
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
