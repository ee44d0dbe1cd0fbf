/** `backfill revert`: put back what a run wrote, from its before-images, where nobody changed it since (docs/undo.md; the code: src/undo). */
import { Command, Option } from 'commander';
import { statusReportFor } from '../../operations/status';
import { followToEnd } from '../follow';
import { actorOption, databaseOption, outputOption, type ActorOptions } from '../options';
import { emit, format, UsageError } from '../output';
import { withBackfill } from '../with-backfill';
import { confirm } from '../confirm';
import { renderRevertPreview } from '../render/revert-preview';
import { runLabel } from '../../domain/labels';
import { isFleetRef } from '../../fleet/start-fleet';

async function revert(
  ref: string,
  opts: ActorOptions & { wait?: boolean; partition?: string[]; runId?: string; dryRun?: boolean; yes?: boolean },
): Promise<void> {
  if (!opts.dryRun && !opts.reason?.trim())
    throw new UsageError("required option '--reason <text>' not specified: why this run is undone is kept in the audit record (a --dry-run needs none)");
  if (isFleetRef(ref)) return revertAFleet(ref, opts);
  await withBackfill(opts.database, async (backfill) => {
    const original = await backfill.findRun(ref);
    if (opts.dryRun) return emit(opts, await backfill.previewRevert(original.run_id, { partitions: opts.partition }), renderRevertPreview);
    const label = runLabel(original.name, original.run_id);
    const target = original.target_relation ?? original.spec.target.table;
    const started = await backfill.revert(original.run_id, {
      reason: opts.reason!,
      actor: opts.actor,
      partitions: opts.partition,
      runId: opts.runId,
      confirm: ({ partitions }) =>
        confirm(
          `revert of ${label}`,
          `Revert ${label} on ${target}: put back every row it changed in ${partitions} partition(s) that nobody changed since (backfill revert --dry-run counts them)?`,
          opts,
        ),
    });
    const info = { runId: started.runId, reverts: original.run_id, name: started.name, partitions: started.partitions, webUi: started.webUi };
    if (!opts.wait) {
      emit(
        opts,
        info,
        (i) =>
          `Reverting ${original.name}/${i.reverts} as ${i.name}/${i.runId}: ${i.partitions} partitions\n  Web UI:   ${i.webUi}\n  follow:   backfill status ${i.runId}`,
      );
      return;
    }
    if (format(opts) === 'text')
      process.stderr.write(
        `Reverting ${original.name}/${original.run_id} as ${info.name}/${info.runId}: ${info.partitions} partitions\nWeb UI: ${info.webUi}\n`,
      );
    await followToEnd(backfill, started.runId, opts);
    // every row restored, or the operator has rows to look at
    const conflicts = (await statusReportFor(backfill.pool, started.runId)).revert?.conflicts ?? { total: 0 };
    if (conflicts.total > 0) {
      process.exitCode = 1;
      if (format(opts) === 'text') {
        process.stderr.write(
          `${conflicts.total} row(s) were changed after ${original.run_id} wrote them and were left as they are (conflicts); their keys: backfill status ${started.runId}\n`,
        );
      }
    }
  });
}

/** A fleet: every member's run undone, each exactly and in its own database; conflicts per member. */
async function revertAFleet(
  ref: string,
  opts: ActorOptions & { wait?: boolean; partition?: string[]; runId?: string; dryRun?: boolean; yes?: boolean },
): Promise<void> {
  if (opts.dryRun || opts.partition || opts.runId)
    throw new UsageError(
      '--dry-run, --partition and --run-id take one run: revert a fleet whole, or one member with: backfill revert <member run> --database <member>',
    );
  await withBackfill('DATABASE_URL', async (backfill) => {
    const started = await backfill.revertFleet(ref, {
      reason: opts.reason!,
      actor: opts.actor,
      confirm: ({ members }) =>
        confirm(
          `revert of fleet ${ref}`,
          `Revert fleet ${ref}: ${members.map((m) => `${m.variable} (${m.partitions} partitions)`).join(', ')} — put back every row each run changed that nobody changed since?`,
          opts,
        ),
    });
    const { results, ...info } = started;
    const text = (i: typeof info) =>
      [
        `Reverting fleet ${i.fleetId}:`,
        ...i.members.map((m) => `  ${m.variable}: run ${m.reverts} by revert run ${m.revertRunId}, ${m.partitions} partitions`),
      ].join('\n');
    if (!opts.wait) return emit(opts, info, text);
    if (format(opts) === 'text') process.stderr.write(`${text(info)}\n`);
    const done = await results();
    emit(opts, { ...info, members: done }, () =>
      done
        .map(
          (m) =>
            `${m.variable}: revert ${m.revertRunId} ${m.result.status}, ${m.result.rowsWritten} rows put back` +
            (m.conflicts > 0 ? `, ${m.conflicts} conflict(s) left alone: backfill status ${m.revertRunId} --database ${m.variable}` : ''),
        )
        .join('\n'),
    );
    if (done.some((m) => m.result.status !== 'succeeded' || m.conflicts > 0)) process.exitCode = 1;
  });
}

export function command(): Command {
  return new Command('revert')
    .description(
      'undo a run: put back every row it changed, from its before-images, where nobody changed the row since (those are listed as conflicts, never overwritten)',
    )
    .argument('<run>', 'run id or workflow id of the run to undo, or a fleet id (fleet-…): every member')
    .addOption(new Option('--reason <text>', 'why it is undone; kept in the audit record of both runs (required, but with --dry-run)'))
    .addOption(new Option('--partition <id...>', 'only these partitions of the run (default: every one it wrote)'))
    .option('--dry-run', 'show per partition the rows it would put back and the rows it would leave (changed since); write nothing')
    .option('--yes', 'do not ask for confirmation (needed when standard input is not a terminal)')
    .option('--wait', 'follow the revert to its end; exit 0 only when every row was restored')
    .option('--run-id <id>', "the revert run's id (default: a new one)")
    .addOption(actorOption())
    .addOption(databaseOption())
    .addOption(outputOption())
    .action(revert);
}
