/** What `pause`, `resume` and `cancel` share: the update through the operation, and the outcome once the ledger holds it. */
import { Command } from 'commander';
import type { ControlAction } from '../operations/control';
import { runLabel } from '../domain/labels';
import { runWorkflowId } from '../domain/ids';
import { actorOption, databaseOption, outputOption, type ActorOptions } from './options';
import { emit, UsageError } from './output';
import { withBackfill } from './with-backfill';
import type { BackfillClient } from '../api/backfill';
import { confirm } from './confirm';
import { isFleetRef } from '../fleet/start-fleet';
import { fleetMember } from '../fleet/fleet-control';
import { memberOption } from './options';

type ControlOptions = ActorOptions & { acceptInputChange?: boolean; yes?: boolean; member?: string };

export async function applyControl(action: ControlAction, ref: string, opts: ControlOptions): Promise<void> {
  if (isFleetRef(ref)) return applyFleetControl(action, ref, opts);
  if (opts.member) throw new UsageError(`--member names a member of a fleet; ${ref} is a run`);
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

/**
 * A fleet: the whole fleet by its workflow (no member starts while paused or cancelled; running
 * members are told), or one member (`--member NAME`) as the run it is, in its own ledger.
 */
async function applyFleetControl(action: ControlAction, ref: string, opts: ControlOptions): Promise<void> {
  if (opts.member) {
    const member = await withBackfill(opts.member, async (backfill) => fleetMember(await backfill.client(), ref, opts.member!));
    return applyControl(action, member.runId, { ...opts, member: undefined, database: opts.member });
  }
  await withBackfill('DATABASE_URL', async (backfill) => {
    if (action === 'cancel')
      await confirm(
        `cancel of fleet ${ref}`,
        `Cancel fleet ${ref}? No member starts any more; running members stop at their next chunk; what was written stays.`,
        opts,
      );
    const outcome = await backfill.controlFleet(ref, action, { actor: opts.actor, reason: opts.reason });
    const past = { pause: 'paused', resume: 'resumed', cancel: 'cancelling' }[action];
    emit(opts, { ...outcome, action }, (o) => `Fleet ${o.fleetId} ${past}${o.members.length ? `; told its running member(s): ${o.members.join(', ')}` : ''}.`);
  });
}

/** The command for one control action, with the options all three take. */
export function controlCommand(action: ControlAction, description: string): Command {
  return new Command(action)
    .description(description)
    .argument('<run>', 'run id, fleet id (fleet-…) or workflow id')
    .addOption(memberOption())
    .addOption(actorOption())
    .addOption(databaseOption())
    .addOption(outputOption());
}

async function confirmCancel(backfill: BackfillClient, ref: string, opts: { yes?: boolean }): Promise<void> {
  const run = await backfill.findRun(ref);
  const label = runLabel(run.name, run.run_id);
  await confirm(`cancel of ${label}`, `Cancel ${label} (${run.status})? Its partitions stop at their next chunk; what was written stays.`, opts);
}
