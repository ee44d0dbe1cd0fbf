/** `backfill retry-failed`: a finished run's failed and cancelled partitions run again from their checkpoints, as attempt N+1. */
import { Command } from 'commander';
import { defaultActor } from '../../operations/actor';
import { retryFailed } from '../../operations/retry-failed';
import { runLabel } from '../../domain/labels';
import { temporalConfig } from '../../temporal/config';
import { followToEnd } from '../follow';
import { actorOption, databaseOption, outputOption, reasonOption, type ActorOptions } from '../options';
import { emit, format } from '../output';
import { withBackfill, withLedgerAndTemporal } from '../with-backfill';
import { isFleetRef } from '../../fleet/start-fleet';
import { followFleet } from '../follow-fleet';

async function retryFailedRun(ref: string, opts: ActorOptions & { wait?: boolean }): Promise<void> {
  if (isFleetRef(ref)) return retryFailedFleet(ref, opts);
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

/** A fleet: its next attempt; failed members retried from their checkpoints, members never started started, the rest kept. */
async function retryFailedFleet(ref: string, opts: ActorOptions & { wait?: boolean }): Promise<void> {
  await withBackfill('DATABASE_URL', async (backfill) => {
    const { result: _result, ...retry } = await backfill.retryFleet(ref, { actor: opts.actor, reason: opts.reason });
    const text = (r: typeof retry) =>
      [
        `Fleet ${r.fleetId}: attempt ${r.attempt}`,
        ...r.members.map((m) =>
          m.action === 'kept'
            ? `  ${m.variable}: succeeded before; kept`
            : m.action === 'retried'
              ? `  ${m.variable}: retrying ${m.partitions} failed or cancelled partition(s) from their checkpoints`
              : `  ${m.variable}: starting its run`,
        ),
        `  follow: backfill status ${r.fleetId}`,
      ].join('\n');
    if (!opts.wait) return emit(opts, retry, text);
    if (format(opts) === 'text') process.stderr.write(`${text(retry)}\n`);
    await followFleet(backfill, retry.fleetId, opts);
  });
}

export function command(): Command {
  return new Command('retry-failed')
    .description('re-run only the failed and cancelled partitions of a finished run, from their checkpoints, as a new attempt')
    .argument('<run>', 'run id, fleet id (fleet-…) or workflow id')
    .addOption(actorOption())
    .addOption(reasonOption())
    .option('--wait', 'follow progress until the attempt finishes')
    .addOption(databaseOption())
    .addOption(outputOption())
    .action(retryFailedRun);
}
