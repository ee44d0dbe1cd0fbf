/** `backfill after`: a succeeded run's after-actions that have not succeeded yet, run again in order. */
import { Command } from 'commander';
import { runAfterActions } from '../../downstream/after-actions';
import { defaultActor } from '../../operations/actor';
import { workerTrustFromEnv } from '../../security/worker-trust';
import { runLabel } from '../../shared/labels';
import { actorOption, databaseOption, outputOption, type ActorOptions } from '../options';
import { emit, UsageError } from '../output';
import { withLedger } from '../session';

async function after(ref: string, opts: ActorOptions): Promise<void> {
  await withLedger(opts.database, async ({ pool, findRun }) => {
    const run = await findRun(ref);
    if ((run.spec.after?.length ?? 0) === 0) throw new UsageError(`run ${runLabel(run.name, run.run_id)} has no after-actions in its spec`);
    if (run.status !== 'succeeded')
      throw new UsageError(
        `run ${runLabel(run.name, run.run_id)} is ${run.status}: after-actions run only after every partition succeeded and every gate passed`,
      );
    const outcome = await runAfterActions(pool, run.run_id, { trust: workerTrustFromEnv(), actor: opts.actor ?? defaultActor() });
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
