/** `backfill watch`: a run followed live (progress bar, rows/s, ETA) to its end; exit 0 if it succeeded. */
import { Command } from 'commander';
import { followToEnd } from '../follow';
import { databaseOption, outputOption } from '../options';
import { format, type OutputOptions } from '../output';
import { withBackfill, withLedger } from '../with-backfill';
import { isFleetRef } from '../../fleet/start-fleet';
import { followFleet } from '../follow-fleet';
import { runLink } from '../web-ui-links';

async function watch(ref: string, opts: OutputOptions & { database: string }): Promise<void> {
  if (isFleetRef(ref)) return withBackfill('DATABASE_URL', (backfill) => followFleet(backfill, ref, opts));
  await withLedger(opts.database, async (session) => {
    const run = await session.findRun(ref);
    if (format(opts) === 'text') process.stderr.write(`Web UI: ${runLink(run.workflow_id)}\n`);
    await followToEnd(session, run.run_id, opts);
  });
}

export function command(): Command {
  return new Command('watch')
    .description('follow a run live (progress bar, rows/s, ETA); exits 0 if it succeeds, 1 otherwise')
    .argument('<run>', 'run id, fleet id (fleet-…: a line per member change) or workflow id')
    .addOption(databaseOption())
    .addOption(outputOption())
    .action(watch);
}
