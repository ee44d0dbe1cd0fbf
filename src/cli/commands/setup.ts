/**
 * `backfill setup`: the Temporal CLI found, downloaded or built with Go, and its path printed (the
 * first of the README's two commands runs it). `--temporal-server` also builds the production
 * server and its schema tool (PostgreSQL persistence; the test tier that runs on it needs them).
 */
import { Command } from 'commander';
import { ensureTemporalCli } from '../../dev/temporal-cli';
import { ensureTemporalServer } from '../../dev/temporal-server-build';

export function command(): Command {
  return new Command('setup')
    .description('make sure the Temporal CLI is available (download, or build with Go), and print its path')
    .option('--temporal-server', 'also build the production Temporal server and its schema tool with Go (minutes, first time only)')
    .action(async (opts: { temporalServer?: boolean }) => {
      const say = (line: string) => process.stderr.write(`${line}\n`);
      const path = await ensureTemporalCli(say);
      process.stdout.write(`${path}\n`);
      if (opts.temporalServer) process.stdout.write(`${(await ensureTemporalServer(say)).server}\n`);
    });
}
