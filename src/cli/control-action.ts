/** What `pause`, `resume` and `cancel` share: the update through the operation, and the outcome once the ledger holds it. */
import { Command } from 'commander';
import { defaultActor } from '../operations/actor';
import { controlRun, type ControlAction } from '../operations/control';
import { runLabel } from '../shared/labels';
import { actorOption, databaseOption, outputOption, type ActorOptions } from './options';
import { emit } from './output';
import { withLedgerAndTemporal } from './session';

export async function applyControl(action: ControlAction, ref: string, opts: ActorOptions & { acceptInputChange?: boolean }): Promise<void> {
  await withLedgerAndTemporal(opts.database, async ({ client, pool, findRun }) => {
    const run = await findRun(ref);
    const who = { actor: opts.actor ?? defaultActor(), reason: opts.reason };
    const { applied, ended } = await controlRun({ client, pool }, run, action, who, undefined, { acceptInputChange: opts.acceptInputChange });
    const past = { pause: 'paused', resume: 'resumed', cancel: 'cancelling' }[action];
    emit(opts, { runId: run.run_id, action, applied, ...(ended ? { workflowEnded: ended } : {}) }, () =>
      ended
        ? `Run ${runLabel(run.name, run.run_id)} closed: its workflow had ended ${ended.status} (${ended.why}). The ledger now shows it failed; partitions still running stop at their next chunk.`
        : applied
          ? `Run ${runLabel(run.name, run.run_id)} ${past}.`
          : `No worker answered: the ${action} was sent to ${run.workflow_id} as a signal, which applies when a worker takes the run; is one running? Check: backfill status ${run.run_id}`,
    );
  });
}

/** The command for one control action, with the options all three take. */
export function controlCommand(action: ControlAction, description: string): Command {
  return new Command(action)
    .description(description)
    .argument('<run>', 'run id or workflow id')
    .addOption(actorOption())
    .addOption(databaseOption())
    .addOption(outputOption());
}
