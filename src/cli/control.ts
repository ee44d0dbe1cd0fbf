/**
 * `backfill pause | resume | cancel`: signals to the run workflow, refused with exit
 * code 2 when the run's state does not allow them. The workflow records each action,
 * with its actor and reason, in backfill.run_events.
 */
import type { Client } from '@temporalio/client';
import type pg from 'pg';
import type { RunRow } from '../ledger/runs';
import { ACTIVE_RUN_STATUSES } from '../shared/statuses';
import type { OperatorAction } from '../shared/types';
import { cancelSignal, pauseSignal, resumeSignal } from '../workflows/messages';
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
