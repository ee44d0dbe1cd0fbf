/** `backfill cleanup`: a verified run's temporary state removed; its record, chunk log and gate results stay. */
import { Command } from 'commander';
import { cleanupFinishedRun } from '../../operations/cleanup';
import { defaultActor } from '../../operations/actor';
import { runLabel } from '../../domain/labels';
import { actorOption, databaseOption, outputOption, type ActorOptions } from '../options';
import { emit } from '../output';
import { withLedger } from '../with-backfill';

async function cleanup(ref: string, opts: ActorOptions): Promise<void> {
  await withLedger(opts.database, async ({ pool, findRun }) => {
    const run = await findRun(ref);
    const { removed, imagesKept } = await cleanupFinishedRun(pool, run, opts.actor ?? defaultActor());
    const images = removed.images
      ? '; its before-images dropped (it can no longer be reverted)'
      : imagesKept?.reverting
        ? `; its before-images stay while revert ${imagesKept.reverting} reads them`
        : imagesKept?.until
          ? `; its before-images stay until ${imagesKept.until} (it can be reverted until then; clean up again after)`
          : '';
    emit(
      opts,
      { runId: run.run_id, removed, ...(imagesKept ? { imagesKept } : {}) },
      () =>
        `Temporary state of ${runLabel(run.name, run.run_id)} removed (${removed.rateLimits} rate-limit row(s))${images}; the run's record, chunk log and gate results stay.`,
    );
  });
}

export function command(): Command {
  return new Command('cleanup')
    .description("remove a verified run's temporary state (runs do it themselves when their gates and after-actions succeeded)")
    .argument('<run>', 'run id or workflow id')
    .addOption(actorOption())
    .addOption(databaseOption())
    .addOption(outputOption())
    .action(cleanup);
}
