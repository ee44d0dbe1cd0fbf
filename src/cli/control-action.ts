/** What `pause`, `resume` and `cancel` share: the update through the operation, and the outcome once the ledger holds it. */
import { Command } from 'commander';
import type { ControlAction } from '../operations/control';
import { runLabel } from '../domain/labels';
import { runWorkflowId } from '../domain/ids';
import { actorOption, databaseOption, outputOption, type ActorOptions } from './options';
import { emit } from './output';
import { withBackfill } from './with-backfill';
import type { BackfillClient } from '../api/backfill';
import { confirm } from './confirm';

export async function applyControl(action: ControlAction, ref: string, opts: ActorOptions & { acceptInputChange?: boolean; yes?: boolean }): Promise<void> {
  await withBackfill(opts.database, async (backfill) => {
    const who = { actor: opts.actor, reason: opts.reason };
    const outcome =
      action === 'resume'
        ? await backfill.resume(ref, { ...who, acceptInputChange: opts.acceptInputChange })
        : action === 'cancel'
          ? await backfill.cancel(ref, { ...who, confirm: () => confirmCancel(backfill, ref, opts) })
          : await backfill.pause(ref, who);
    const { runId, name, applied, workflowEnded: ended } = outcome;
    const past = { pause: 'paused', resume: 'resumed', cancel: 'cancelling' }[action];
    emit(opts, { runId, action, applied, ...(ended ? { workflowEnded: ended } : {}) }, () =>
      ended
        ? `Run ${runLabel(name, runId)} closed: its workflow had ended ${ended.status} (${ended.why}). The ledger now shows it failed; partitions still running stop at their next chunk.`
        : applied
          ? `Run ${runLabel(name, runId)} ${past}.`
          : `No worker answered: the ${action} was sent to ${runWorkflowId(name, runId)} as a signal, which applies when a worker takes the run; is one running? Check: backfill status ${runId}`,
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

async function confirmCancel(backfill: BackfillClient, ref: string, opts: { yes?: boolean }): Promise<void> {
  const run = await backfill.findRun(ref);
  const label = runLabel(run.name, run.run_id);
  await confirm(`cancel of ${label}`, `Cancel ${label} (${run.status})? Its partitions stop at their next chunk; what was written stays.`, opts);
}
