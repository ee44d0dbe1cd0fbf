/** `backfill retry-failed`: a finished run's failed and cancelled partitions run again from their checkpoints, as attempt N+1. */
import { Command } from 'commander';
import { defaultActor } from '../../operations/actor';
import { retryFailed } from '../../operations/retry-failed';
import { runLabel } from '../../domain/labels';
import { temporalConfig } from '../../temporal/config';
import { followToEnd } from '../follow';
import { actorOption, databaseOption, outputOption, reasonOption, type ActorOptions } from '../options';
import { emit } from '../output';
import { withLedgerAndTemporal } from '../with-backfill';

async function retryFailedRun(ref: string, opts: ActorOptions & { wait?: boolean }): Promise<void> {
  await withLedgerAndTemporal(opts.database, async (session) => {
    const run = await session.findRun(ref);
    const who = { actor: opts.actor ?? defaultActor(), reason: opts.reason };
    const retry = await retryFailed({ client: session.client, pool: session.pool, taskQueue: temporalConfig().taskQueue }, run, who);
    if (opts.wait) return followToEnd(session, run.run_id, opts);
    emit(
      opts,
      { runId: run.run_id, attempt: retry.attempt, partitions: retry.partitions },
      (r) => `Retrying ${r.partitions} partitions of ${runLabel(run.name, r.runId)} (attempt ${r.attempt}); follow with: backfill watch ${r.runId}`,
    );
  });
}

export function command(): Command {
  return new Command('retry-failed')
    .description('re-run only the failed and cancelled partitions of a finished run, from their checkpoints, as a new attempt')
    .argument('<run>', 'run id or workflow id')
    .addOption(actorOption())
    .addOption(reasonOption())
    .option('--wait', 'follow progress until the attempt finishes')
    .addOption(databaseOption())
    .addOption(outputOption())
    .action(retryFailedRun);
}
