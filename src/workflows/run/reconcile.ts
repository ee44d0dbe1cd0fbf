/**
 * A partition workflow terminated (or timed out) by hand never reports, and the run would wait
 * for it forever. Now and then, ask Temporal about partitions that have been in flight for a
 * whole interval; those that closed without a report are recorded failed (retry-failed re-runs
 * them from their cursors) and reported here like any other outcome. Nothing thrown here escapes:
 * the loop is not awaited by the phases.
 */
import { log, sleep } from '@temporalio/workflow';
import type { PartitionReport } from '../../domain/types';
import type { RunExecution } from './execution';
import { applyReport } from './handlers';

const RECONCILE_EVERY_MS = 5 * 60_000;

export async function reconcileLoop(x: RunExecution): Promise<void> {
  let previous: string[] = [];
  for (;;) {
    await sleep(x.input.reconcileIntervalMs ?? RECONCILE_EVERY_MS);
    if (x.finishing) return;
    // a start still in progress is not a lost partition: only those seen in flight last time too
    const suspects = x.s.inFlight.filter((id) => previous.includes(id));
    previous = x.s.inFlight.slice();
    if (suspects.length === 0) continue;
    let reports: PartitionReport[];
    try {
      // a partition run by a group is asked about by its group's workflow
      const groups = Object.fromEntries(suspects.flatMap((id) => (x.s.groups?.[id] ? [[id, x.s.groups[id]]] : [])));
      const input = { database: x.database, runId: x.runId, name: x.spec.name, partitionIds: suspects };
      reports = await x.acts.reconcilePartitions(Object.keys(groups).length > 0 ? { ...input, groups } : input);
    } catch (err) {
      // this loop runs beside the phases, unawaited: a failure thrown from here would be an
      // unhandled rejection that fails every workflow task of the run, for good. A reconciliation
      // that could not run is tried again next interval; the partitions it looks for are still there.
      log.warn('could not look for partitions that closed without reporting; trying again next interval', { error: (err as Error).message });
      continue;
    }
    for (const report of reports) applyReport(x, report);
  }
}
