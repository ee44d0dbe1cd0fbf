/**
 * Shell completion for bash, zsh, fish and PowerShell, through @bomb.sh/tab: `backfill complete
 * bash` prints the script, and the script asks `backfill complete -- <words>` for each
 * completion, which reads commands, options and their choices from this program itself, so it
 * never falls behind a new flag. The library is ESM-only and loaded only here, when completing.
 */
import { Command } from 'commander';

type Tab = (program: Command) => unknown;

/** The `complete` command as --help lists it; `programWithoutIt` builds the program the library completes. */
export function completionCommand(parent: Command, programWithoutIt: () => Command): Command {
  return (
    new Command('complete')
      // the parent's settings first: they would undo the two that let the words through
      .copyInheritedSettings(parent)
      .description('print a shell completion script: bash, zsh, fish or powershell (the script asks backfill for each completion)')
      .argument('[shell]', 'bash, zsh, fish or powershell')
      .allowExcessArguments()
      .allowUnknownOption()
      .addHelpText(
        'after',
        '\nExamples:\n  backfill complete bash > /etc/bash_completion.d/backfill\n  backfill complete zsh > "${fpath[1]}/_backfill"\n  backfill complete fish > ~/.config/fish/completions/backfill.fish',
      )
      .action(async (_shell: unknown, _opts: unknown, command: Command) => {
        const program = programWithoutIt();
        (require('@bomb.sh/tab/commander') as { default: Tab }).default(program);
        // the library's own `complete` reads the words after `--`, or prints the script for the shell
        // rawArgs: the words as given (commander keeps them, without declaring them)
        await program.parseAsync((command.parent as unknown as { rawArgs: string[] }).rawArgs);
      })
  );
}
