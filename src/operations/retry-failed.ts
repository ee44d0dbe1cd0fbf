/**
 * retry-failed: a new attempt of a finished run that re-runs only its failed and cancelled
 * partitions, from their checkpoints. Succeeded partitions are not touched. The attempt
 * runs under the same workflow id; the ledger records it (runs.attempt, a `retry` event).
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type pg from 'pg';
import { listPartitions } from '../ledger/partitions';
import { findActiveRun, frozenTransformOf, getRun, type RunRow } from '../ledger/runs';
import { alreadyActiveMessage, runLabel } from '../domain/labels';
import { ACTIVE_RUN_STATUSES } from '../domain/statuses';
import type { OperatorAction } from '../domain/types';
import { pollUntil } from '../util/poll-until';
import type { RunWorkflowInput } from '../workflows/backfill-run';
import { UsageError } from '../domain/usage-error';
import { startRunWorkflow } from './run-workflow';

export interface RetryStarted {
  attempt: number;
  partitions: number;
  handle: WorkflowHandle;
}

export async function retryFailed(
  { client, pool, taskQueue }: { client: Client; pool: pg.Pool; taskQueue: string },
  run: RunRow,
  who: OperatorAction,
): Promise<RetryStarted> {
  const ref = runLabel(run.name, run.run_id);
  if (ACTIVE_RUN_STATUSES.includes(run.status)) {
    throw new UsageError(`run ${ref} is ${run.status}; retry-failed applies to a finished run (wait for it, or cancel it first)`);
  }
  if (run.status === 'succeeded') throw new UsageError(`run ${ref} succeeded; there is nothing to retry`);
  const partitions = await listPartitions(pool, run.run_id, { status: ['failed', 'cancelled'], limit: 100_000 });
  if (partitions.length === 0) throw new UsageError(`run ${ref} has no failed or cancelled partitions to retry`);
  const active = await findActiveRun(pool, run.name);
  if (active)
    throw new UsageError(
      alreadyActiveMessage(run.name, { runId: active.run_id, status: active.status, startedBy: active.started_by, createdAt: active.created_at }),
    );

  const attempt = run.attempt + 1;
  const input: RunWorkflowInput = {
    kind: 'retry',
    runId: run.run_id,
    spec: run.spec,
    specFile: run.spec_file ?? undefined,
    specHash: run.spec_hash,
    transform: frozenTransformOf(run),
    startedBy: run.started_by,
    ...(run.database_identity ? { databaseIdentity: run.database_identity } : {}),
    attempt,
    actor: who.actor,
    reason: who.reason,
    // a revert's chunks restore images: its retry skips the backfill's whole-run check as it did
    ...(run.reverts ? { reverts: run.reverts } : {}),
  };
  let handle: WorkflowHandle;
  try {
    handle = await startRunWorkflow(client, taskQueue, input, {
      status: 'running',
      summary: `${run.name}: retry ${attempt} of ${partitions.length} partitions — ${who.reason ?? run.reason}`,
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) throw new UsageError(`run ${ref} is already being retried`);
    throw err;
  }
  // return once the ledger shows the new attempt, so `status` right after is accurate
  const started = await pollUntil(async () => ((await getRun(pool, run.run_id))!.attempt >= attempt ? true : undefined), {
    timeoutMs: 60_000,
    intervalMs: 100,
  });
  if (!started) throw new Error(`attempt ${attempt} of ${ref} did not start within 60s; is a worker running?`);
  return { attempt, partitions: partitions.length, handle };
}
