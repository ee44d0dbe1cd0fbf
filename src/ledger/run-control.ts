/**
 * A run's control flags in backfill.runs — paused, cancel_requested, limits — as the run
 * workflow decides them and running partitions read them before every chunk.
 */
import type { RunStatus } from '../domain/statuses';
import type { Limits } from '../domain/types';
import type { Queryable } from './runs';

/**
 * Writes the control flags the workflow decided. `version` only grows, so an older
 * write that arrives late (a retried activity) cannot undo a newer decision.
 */
export async function writeRunControl(
  db: Queryable,
  runId: string,
  control: { paused: boolean; cancelRequested: boolean; limits: Limits; version: number },
): Promise<boolean> {
  const res = await db.query(
    `UPDATE backfill.runs SET paused = $2, cancel_requested = $3, limits = $4, control_version = $5, updated_at = now()
      WHERE run_id = $1 AND control_version < $5`,
    [runId, control.paused, control.cancelRequested, JSON.stringify(control.limits), control.version],
  );
  return res.rowCount === 1;
}

export interface RunControl {
  status: RunStatus;
  paused: boolean;
  cancelRequested: boolean;
  limits: Limits;
  /** The run's control version these facts are from (grows with every pause, resume, cancel and limits change). */
  version: number;
}

export async function readRunControl(db: Queryable, runId: string): Promise<RunControl> {
  const { rows } = await db.query<{ status: RunStatus; paused: boolean; cancel_requested: boolean; limits: Limits; control_version: string }>(
    'SELECT status, paused, cancel_requested, limits, control_version FROM backfill.runs WHERE run_id = $1',
    [runId],
  );
  if (!rows[0]) throw new Error(`run ${runId} is not in the ledger`);
  return {
    status: rows[0].status,
    paused: rows[0].paused,
    cancelRequested: rows[0].cancel_requested,
    limits: rows[0].limits,
    version: Number(rows[0].control_version),
  };
}
