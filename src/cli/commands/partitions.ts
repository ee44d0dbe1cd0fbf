/** `backfill partitions`: one run's partitions, failed first, with a status filter. */
import { Command, Option } from 'commander';
import { listRunPartitions } from '../../operations/partitions';
import { PartitionStatus } from '../../domain/statuses';
import { databaseOption, outputOption } from '../options';
import { emit, UsageError, type OutputOptions } from '../output';
import { renderPartitions } from '../render/partitions';
import { withLedger } from '../with-backfill';

const STATUSES = Object.values(PartitionStatus) as string[];

async function partitions(ref: string, opts: OutputOptions & { database: string; status?: string; limit: string }): Promise<void> {
  const status = opts.status?.split(',').map((s) => s.trim());
  const unknown = status?.filter((s) => !STATUSES.includes(s));
  if (unknown?.length) throw new UsageError(`--status takes ${STATUSES.join(', ')} (several with commas); got "${unknown.join(', ')}"`);
  const limit = Number(opts.limit);
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError(`--limit must be a whole number of partitions, at least 1 (got "${opts.limit}")`);
  await withLedger(opts.database, async ({ pool, findRun }) => {
    const run = await findRun(ref);
    emit(opts, await listRunPartitions(pool, run.run_id, { status: status as PartitionStatus[] | undefined, limit }), renderPartitions);
  });
}

export function command(): Command {
  return new Command('partitions')
    .description("one run's partitions from the ledger: failed first, then running, pending, cancelled, succeeded")
    .argument('<run>', 'run id or workflow id')
    .option('--status <statuses>', `only these (comma-separated: ${STATUSES.join(', ')})`)
    .addOption(new Option('--limit <n>', 'at most this many').default('1000'))
    .addOption(databaseOption())
    .addOption(outputOption())
    .addHelpText(
      'after',
      '\nExamples:\n  backfill partitions 20261202-1431-efb821bb3c83d78a --status failed\n  backfill partitions 20261202-1431-efb821bb3c83d78a --status running,pending -o json',
    )
    .action(partitions);
}
