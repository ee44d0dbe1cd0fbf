/**
 * `backfill setup`: the Temporal CLI found, downloaded or built with Go, and its path printed (the
 * first of the README's two commands runs it). `--temporal-server` also builds the production
 * server, its schema tool and the Web UI server compose deploys (PostgreSQL persistence; the
 * test tier that runs on them needs them).
 */
import { Command } from 'commander';
import { ensureTemporalCli } from '../../dev/temporal-cli';
import { ensureTemporalServer } from '../../dev/temporal-server-build';
import { ensureTemporalUi } from '../../dev/temporal-ui';

export function command(): Command {
  return new Command('setup')
    .description('make sure the Temporal CLI is available (download, or build with Go), and print its path')
    .option('--temporal-server', 'also build the production Temporal server, its schema tool and its Web UI server with Go (minutes, first time only)')
    .action(async (opts: { temporalServer?: boolean }) => {
      const say = (line: string) => process.stderr.write(`${line}\n`);
      const path = await ensureTemporalCli(say);
      process.stdout.write(`${path}\n`);
      if (opts.temporalServer) {
        process.stdout.write(`${(await ensureTemporalServer(say)).server}\n`);
        process.stdout.write(`${(await ensureTemporalUi(say)).server}\n`);
      }
    });
}
