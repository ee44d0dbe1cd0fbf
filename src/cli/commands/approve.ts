/** `backfill approve`: a person lets a run held by its canary (or a ramp stage) expand; kept with who and why. What the canary checks: src/gates. */
import { Command, Option } from 'commander';
import { defaultActor } from '../../operations/actor';
import { approveRun } from '../../operations/control';
import { runLabel } from '../../domain/labels';
import { actorOption, databaseOption, outputOption, type ActorOptions } from '../options';
import { emit } from '../output';
import { withLedgerAndTemporal } from '../with-backfill';

async function approve(ref: string, opts: ActorOptions): Promise<void> {
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

export function command(): Command {
  return new Command('approve')
    .description('let a run held by its canary (validate.canary) expand to the rest of its scope')
    .argument('<run>', 'run id or workflow id')
    .addOption(new Option('--reason <text>', 'why it may expand; kept in the audit record with who approved').makeOptionMandatory())
    .addOption(actorOption('who approves'))
    .addOption(databaseOption())
    .addOption(outputOption())
    .action(approve);
}
