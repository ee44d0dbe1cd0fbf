/**
 * Reads of backfill.partitions for the checks and the records made after the writes: canary
 * picks, stage and final gates, completeness, rows outside the plan, verify, the report. All
 * read-only; the writes to a partition row (cursor, counts, status) stay in partitions.ts,
 * beside the lock that orders them.
 */
import type pg from 'pg';
import type { PartitionStatus } from '../domain/statuses';
import type { PartitionBounds } from '../domain/types';
import type { LedgerPartition } from './completeness';

type Queryable = pg.Pool | pg.PoolClient;

/** The partitions at these places in the plan (a canary's picks). */
export async function partitionsAtOrdinals(db: Queryable, runId: string, ordinals: number[]): Promise<{ id: string; ordinal: number }[]> {
  const { rows } = await db.query<{ partition_id: string; ordinal: number }>(
    'SELECT partition_id, ordinal FROM backfill.partitions WHERE run_id = $1 AND ordinal = ANY($2) ORDER BY ordinal',
    [runId, ordinals],
  );
  return rows.map((r) => ({ id: r.partition_id, ordinal: r.ordinal }));
}

/** Partitions with ordinals in [from, to) that did not succeed, the first `limit` of them (a ramp stage's failures). */
export async function unsucceededBetween(
  db: Queryable,
  runId: string,
  from: number,
  to: number,
  limit: number,
): Promise<{ partition_id: string; status: PartitionStatus }[]> {
  const { rows } = await db.query<{ partition_id: string; status: PartitionStatus }>(
    "SELECT partition_id, status FROM backfill.partitions WHERE run_id = $1 AND ordinal >= $2 AND ordinal < $3 AND status <> 'succeeded' ORDER BY ordinal LIMIT $4",
    [runId, from, to, limit],
  );
  return rows;
}

export interface PartitionOutcome {
  partition_id: string;
  bounds: PartitionBounds;
  status: PartitionStatus;
  last_error: string | null;
}

/** These partitions' bounds and outcomes, in plan order (a canary's verdict). */
export async function partitionOutcomes(db: Queryable, runId: string, partitionIds: string[]): Promise<PartitionOutcome[]> {
  const { rows } = await db.query<PartitionOutcome>(
    'SELECT partition_id, bounds, status, last_error FROM backfill.partitions WHERE run_id = $1 AND partition_id = ANY($2) ORDER BY ordinal',
    [runId, partitionIds],
  );
  return rows;
}

/** Up to `limit` succeeded partitions from ordinal `from` on, below `to` when given: a gate's next page to check. */
export async function succeededFrom(
  db: Queryable,
  runId: string,
  from: number,
  to: number | null,
  limit: number,
): Promise<{ partition_id: string; bounds: PartitionBounds; ordinal: number }[]> {
  const { rows } = await db.query<{ partition_id: string; bounds: PartitionBounds; ordinal: number }>(
    `SELECT partition_id, bounds, ordinal FROM backfill.partitions
      WHERE run_id = $1 AND ordinal >= $2 AND ($3::int IS NULL OR ordinal < $3) AND status = 'succeeded' ORDER BY ordinal LIMIT $4`,
    [runId, from, to, limit],
  );
  return rows;
}

/** Every partition as completeness sees it: place, bounds, status, completions. */
export async function completenessRows(db: Queryable, runId: string): Promise<LedgerPartition[]> {
  const { rows } = await db.query<LedgerPartition>(
    'SELECT partition_id, ordinal, bounds, status, completions, split_from FROM backfill.partitions WHERE run_id = $1',
    [runId],
  );
  return rows;
}

/** Every planned partition's bounds, in plan order: the partitions split from them while running cover no more. */
export async function plannedBounds(db: Queryable, runId: string): Promise<PartitionBounds[]> {
  const { rows } = await db.query<{ bounds: PartitionBounds }>(
    'SELECT bounds FROM backfill.partitions WHERE run_id = $1 AND split_from IS NULL ORDER BY ordinal',
    [runId],
  );
  return rows.map((r) => r.bounds);
}

/** The partitions `verify` recomputes: all, or the one named. */
export async function partitionsToVerify(
  db: Queryable,
  runId: string,
  partitionId: string | null,
): Promise<{ partition_id: string; bounds: PartitionBounds; status: PartitionStatus }[]> {
  const { rows } = await db.query<{ partition_id: string; bounds: PartitionBounds; status: PartitionStatus }>(
    'SELECT partition_id, bounds, status FROM backfill.partitions WHERE run_id = $1 AND ($2::text IS NULL OR partition_id = $2) ORDER BY ordinal',
    [runId, partitionId],
  );
  return rows;
}

export interface PartitionCounters {
  partition_id: string;
  status: PartitionStatus;
  rows_read: string;
  rows_written: string;
  rows_unchanged: string;
  rows_skipped: string;
  chunks: number;
  attempts: number;
}

/** Every partition's counters, in plan order (the report). */
export async function partitionCounters(db: Queryable, runId: string): Promise<PartitionCounters[]> {
  const { rows } = await db.query<PartitionCounters>(
    `SELECT partition_id, status, rows_read, rows_written, rows_unchanged, rows_skipped, chunks, attempts
       FROM backfill.partitions WHERE run_id = $1 ORDER BY ordinal`,
    [runId],
  );
  return rows;
}
