/**
 * What a newly registered run (a backfill or a revert) hands its workflow: its size in
 * partitions and rows, the first page of its plan, nothing done yet, and the registering worker's
 * BACKFILL_NOTIFY.
 */
import type pg from 'pg';
import { nextUnfinished } from '../ledger/partitions';
import { plannedRows } from '../ledger/runs';
import { withWorkerNotify } from '../notify/worker-default';
import type { NotifyTarget } from '../specs/notify-schema';
import type { RunOpening } from '../workflows/run-state';

export async function firstOpening(
  pool: pg.Pool,
  runId: string,
  partitionsTotal: number,
  pageSize: number,
  notifyDefault?: NotifyTarget[],
): Promise<RunOpening> {
  const rowsPlanned = await plannedRows(pool, runId);
  return {
    partitionsTotal,
    ...(rowsPlanned !== undefined ? { rowsPlanned } : {}),
    firstPage: await nextUnfinished(pool, runId, 0, pageSize),
    succeeded: 0,
    controlVersion: 0,
    ...withWorkerNotify(notifyDefault),
  };
}
