/**
 * backfillPartitionWorkflow: runs one partition through processPartition and reports the
 * outcome to its run by workflow id (never run id), so the report reaches the run's newest
 * execution after continue-as-new. The outcome always reaches the run, also on failure: from
 * processPartition itself when it could (`reported`), else from here. The run starts it as a
 * workflow of its own (as its child in executions recorded before that): its result goes
 * nowhere, the report is how the run learns of it.
 *
 * processPartition runs first as a local activity, in the workflow task that started the
 * partition: a small partition finishes there, and its workflow is one workflow task long. A
 * larger one is handed over in good order to the activity, which carries on from the
 * checkpoint with its heartbeat and retries (process-partition.ts says when). The run asks
 * for it in the partition's input (`localFirst`), so partitions started before ran, and replay,
 * the activity alone; a patch marker would have cost every partition a search attribute update.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  proxyActivities,
  proxyLocalActivities,
  type SignalDefinition,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { FailureType, NON_RETRYABLE_FAILURES } from '../domain/failures';
import type { PartitionGroupInput, PartitionReport, PartitionWorkflowInput } from '../domain/types';
import { partitionFinishedSignal, partitionsFinishedSignal, pauseSignal } from './messages';

/**
 * How long a partition runs as its workflow's local activity before its activity carries on:
 * long enough for the partitions of a run of small ones (a chunk or a few), short enough that
 * nobody misses the Web UI's progress of a long one (bench/RESULTS.md, "A partition's first
 * attempt as a local activity").
 */
export const LOCAL_BUDGET_MS = 2_000;

/**
 * How long a group's member waits for a local slot on its worker. The slots it waits for are
 * mostly its own group's, each held for a chunk or two; on its activity instead it would report
 * on its own and keep its group open for it. On a worker of four slots, 1,000 one-row partitions
 * at concurrency 20 took about 60 % of the production server's time with this wait against
 * 50 ms (bench/RESULTS.md, "A group's members wait for a local slot").
 */
const MEMBER_SLOT_WAIT = '1s';

/** What the local attempt left: the partition's report, or the activity to carry on (as the same attempt or a new one). */
type LocalOutcome = { report: PartitionReport } | { continues: boolean };
/** A local attempt's outcome, or the error it failed with for good (the activity's catch records it). */
type Settled = LocalOutcome | { failure: unknown };

export async function backfillPartitionWorkflow(input: PartitionWorkflowInput): Promise<PartitionReport> {
  return carryOn(input, input.localFirst ? await settledLocally(input, false) : { continues: false });
}

/**
 * Small partitions of a run of many, in one workflow (the run asks for it: run-state.ts
 * `groupSize`): their local attempts run at once, in the workflow task that started the group,
 * and those that finished there reach the run in one signal, so the run frees their slots
 * together and fills them with the next group. A member waits for the slowest local attempt
 * beside it, at most its local budget and a chunk: a local attempt hands over by then. Their
 * report goes from a local activity in the same task, so a group whose members all finished
 * closes there (report-partitions.ts says what that saves); groups started before that was so
 * send it as a command, and wait for its delivery in a task of their own. A member
 * handed over to its activity, or failed, carries on as a partition workflow would, reporting
 * on its own. A worker that dies under the local attempts is noticed when the group's workflow
 * task times out; the task runs again elsewhere, and members already finished return their
 * recorded outcome.
 */
export async function backfillPartitionGroupWorkflow(input: PartitionGroupInput): Promise<void> {
  const { members } = input;
  const settled = await Promise.all(members.map((member) => settledLocally(member, true)));
  const finished: PartitionReport[] = [];
  const carried: Promise<PartitionReport>[] = [];
  settled.forEach((outcome, i) => {
    if ('report' in outcome && !outcome.report.pauseRequest) finished.push(outcome.report);
    else carried.push(carryOn(members[i], outcome));
  });
  if (finished.length > 0) await reportFinished(input, finished);
  // each member's failure is in the ledger and reported; the group shows Failed, as a failed partition's workflow would
  const failures = (await Promise.allSettled(carried)).flatMap((e) => (e.status === 'rejected' ? [(e.reason as Error).message] : []));
  if (failures.length > 0)
    throw ApplicationFailure.nonRetryable(`${failures.length} of ${members.length} partitions failed: ${failures.join('; ')}`, FailureType.PartitionFailed);
}

/** The finished members' reports, in one signal: from a local activity where the run asked for it, else (or when that failed) as a command. */
async function reportFinished(group: PartitionGroupInput, reports: PartitionReport[]): Promise<void> {
  const runWorkflowId = group.members[0].runWorkflowId;
  if (group.reportsLocally && (await reportedLocally(runWorkflowId, reports))) return;
  await tellRun(runWorkflowId, partitionsFinishedSignal, reports);
}

