/** `backfill approve`: a person lets a run held by its canary (or a ramp stage) expand; kept with who and why. What the canary checks: src/gates. */
import { Command, Option } from 'commander';
import { defaultActor } from '../../operations/actor';
import { approveRun } from '../../operations/control';
import { runLabel } from '../../domain/labels';
import { actorOption, databaseOption, memberOption, outputOption, type ActorOptions } from '../options';
import { emit } from '../output';
import { withBackfill, withLedgerAndTemporal } from '../with-backfill';
import { isFleetRef } from '../../fleet/start-fleet';
import { fleetMember } from '../../fleet/fleet-control';
import { UsageError } from '../output';

async function approve(ref: string, opts: ActorOptions & { member?: string }): Promise<void> {
  if (isFleetRef(ref)) return approveFleet(ref, opts);
  if (opts.member) throw new UsageError(`--member names a member of a fleet; ${ref} is a run`);
  await withLedgerAndTemporal(opts.database, async ({ client, findRun }) => {
    const run = await findRun(ref);
    await approveRun({ client }, run, { actor: opts.actor ?? defaultActor(), reason: opts.reason });
    emit(
      opts,
      { runId: run.run_id, approved: true },
      () => `Run ${runLabel(run.name, run.run_id)} approved; it expands beyond its canary. Follow with: backfill watch ${run.run_id}`,
    );
  });
}

/** A fleet: its next wave (fleet.approve), or one member's canary (`--member NAME`). */
async function approveFleet(ref: string, opts: ActorOptions & { member?: string }): Promise<void> {
  if (opts.member) {
    const member = await withBackfill(opts.member, async (backfill) => fleetMember(await backfill.client(), ref, opts.member!));
    return approve(member.runId, { ...opts, member: undefined, database: opts.member });
  }
  await withBackfill('DATABASE_URL', async (backfill) => {
    const outcome = await backfill.controlFleet(ref, 'approve', { actor: opts.actor, reason: opts.reason });
    emit(opts, { ...outcome, approved: true }, (o) => `Fleet ${o.fleetId}: its next wave may start. Follow with: backfill status ${o.fleetId}`);
  });
}

export function command(): Command {
  return new Command('approve')
    .description("let a run held by its canary (validate.canary) expand to the rest of its scope, or a fleet's next wave start")
    .argument('<run>', "run id, or fleet id (fleet-…) to let the fleet's next wave start")
    .addOption(memberOption())
    .addOption(new Option('--reason <text>', 'why it may expand; kept in the audit record with who approved').makeOptionMandatory())
    .addOption(actorOption('who approves'))
    .addOption(databaseOption())
    .addOption(outputOption())
    .action(approve);
}
