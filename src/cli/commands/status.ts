/** `backfill status`: the ledger's view of one run (or, with --all, of recent runs). */
import { Command } from 'commander';
import { listRunSummaries, statusReport } from '../../operations/status';
import { databaseOption, outputOption } from '../options';
import { emit, UsageError, type OutputOptions } from '../output';
import { renderRunList } from '../render/run-list';
import { renderStatus } from '../render/status';
import { withLedger } from '../session';

async function status(ref: string | undefined, opts: OutputOptions & { database: string; all?: boolean }): Promise<void> {
  if (!ref && !opts.all) throw new UsageError('name a run (backfill status <run>) or list runs with: backfill list');
  await withLedger(opts.database, async ({ pool, findRun }) => {
    if (opts.all || !ref) return emit(opts, await listRunSummaries(pool), renderRunList);
    emit(opts, await statusReport(pool, await findRun(ref)), renderStatus);
  });
}

export function command(): Command {
  return new Command('status')
    .description("a run's partitions, rows, failures and recent events, from the ledger")
    .argument('[run]', 'run id or workflow id (omit with --all)')
    .option('--all', 'list recent runs')
    .addOption(databaseOption())
    .addOption(outputOption())
    .action(status);
}
