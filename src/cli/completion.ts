/**
 * Shell completion for bash, zsh, fish and PowerShell, through @bomb.sh/tab: `backfill completion
 * bash` prints the script (`complete bash`, the older name, too), and the script asks `backfill
 * complete -- <words>` for each completion, which reads commands, options and their choices from
 * this program itself, so it never falls behind a new flag. A run argument completes the ledger's
 * recent run and fleet ids (the `--database` on the line, else DATABASE_URL; nothing if it does
 * not answer within a second); a spec argument completes spec files and directories. The library
 * is ESM-only and loaded only here, when completing.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { createPool } from '../db/pool';
import { recentFleets } from '../ledger/fleets';
import { listRuns } from '../ledger/runs';

/** What this file uses of the library's completion tree (its types are ESM-only). */
type Complete = (value: string, description: string) => void;
interface RootCommand {
  commands: Map<string, { arguments: Map<string, { handler?: (complete: Complete) => void }> }>;
}
type Tab = (program: Command, config?: { completionCommandName?: string }) => RootCommand;

/** The `completion` command as --help lists it; `programWithoutIt` builds the program the library completes. */
export function completionCommand(parent: Command, programWithoutIt: () => Command): Command {
  return (
    new Command('completion')
      .alias('complete')
      // the parent's settings first: they would undo the two that let the words through
      .copyInheritedSettings(parent)
      .description('print a shell completion script: bash, zsh, fish or powershell (the script asks backfill for each completion)')
      .argument('[shell]', 'bash, zsh, fish or powershell')
      .allowExcessArguments()
      .allowUnknownOption()
      .addHelpText(
        'after',
        '\nExamples:\n  backfill completion bash > /etc/bash_completion.d/backfill\n  backfill completion zsh > "${fpath[1]}/_backfill"\n  backfill completion fish > ~/.config/fish/completions/backfill.fish',
      )
      .action(async (_shell: unknown, _opts: unknown, command: Command) => {
        const program = programWithoutIt();
        const root = (require('@bomb.sh/tab/commander') as { default: Tab }).default(program, { completionCommandName: 'completion' });
        // rawArgs: the words as given (commander keeps them, without declaring them)
        const argv = [...(command.parent as unknown as { rawArgs: string[] }).rawArgs];
        const asking = argv[3] === '--';
        // the library's `complete -- <words>` answers a shell; its `completion <shell>` prints the script
        argv[2] = asking ? 'complete' : 'completion';
        if (asking) await completeArguments(root, argv.slice(4));
        await program.parseAsync(argv);
      })
  );
}

/** Fills in what the library cannot know: run ids from the ledger, spec files from the disk. */
async function completeArguments(root: RootCommand, words: string[]): Promise<void> {
  const command = root.commands.get(words[0] ?? '');
  if (!command) return;
  const partial = words[words.length - 1] ?? '';
  const run = command.arguments.get('run');
  if (run) {
    const ids = await recentIds(databaseVariable(words));
    run.handler = (complete) => ids.forEach(([id, description]) => complete(id, description));
  }
  for (const name of ['spec', 'specs']) {
    const spec = command.arguments.get(name);
    if (spec) spec.handler = (complete) => specFiles(partial).forEach((file) => complete(file, ''));
  }
}

function databaseVariable(words: string[]): string {
  const at = words.indexOf('--database');
  return (at >= 0 ? words[at + 1] : words.find((w) => w.startsWith('--database='))?.slice('--database='.length)) || 'DATABASE_URL';
}

/** The ledger's newest runs and fleets, [id, what it is]; nothing when it cannot be read within a second. */
async function recentIds(variable: string): Promise<[string, string][]> {
  const url = process.env[variable];
  if (!url) return [];
  const pool = createPool(url, { max: 1, applicationName: 'backfill-completion' });
  const timeout = new Promise<[string, string][]>((resolve) => setTimeout(() => resolve([]), 1_000).unref());
  const read = (async () => {
    const runs = await listRuns(pool, { limit: 50 });
    const fleets = await recentFleets(pool);
    return [
      ...fleets.map((f): [string, string] => [f.fleet_id, `fleet ${f.name}`]),
      ...runs.map((r): [string, string] => [r.run_id, `${r.name} (${r.status})`]),
    ];
  })().catch(() => [] as [string, string][]);
  try {
    return await Promise.race([read, timeout]);
  } finally {
    void pool.end().catch(() => undefined);
  }
}

/** Spec files (.yaml, .yml, .json) and directories under the directory the partial word names. */
function specFiles(partial: string): string[] {
  const dir = partial.includes('/') ? partial.slice(0, partial.lastIndexOf('/') + 1) : '';
  try {
    return readdirSync(dir === '' ? '.' : path.resolve(dir), { withFileTypes: true })
      .filter((e) => !e.name.startsWith('.') || path.basename(partial).startsWith('.'))
      .filter((e) => e.isDirectory() || /\.(ya?ml|json)$/.test(e.name))
      .map((e) => `${dir}${e.name}${e.isDirectory() ? '/' : ''}`)
      .sort();
  } catch {
    return [];
  }
}
