/**
 * Starting the run workflow, for a first attempt (start) and for a retry alike: one place
 * that sets its id, search attributes, memo and Web UI texts, and one place that waits for
 * its result.
 */
import {
  ApplicationFailure,
  CancelledFailure,
  WorkflowFailedError,
  type Client,
  type WorkflowHandle,
  type WorkflowHandleWithFirstExecutionRunId,
} from '@temporalio/client';
import { FailureType } from '../domain/failures';
import { databaseTaskQueue, runWorkflowId } from '../domain/ids';
import { requireDatabaseWorker } from './database-workers';
import type { RunStatus } from '../domain/statuses';
import type { RunResult, RunWorkflowInput } from '../workflows/backfill-run';
import { BackfillName, BackfillRunId, BackfillStatus } from '../workflows/search-attributes';

export interface RunWorkflowDisplay {
  /** The status the Web UI lists before the workflow publishes its own. */
  status: RunStatus;
  /** One line in the Web UI's list; cut to 200 bytes. */
  summary: string;
  /** Markdown for the Web UI's User Metadata. */
  details?: string;
}

/**
 * Starts the run workflow on `taskQueue` (the common queue). A run that knows its database's
 * identity is routed: its partitions and activities go to that database's queue, and it is
 * refused (NoWorkerError, nothing started) when no worker serves that queue.
 */
export async function startRunWorkflow(
  client: Client,
  taskQueue: string,
  given: RunWorkflowInput,
  display: RunWorkflowDisplay,
): Promise<WorkflowHandleWithFirstExecutionRunId> {
  const databaseQueue = given.databaseIdentity ? databaseTaskQueue(taskQueue, given.spec.database, given.databaseIdentity) : undefined;
  if (databaseQueue) await requireDatabaseWorker(client.workflow, databaseQueue, given.spec.database);
  const input: RunWorkflowInput = databaseQueue ? { ...given, databaseQueue } : given;
  return client.workflow.start('backfillRunWorkflow', {
    workflowId: runWorkflowId(input.spec.name, input.runId),
    taskQueue,
    args: [input],
    typedSearchAttributes: [
      { key: BackfillName, value: input.spec.name },
      { key: BackfillRunId, value: input.runId },
      { key: BackfillStatus, value: display.status },
    ],
    // the variable name only, never the URL: lets tools find the run's ledger
    memo: { database: input.spec.database, ...(databaseQueue ? { databaseQueue } : {}) },
    staticSummary: oneLine(display.summary),
    ...(display.details ? { staticDetails: display.details } : {}),
  });
}

/**
 * The run's result, succeeded or not: a failed run fails its execution (so Temporal shows it
 * Failed) and carries the result in the failure's details; a cancelled one ends Canceled with
 * the result in its memo.
 */
export async function waitForResult(handle: WorkflowHandle): Promise<RunResult> {
  try {
    return (await handle.result()) as RunResult;
  } catch (err) {
    const result = failedRunResult(err) ?? (isCanceled(err) ? ((await handle.describe()).memo?.result as RunResult | undefined) : undefined);
    if (result) return result;
    throw err;
  }
}

function isCanceled(err: unknown): boolean {
  return err instanceof WorkflowFailedError && err.cause instanceof CancelledFailure;
}

/**
 * Why a run's execution failed: the failure of the activity that failed it (an
 * ApplicationFailure with its type and message), or the workflow's own failure.
 */
export function workflowFailureCause(err: unknown): (Error & { type?: string }) | undefined {
  if (!(err instanceof WorkflowFailedError)) return undefined;
  return (err.cause?.cause ?? err.cause) as (Error & { type?: string }) | undefined;
}

/** The RunResult a failed run's execution carries, if `err` is that failure. */
function failedRunResult(err: unknown): RunResult | undefined {
  if (!(err instanceof WorkflowFailedError)) return undefined;
  const cause = err.cause;
  if (!(cause instanceof ApplicationFailure) || cause.type !== FailureType.RunFailed) return undefined;
  return cause.details?.[0] as RunResult | undefined;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  return Buffer.byteLength(flat) <= 200
    ? flat
    : `${Buffer.from(flat)
        .subarray(0, 196)
        .toString()
        .replace(/\uFFFD+$/, '')}…`;
}
