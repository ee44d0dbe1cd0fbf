/**
 * backfillPartitionWorkflow: runs one partition through the processPartition activity and
 * reports the outcome to its run by workflow id (never run id), so the report reaches the
 * run's newest execution after continue-as-new. The outcome always reaches the run, also on
 * failure: from the activity itself when it could (`reported`), else from here. The run starts
 * it as a workflow of its own (as its child in executions recorded before that): its result
 * goes nowhere, the report is how the run learns of it.
 */
import { ActivityFailure, ApplicationFailure, getExternalWorkflowHandle, log, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { FailureType, NON_RETRYABLE_FAILURES } from '../domain/failures';
import type { PartitionReport, PartitionWorkflowInput } from '../domain/types';
import { partitionFinishedSignal, pauseSignal } from './messages';

export async function backfillPartitionWorkflow(input: PartitionWorkflowInput): Promise<PartitionReport> {
  const acts = proxyActivities<Activities>({
    // a partition may take hours; liveness comes from the heartbeat, not from this bound
    startToCloseTimeout: '24 hours',
    heartbeatTimeout: input.heartbeatTimeoutMs ?? 15_000,
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 100, nonRetryableErrorTypes: NON_RETRYABLE_FAILURES },
  });
  const ledger = proxyActivities<Activities>({
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '1s', maximumInterval: '30s', nonRetryableErrorTypes: NON_RETRYABLE_FAILURES },
  });

  let report: PartitionReport;
  let failure: unknown;
  try {
    for (;;) {
      // the summary names the partition in the Web UI's event history and pending-activity view
      report = await acts.processPartition.executeWithOptions({ summary: `partition ${input.partitionId}`, startToCloseTimeout: '24 hours' }, [
        { database: input.database, runId: input.runId, partitionId: input.partitionId },
      ]);
      if (!report.pauseRequest) break;
      // a guard held this partition too long: pause the whole run for an operator, then carry on (paused)
      await getExternalWorkflowHandle(input.runWorkflowId).signal(pauseSignal, report.pauseRequest);
    }
  } catch (err) {
    failure = err;
    const message = err instanceof ActivityFailure && err.cause ? err.cause.message : (err as Error).message;
    report = await ledger.recordPartitionFailure({ database: input.database, runId: input.runId, partitionId: input.partitionId, message });
  }
  try {
    // no patch needed: histories recorded before `reported` existed hold results without it, and replay this signal
    if (!report.reported) await getExternalWorkflowHandle(input.runWorkflowId).signal(partitionFinishedSignal, report);
  } catch (err) {
    // the run was terminated by hand; the ledger still holds this partition's outcome
    log.warn('could not report to the run workflow', { runWorkflowId: input.runWorkflowId, error: (err as Error).message });
  }
  if (failure) {
    throw ApplicationFailure.nonRetryable(report.error ?? `partition ${input.partitionId} failed: ${(failure as Error).message}`, FailureType.PartitionFailed);
  }
  return report;
}
