/**
 * A run whose database loses its last worker stands still, and its workflow, on the common
 * queue, would show nothing of why. While the run is open, now and then, when no partition has
 * reported since the last look, it asks (findWorkerGap, on its own queue) whether any worker
 * serves its database queue, and shows the answer in the Web UI's current details: "no worker
 * serves FLEET_B since 12:03". Nothing fails; the work waits for a worker. Only runs routed to a
 * database queue (input.databaseQueue, which came with this code) run it: no patch needed.
 */
import { log, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import * as run from '../run-state';
import type { RunExecution } from './execution';

const LOOK_EVERY_MS = 60_000;

export async function watchDatabaseWorkers(x: RunExecution): Promise<void> {
  const queue = x.input.databaseQueue;
  if (!queue) return;
  // no taskQueue: the run's own (common) queue, whose workers are up whenever this code runs
  const temporal = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: { maximumAttempts: 3 } });
  let reportsSeen = x.reportsApplied;
  for (;;) {
    await sleep(LOOK_EVERY_MS);
    if (x.finishing) return;
    // a partition reported since the last look: a worker serves the database, no need to ask
    if (x.reportsApplied !== reportsSeen && !x.s.workerGap) {
      reportsSeen = x.reportsApplied;
      continue;
    }
    reportsSeen = x.reportsApplied;
    try {
      const gap = await temporal.findWorkerGap({ database: x.database, queue });
      x.s = run.workerGapSeen(x.s, gap ?? undefined);
      x.show();
    } catch (err) {
      // unawaited beside the phases: nothing thrown here may escape
      log.warn("could not ask Temporal whether a worker serves the run's database", { error: (err as Error).message });
    }
  }
}
