/**
 * A partition workflow terminated (or timed out) by hand never reports, and the run would wait
 * for it forever. Now and then, ask Temporal about partitions that have been in flight for a
 * whole interval; those that closed without a report are recorded failed (retry-failed re-runs
 * them from their cursors) and reported here like any other outcome.
 */
import { sleep } from '@temporalio/workflow';
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
    const reports = await x.acts.reconcilePartitions({ database: x.database, runId: x.runId, name: x.spec.name, partitionIds: suspects });
    for (const report of reports) applyReport(x, report);
  }
}
