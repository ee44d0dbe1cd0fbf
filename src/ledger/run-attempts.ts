/**
 * A run's life after it ends: the next attempt of a failed or cancelled run (retry-failed),
 * and the close of a run whose workflow ended without finishing it.
 */
import type pg from 'pg';
import { allowedFrom, PARTITION_TRANSITIONS, RETRYABLE_RUN_STATUSES, type RunStatus } from '../domain/statuses';
import { cancelPending } from './partitions';
import { transitionRun } from './runs';

export interface RetryStart {
  attempt: number;
  controlVersion: number;
  partitionsRequeued: number;
}

/**
 * Starts attempt `attempt` of a finished run: the run goes back to running with clear
 * control flags, and its failed and cancelled partitions back to pending, keeping their
 * cursors. Idempotent: once the run is at this attempt, it changes nothing and says so.
 * Call inside a transaction.
 */
export async function startRetry(client: pg.PoolClient, runId: string, attempt: number): Promise<RetryStart> {
  const { rows } = await client.query<{ status: RunStatus; attempt: number; control_version: string }>(
    'SELECT status, attempt, control_version FROM backfill.runs WHERE run_id = $1 FOR UPDATE',
    [runId],
  );
  const run = rows[0];
  if (!run) throw new Error(`run ${runId} is not in the ledger`);
  if (run.attempt >= attempt) return { attempt: run.attempt, controlVersion: Number(run.control_version), partitionsRequeued: 0 };
  if (!RETRYABLE_RUN_STATUSES.includes(run.status)) {
    throw new Error(`run ${runId} is ${run.status}; only a failed or cancelled run can be retried`);
  }
  await client.query(
    `UPDATE backfill.runs SET status = 'running', attempt = $2, paused = false, cancel_requested = false,
        finished_at = NULL, last_error = NULL, updated_at = now() WHERE run_id = $1`,
    [runId, attempt],
  );
  const requeued = await client.query(
    `UPDATE backfill.partitions SET status = 'pending', run_attempt = $2, finished_at = NULL, updated_at = now()
      WHERE run_id = $1 AND status = ANY($3)`,
    [runId, attempt, allowedFrom(PARTITION_TRANSITIONS, 'pending')],
  );
  return { attempt, controlVersion: Number(run.control_version), partitionsRequeued: requeued.rowCount ?? 0 };
}

/**
 * Closes the ledger's record of a run whose workflow ended without finishing it (a step the
 * database refused, a workflow terminated by hand): partitions still running are told to stop
 * at their next chunk (their workflows outlive the run's), those never started are cancelled,
 * and the run is failed with `lastError`. One transaction; a repeat changes nothing.
 */
export async function closeAbandonedRun(client: pg.PoolClient, runId: string, lastError: string): Promise<RunStatus> {
  await client.query(
    `UPDATE backfill.runs SET cancel_requested = true, control_version = control_version + 1, updated_at = now()
      WHERE run_id = $1 AND NOT cancel_requested`,
    [runId],
  );
  await cancelPending(client, runId);
  return transitionRun(client, runId, 'failed', lastError);
}
