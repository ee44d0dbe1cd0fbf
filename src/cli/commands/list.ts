/** `backfill list`: runs in the ledger, newest first. */
import { Command } from 'commander';
import { listRunSummaries } from '../../operations/status';
import { RunStatus } from '../../domain/statuses';
import { databaseOption, outputOption } from '../options';
import { emit, UsageError, type OutputOptions } from '../output';
import { renderRunList } from '../render/run-list';
import { withLedger } from '../with-backfill';
import { runListLink, withLinks } from '../web-ui-links';

async function list(opts: OutputOptions & { database: string; status?: string; name?: string }): Promise<void> {
  if (opts.status && !(Object.values(RunStatus) as string[]).includes(opts.status)) {
    throw new UsageError(`--status must be one of ${Object.values(RunStatus).join(', ')} (got "${opts.status}")`);
  }
  const filter = { status: opts.status, name: opts.name };
  await withLedger(opts.database, async ({ pool }) =>
    emit(opts, withLinks(await listRunSummaries(pool, filter)), (list) => renderRunList(list, runListLink(filter))),
  );
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
