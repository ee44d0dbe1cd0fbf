/**
 * `backfill pause | resume | cancel`: signals to the run workflow, refused with exit
 * code 2 when the run's state does not allow them. The workflow records each action,
 * with its actor and reason, in backfill.run_events.
 */
import { WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type pg from 'pg';
import type { RunRow } from '../ledger/runs';
import { ACTIVE_RUN_STATUSES } from '../shared/statuses';
import { limitsChangeProblem } from '../shared/limits';
import type { Limits, LimitsChange, OperatorAction } from '../shared/types';
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
