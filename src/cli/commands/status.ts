/** `backfill status`: the ledger's view of one run (or, with --all, of recent runs). */
import { Command } from 'commander';
import { databaseOption, outputOption } from '../options';
import { emit, UsageError, type OutputOptions } from '../output';
import { renderRunList } from '../render/run-list';
import { renderStatus } from '../render/status';
import { withBackfill } from '../with-backfill';
import { runListLink, withLinks } from '../web-ui-links';
import { isFleetRef } from '../../fleet/start-fleet';
import { renderFleetStatus } from '../render/fleet-status';

async function status(ref: string | undefined, opts: OutputOptions & { database: string; all?: boolean }): Promise<void> {
  if (!ref && !opts.all) throw new UsageError('name a run (backfill status <run>) or list runs with: backfill list');
  await withBackfill(opts.database, async (backfill) => {
    if (opts.all || !ref) return emit(opts, withLinks(await backfill.list()), (list) => renderRunList(list, runListLink()));
    // a fleet's status comes from its workflow and every member's own ledger
    if (isFleetRef(ref)) return emit(opts, await backfill.fleetStatus(ref), renderFleetStatus);
    emit(opts, await backfill.status(ref), renderStatus);
  });
}

export function command(): Command {
  return new Command('status')
    .description("a run's partitions, rows, failures and recent events, from the ledger")
    .argument('[run]', 'run id, fleet id (fleet-…) or workflow id (omit with --all)')
    .option('--all', 'list recent runs')
    .addOption(databaseOption())
    .addOption(outputOption())
    .action(status);
}
