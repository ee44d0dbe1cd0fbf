/** `backfill setup`: the Temporal CLI found, downloaded or built with Go, and its path printed (the first of the README's two commands runs it). */
import { Command } from 'commander';
import { ensureTemporalCli } from '../../dev/temporal-cli';

export function command(): Command {
  return new Command('setup').description('make sure the Temporal CLI is available (download, or build with Go), and print its path').action(async () => {
    const path = await ensureTemporalCli((line) => process.stderr.write(`${line}\n`));
    process.stdout.write(`${path}\n`);
  });
}
