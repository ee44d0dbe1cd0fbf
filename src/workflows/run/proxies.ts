/**
 * The two ways the run calls activities: short ledger steps retried until they succeed, and
 * checks that read whole partitions, kept alive by heartbeat and given up after ten attempts —
 * a check that keeps failing is a failed gate that says why, not a run that waits forever.
 */
import { ActivityFailure, ApplicationFailure, patched, proxyActivities, proxyLocalActivities, type LocalActivityOptions } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { PartitionStart, PartitionStarted } from '../../activities/start-partition';
import { FailureType, NON_RETRYABLE_FAILURES } from '../../domain/failures';
import type { GateVerdictLike } from '../run-state';

/**
 * How soon a worker that died under one of the run's activities is noticed (they heartbeat while
 * they work: activities/heartbeat-ticker.ts). Without it a ledger step lost with its worker held
 * the run for the step's whole start-to-close bound.
 */
const RUN_HEARTBEAT_TIMEOUT = '30 seconds';

/** `taskQueue`: the run's database queue (absent: the workflow's own, as runs started before routing). */
export function ledgerActivities(taskQueue?: string) {
  return proxyActivities<Activities>({
    ...(taskQueue ? { taskQueue } : {}),
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: RUN_HEARTBEAT_TIMEOUT,
    retry: { initialInterval: '1s', maximumInterval: '1 minute', nonRetryableErrorTypes: NON_RETRYABLE_FAILURES },
  });
}

/** The run's last ledger step (finalizeRun: the scope count, bounded to 60 s, and one transaction). */
export function finishActivities(taskQueue?: string) {
  return proxyActivities<Activities>({
    ...(taskQueue ? { taskQueue } : {}),
    startToCloseTimeout: '3 minutes',
    heartbeatTimeout: RUN_HEARTBEAT_TIMEOUT,
    retry: { initialInterval: '1s', maximumInterval: '1 minute', nonRetryableErrorTypes: NON_RETRYABLE_FAILURES },
  });
}

/**
 * Starts a partition's workflow from the run's own worker, as a local activity (a marker in the
 * workflow task that asked for it, no task of its own; activities/start-partition.ts). A start
 * the server refuses for a while is retried, as a child's start command would be.
 */
export function startPartitionWorkflow(start: PartitionStart): Promise<PartitionStarted> {
  const options: LocalActivityOptions = {
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '1s', maximumInterval: '1 minute', nonRetryableErrorTypes: NON_RETRYABLE_FAILURES },
    summary: `start partition ${start.input.partitionId}`,
  };
  return proxyLocalActivities<Activities>(options).startPartitionWorkflow(start);
}

export function checkActivities(taskQueue?: string) {
  return proxyActivities<Activities>({
    ...(taskQueue ? { taskQueue } : {}),
    startToCloseTimeout: '24 hours',
    heartbeatTimeout: RUN_HEARTBEAT_TIMEOUT,
    retry: { initialInterval: '1s', maximumInterval: '1 minute', maximumAttempts: 10, nonRetryableErrorTypes: NON_RETRYABLE_FAILURES },
  });
}

/**
 * A check that could not complete is a failed gate, with the reason. One whose attempts all
 * landed on workers connected to another database never ran at all: it is asked again (the
 * attempts' backoff paces it), as every other activity of the run retries until a worker
 * connected to the run's database takes it. Executions recorded before 'recheck-misrouted'
 * judged it failed.
 */
export async function judged(what: string, check: () => Promise<GateVerdictLike>): Promise<GateVerdictLike> {
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (misrouted(err) && patched('recheck-misrouted')) continue;
      const cause = err instanceof ActivityFailure && err.cause ? err.cause.message : (err as Error).message;
      return { passed: false, failures: [`${what} could not complete: ${cause}`], failureCount: 1, partitionsChecked: 0, incomplete: true };
    }
  }
}

function misrouted(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === FailureType.WrongDatabase;
}
