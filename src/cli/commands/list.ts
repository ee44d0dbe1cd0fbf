/** `backfill list`: runs in the ledger, newest first. */
import { Command } from 'commander';
import { listRunSummaries } from '../../operations/status';
import { RunStatus } from '../../shared/statuses';
import { databaseOption, outputOption } from '../options';
import { emit, UsageError, type OutputOptions } from '../output';
import { renderRunList } from '../render/run-list';
import { withLedger } from '../session';

async function list(opts: OutputOptions & { database: string; status?: string; name?: string }): Promise<void> {
  if (opts.status && !(Object.values(RunStatus) as string[]).includes(opts.status)) {
    throw new UsageError(`--status must be one of ${Object.values(RunStatus).join(', ')} (got "${opts.status}")`);
  }
  await withLedger(opts.database, async ({ pool }) => emit(opts, await listRunSummaries(pool, { status: opts.status, name: opts.name }), renderRunList));
}

export function command(): Command {
  return new Command('list')
    .description('runs in the ledger, newest first')
    .option('--status <status>', 'only runs in this status')
    .option('--name <name>', 'only runs of this spec name')
    .addOption(databaseOption())
    .addOption(outputOption())
    .action(list);
}
