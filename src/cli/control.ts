/**
 * `backfill pause | resume | cancel`: signals to the run workflow, refused with exit
 * code 2 when the run's state does not allow them. The workflow records each action,
 * with its actor and reason, in backfill.run_events.
 */
import { WorkflowUpdateFailedError, type Client, type WorkflowHandle } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type pg from 'pg';
import { findActiveRun, getRun, type RunRow } from '../ledger/runs';
import { ACTIVE_RUN_STATUSES } from '../shared/statuses';
import { limitsChangeProblem } from '../shared/limits';
import type { Limits, LimitsChange, OperatorAction } from '../shared/types';
import { listPartitions } from '../ledger/partitions';
import type { RunWorkflowInput } from '../workflows/backfill-run';
import { BackfillName, BackfillRunId, BackfillStatus } from '../workflows/search-attributes';
import { cancelSignal, pauseSignal, resumeSignal, setLimitsUpdate } from '../workflows/messages';
import { UsageError } from './output';

export type ControlAction = 'pause' | 'resume' | 'cancel';

export async function sendControl(client: Client, run: RunRow, action: ControlAction, who: OperatorAction): Promise<void> {
  const ref = `${run.name}/${run.run_id}`;
  if (!ACTIVE_RUN_STATUSES.includes(run.status)) {
    throw new UsageError(`run ${ref} already finished (${run.status}); there is nothing to ${action}`);
  }
  if (action === 'resume' && !run.paused) throw new UsageError(`run ${ref} is not paused (${run.status}); nothing to resume`);
  if (action === 'pause' && run.paused) throw new UsageError(`run ${ref} is already paused; resume it with: backfill resume ${run.run_id}`);
  if (action === 'cancel' && run.cancel_requested) throw new UsageError(`run ${ref} is already being cancelled`);
  const signal = action === 'pause' ? pauseSignal : action === 'resume' ? resumeSignal : cancelSignal;
  await client.workflow.getHandle(run.workflow_id).signal(signal, who);
}

/** Waits until the ledger reflects the action, so the command returns when running partitions can see it. */
export async function waitForControl(pool: pg.Pool, runId: string, action: ControlAction, timeoutMs = 30_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { rows } = await pool.query<{ paused: boolean; cancel_requested: boolean; status: string }>(
      'SELECT paused, cancel_requested, status FROM backfill.runs WHERE run_id = $1',
      [runId],
    );
    const r = rows[0];
    if (action === 'pause' && r.paused) return true;
    if (action === 'resume' && !r.paused) return true;
    if (action === 'cancel' && r.cancel_requested) return true;
    await new Promise((res) => setTimeout(res, 200));
  }
  return false;
}

/**
 * Changes a running run's limits through the workflow's setLimits update. The change is
 * checked here and again by the workflow's validator; a rejected change leaves nothing in
 * history. Resolves with the limits in force once running partitions can see them.
 */
export async function setLimits(client: Client, run: RunRow, change: LimitsChange): Promise<Limits> {
  const ref = `${run.name}/${run.run_id}`;
  const problem = limitsChangeProblem(change);
  if (problem) throw new UsageError(`cannot change the limits of ${ref}: ${problem}`);
  if (!ACTIVE_RUN_STATUSES.includes(run.status)) throw new UsageError(`run ${ref} already finished (${run.status}); its limits can no longer change`);
  try {
    return await client.workflow.getHandle(run.workflow_id).executeUpdate(setLimitsUpdate, { args: [change] });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) throw new UsageError(`cannot change the limits of ${ref}: ${err.cause?.message ?? err.message}`);
    throw err;
  }
}

/**
 * retry-failed: a new attempt of a finished run that re-runs only its failed and cancelled
 * partitions, from their checkpoints. Succeeded partitions are not touched. The new attempt
 * runs under the same workflow id; the ledger records it (runs.attempt, a `retry` event).
 */
export async function retryFailed(
  client: Client,
  pool: pg.Pool,
  run: RunRow,
  who: OperatorAction,
  taskQueue: string,
): Promise<{ attempt: number; partitions: number; handle: WorkflowHandle }> {
  const ref = `${run.name}/${run.run_id}`;
  if (ACTIVE_RUN_STATUSES.includes(run.status)) {
    throw new UsageError(`run ${ref} is ${run.status}; retry-failed applies to a finished run (wait for it, or cancel it first)`);
  }
  if (run.status === 'succeeded') throw new UsageError(`run ${ref} succeeded; there is nothing to retry`);
  const partitions = await listPartitions(pool, run.run_id, { status: ['failed', 'cancelled'], limit: 100_000 });
  if (partitions.length === 0) throw new UsageError(`run ${ref} has no failed or cancelled partitions to retry`);
  const active = await findActiveRun(pool, run.name);
  if (active) throw new UsageError(`backfill ${run.name} already has an active run ${active.run_id} (${active.status}); wait for it, or cancel it first`);

  const attempt = run.attempt + 1;
  const input: RunWorkflowInput = {
    runId: run.run_id,
    spec: run.spec,
    specFile: run.spec_file ?? undefined,
    specHash: run.spec_hash,
    transform: {
      name: run.transform_name,
      version: run.transform_version,
      kind: run.transform_kind,
      codeHash: run.transform_hash,
      modulePath: run.module_path ?? undefined,
    },
    startedBy: run.started_by,
    retry: { attempt, actor: who.actor, reason: who.reason },
  };
  let handle: WorkflowHandle;
  try {
    handle = await client.workflow.start('backfillRunWorkflow', {
      workflowId: run.workflow_id,
      taskQueue,
      args: [input],
      typedSearchAttributes: [
        { key: BackfillName, value: run.name },
        { key: BackfillRunId, value: run.run_id },
        { key: BackfillStatus, value: 'running' },
      ],
      memo: { database: run.database_var },
      staticSummary: `${run.name}: retry ${attempt} of ${partitions.length} partitions — ${who.reason ?? run.reason}`.slice(0, 190),
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) throw new UsageError(`run ${ref} is already being retried`);
    throw err;
  }
  // return once the ledger shows the new attempt, so `status` right after is accurate
  const deadline = Date.now() + 60_000;
  while ((await getRun(pool, run.run_id))!.attempt < attempt) {
    if (Date.now() > deadline) throw new Error(`attempt ${attempt} of ${ref} did not start within 60s; is a worker running?`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { attempt, partitions: partitions.length, handle };
}
