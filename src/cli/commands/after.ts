/** `backfill after`: a succeeded run's after-actions that have not succeeded yet, run again in order (src/after-actions). */
import { Command } from 'commander';
import { rerunAfterActions } from '../../operations/rerun-after-actions';
import { defaultActor } from '../../operations/actor';
import { runLabel } from '../../domain/labels';
import { actorOption, databaseOption, outputOption, type ActorOptions } from '../options';
import { emit } from '../output';
import { withLedger } from '../with-backfill';

async function after(ref: string, opts: ActorOptions): Promise<void> {
  await withLedger(opts.database, async ({ pool, findRun }) => {
    const run = await findRun(ref);
    const outcome = await rerunAfterActions(pool, run, opts.actor ?? defaultActor());
    emit(opts, outcome, (o) =>
      [
        `Downstream of ${runLabel(run.name, run.run_id)}: ${o.downstream}`,
        ...o.actions.map((a) => `  ${a.status.padEnd(9)} ${a.description}${a.last_error ? `: ${a.last_error}` : ''}`),
      ].join('\n'),
    );
    if (outcome.downstream !== 'succeeded') process.exitCode = 1;
  });
}

export function command(): Command {
  return new Command('after')
    .description("run a succeeded run's after-actions (analyze, refresh, sql, notify, webhook) that have not succeeded yet")
    .argument('<run>', 'run id or workflow id')
    .addOption(actorOption())
    .addOption(databaseOption())
    .addOption(outputOption())
    .action(after);
}
