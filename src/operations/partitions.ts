/**
 * One run's partitions for `backfill partitions`: what needs attention first (failed, then
 * running, pending, cancelled, succeeded), each with its rows, attempts, where it stands and,
 * for a failure, the error and the key range it stopped at. Row values stay in the ledger:
 * bounds are described, never listed (a span's or a list partition's values are row data).
 */
import type pg from 'pg';
import { boundsText } from '../compiler/partition-predicate';
import { listPartitions } from '../ledger/partitions';
import { PartitionStatus } from '../domain/statuses';

export interface PartitionListing {
  partitionId: string;
  ordinal: number;
  status: PartitionStatus;
  bounds: string;
  /** The partition it was cut from while that one ran (limits.splitTail); null for the plan's own. */
  splitFrom: string | null;
  rowsRead: number;
  rowsWritten: number;
  rowsUnchanged: number;
  chunks: number;
  attempts: number;
  /** Why a running partition is not writing right now (guard, window, pause). */
  holding: string | null;
  error: string | null;
  /** The key range of the chunk a failed partition stopped at. */
  errorRange: string | null;
  startedAt: string | null;
  finishedAt: string | null;
}

/** The order an operator reads them in: what needs attention first. */
const ATTENTION_ORDER: readonly PartitionStatus[] = [
  PartitionStatus.Failed,
  PartitionStatus.Running,
  PartitionStatus.Pending,
  PartitionStatus.Cancelled,
  PartitionStatus.Succeeded,
];

export async function listRunPartitions(pool: pg.Pool, runId: string, filter: { status?: PartitionStatus[]; limit: number }): Promise<PartitionListing[]> {
  const rows = await listPartitions(pool, runId, { ...filter, statusOrder: ATTENTION_ORDER });
  return rows.map((p) => ({
    partitionId: p.partition_id,
    ordinal: p.ordinal,
    status: p.status,
    bounds: boundsText(p.bounds),
    splitFrom: p.split_from,
    rowsRead: Number(p.rows_read),
    rowsWritten: Number(p.rows_written),
    rowsUnchanged: Number(p.rows_unchanged),
    chunks: p.chunks,
    attempts: p.attempts,
    holding: p.status === PartitionStatus.Running ? p.hold_reason : null,
    error: p.last_error,
    errorRange: p.error_range,
    startedAt: p.started_at?.toISOString() ?? null,
    finishedAt: p.finished_at?.toISOString() ?? null,
  }));
}