/** Sent from this workflow task (report-partitions.ts): a group whose members all finished closes in the task that started it. */
async function reportedLocally(runWorkflowId: string, reports: PartitionReport[]): Promise<boolean> {
  const local = proxyLocalActivities<Activities>({
    // one signal with its own deadline (temporal-call-deadline.ts); a failure falls back to the command
    startToCloseTimeout: '30s',
    retry: { maximumAttempts: 1 },
    summary: `${reports.length} partition reports`,
  });
  try {
    return await local.reportPartitions({ runWorkflowId, reports });
  } catch (err) {
    if (isCancellation(err)) throw err;
    return false;
  }
}

/** Tells the run by its workflow id; a run terminated by hand cannot hear it, and the ledger still holds the outcome. */
async function tellRun<Args extends unknown[]>(runWorkflowId: string, signal: SignalDefinition<Args>, ...args: Args): Promise<void> {
  try {
    await getExternalWorkflowHandle(runWorkflowId).signal(signal, ...args);
  } catch (err) {
    log.warn('could not report to the run workflow', { runWorkflowId, error: (err as Error).message });
  }
}

/** `inGroup`: a group's member, which waits longer for a local slot and leaves its report to the group. */
async function settledLocally(input: PartitionWorkflowInput, inGroup: boolean): Promise<Settled> {
  try {
    return await locally(input, inGroup);
  } catch (failure) {
    return { failure };
  }
}

/** The partition from its local attempt's outcome on: its activity if handed over, its failure recorded, its report sent. */
async function carryOn(input: PartitionWorkflowInput, local: Settled): Promise<PartitionReport> {
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
  const partition = { database: input.database, runId: input.runId, partitionId: input.partitionId };

  let report: PartitionReport;
  let failure: unknown;
  try {
    if ('failure' in local) throw local.failure;
    let continues = 'continues' in local && local.continues;
    report = 'report' in local ? local.report : await activity(continues);
    while (report.pauseRequest) {
      // a guard held this partition too long: pause the whole run for an operator, then carry on (paused)
      await getExternalWorkflowHandle(input.runWorkflowId).signal(pauseSignal, report.pauseRequest);
      continues = false;
      report = await activity(continues);
    }
  } catch (err) {
    failure = err;
    const message = err instanceof ActivityFailure && err.cause ? err.cause.message : (err as Error).message;
    report = await ledger.recordPartitionFailure({ ...partition, message });
  }
  // no patch needed: histories recorded before `reported` existed hold results without it, and replay this signal
  if (!report.reported) await tellRun(input.runWorkflowId, partitionFinishedSignal, report);
  if (failure) {
    throw ApplicationFailure.nonRetryable(report.error ?? `partition ${input.partitionId} failed: ${(failure as Error).message}`, FailureType.PartitionFailed);
  }
  return report;

  function activity(continues: boolean): Promise<PartitionReport> {
    // the summary names the partition in the Web UI's event history and pending-activity view
    return acts.processPartition.executeWithOptions({ summary: `partition ${input.partitionId}`, startToCloseTimeout: '24 hours' }, [
      { ...partition, ...(continues ? { continues } : {}) },
    ]);
  }
}

/**
 * The local attempt. It is not retried: a refusal no attempt can change fails the partition as
 * the activity's would; anything else (a lost connection, a worker on another database, no local
 * slot free on this worker) is the activity's to retry, as a new attempt.
 */
async function locally(input: PartitionWorkflowInput, inGroup: boolean): Promise<LocalOutcome> {
  const local = proxyLocalActivities<Activities>({
    // a local attempt ends at its budget's first chunk boundary; this bounds one stuck chunk
    startToCloseTimeout: '1 hour',
    // a worker whose local slots are all taken does not queue a single partition: it goes to its
    // activity, which any worker of the database may take. A group's member waits a little longer
    scheduleToStartTimeout: inGroup ? MEMBER_SLOT_WAIT : '50ms',
    retry: { maximumAttempts: 1 },
    summary: `partition ${input.partitionId}`,
  });
  try {
    const report = await local.processPartition({
      database: input.database,
      runId: input.runId,
      partitionId: input.partitionId,
      localBudgetMs: input.localBudgetMs ?? LOCAL_BUDGET_MS,
      ...(inGroup ? { deferReport: true } : {}),
    });
    return report.handedOver ? { continues: true } : { report };
  } catch (err) {
    if (isCancellation(err) || failsEveryTime(err)) throw err;
    return { continues: false };
  }
}

/** A local activity's failure arrives as the activity's own error, not wrapped as an activity task's would be. */
function failsEveryTime(err: unknown): boolean {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof ApplicationFailure && (cause.nonRetryable || NON_RETRYABLE_FAILURES.includes(cause.type ?? ''));
}
