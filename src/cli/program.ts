/**
 * The `backfill` command line: the list of its commands, each defined with its action in
 * src/cli/commands/<command>.ts (commander parses, the action calls an operation and renders).
 * Text output by default, `-o json` for scripts; exit codes 0 ok, 1 failed, 2 bad input,
 * 130 interrupted.
 */
import { Command } from 'commander';
import * as after from './commands/after';
import * as approve from './commands/approve';
import * as cancel from './commands/cancel';
import * as cleanup from './commands/cleanup';
import * as codecServer from './commands/codec-server';
import * as demo from './commands/demo';
import * as dev from './commands/dev';
import * as list from './commands/list';
import * as migrate from './commands/migrate';
import * as partitionsCmd from './commands/partitions';
import * as pause from './commands/pause';
import * as plan from './commands/plan';
import * as report from './commands/report';
import * as resume from './commands/resume';
import * as retryFailed from './commands/retry-failed';
import * as revert from './commands/revert';
import * as schema from './commands/schema';
import * as setLimits from './commands/set-limits';
import * as setup from './commands/setup';
import * as stale from './commands/stale';
import * as start from './commands/start';
import * as status from './commands/status';
import * as validate from './commands/validate';
import * as verify from './commands/verify';
import * as watch from './commands/watch';
import * as worker from './commands/worker';
import { completionCommand } from './completion';
import { arrangeHelp, HELP_GROUPS } from './help';
import { reportError, type OutputOptions } from './output';
import { versionText } from '../util/engine-version';

/** Every command; `--help` lists them in groups (help.ts HELP_GROUPS). */
const COMMANDS = [
  start,
  plan,
  validate,
  stale,
  status,
  partitionsCmd,
  pause,
  resume,
  cancel,
  setLimits,
  retryFailed,
  revert,
  approve,
  verify,
  after,
  cleanup,
  report,
  watch,
  list,
  migrate,
  schema,
  worker,
  codecServer,
  dev,
  demo,
  setup,
];

export function buildProgram(options: { completion?: boolean } = {}): Command {
  const program = new Command('backfill')
    .description('Plan and run historical data backfills on Temporal and PostgreSQL')
    .version(versionText(), '-V, --version', 'print the version (recorded with every run it registers), and the Temporal SDK and Node.js versions')
    .showHelpAfterError()
    .configureOutput({ outputError: (text, write) => write(text) })
    .exitOverride();
  // addCommand does not pass the program's settings on as .command() does: errors must throw, not exit
  const order = HELP_GROUPS.flatMap((g) => g.commands);
  const commands = COMMANDS.map((c) => c.command()).sort((a, b) => order.indexOf(a.name()) - order.indexOf(b.name()));
  for (const c of commands) program.addCommand(c.copyInheritedSettings(program));
  if (options.completion !== false) program.addCommand(completionCommand(program, () => buildProgram({ completion: false })));
  arrangeHelp(program);
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
