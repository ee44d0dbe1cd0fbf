/**
 * createActivities: every activity the workflows call, bound to a worker's
 * dependencies. Workflows import only the *type* of this function's result.
 */
import type { ActivityDeps } from './deps';
import { afterActivities } from '../after-actions/after-activities';
import { findWorkerGap } from './database-workers';
import { onTheRunsDatabase } from './database-check';
import { gateActivities } from '../gates/gate-activities';
import { withHeartbeatTicker } from './heartbeat-ticker';
import { processPartitionActivity } from './process-partition';
import { registerRunActivity } from './register-run';
import { registerRevertActivity } from '../undo/register-revert';
import { refusedAtOnce } from './refused-at-once';
import { RunContextCache } from './run-context';
import { runControlActivities } from './run-control';
import { startPartitionActivity } from './start-partition';
import { reportPartitions } from './report-partitions';
import { splitTailActivity } from '../split-tail/split-activity';
import { notifyActivities } from '../notify/notify-activities';

export function createActivities(deps: ActivityDeps) {
  const contexts = new RunContextCache(deps.trust);
  return refusedAtOnce({
    // registration checks the database it is about to write the run into (register-run.ts)
    ...withHeartbeatTicker({ registerRun: registerRunActivity(deps), registerRevert: registerRevertActivity(deps) }),
    // Temporal only, on the common queue: whether a worker serves the run's database
    findWorkerGap,
    // Temporal only, a local activity of the run workflow: starts a partition's workflow
    startPartitionWorkflow: startPartitionActivity(deps.deployment),
    // Temporal only, a local activity of a group of partitions: their reports to the run, in one signal
    reportPartitions,
    ...onTheRunsDatabase(deps.pools, {
      // the partition heartbeats its own progress (its cursor), chunk by chunk
      processPartition: processPartitionActivity(deps, contexts),
      ...withHeartbeatTicker({
        splitTail: splitTailActivity(deps, contexts),
        ...runControlActivities(deps),
        ...gateActivities(deps, contexts),
        ...afterActivities(deps),
      }),
      ...notifyActivities(deps),
    }),
  });
}

export type Activities = ReturnType<typeof createActivities>;
export type { ActivityDeps } from './deps';
