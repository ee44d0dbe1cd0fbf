/**
 * backfill.partitions: one row per planned partition, holding its cursor and counts.
 * The processPartition activity locks its row at the start of every chunk transaction
 * (SELECT … FOR UPDATE) and advances the cursor in that same transaction, so two
 * attempts of one partition — a zombie and its retry — serialize on the row and a
 * chunk can never be applied or counted twice.
 */
import type pg from 'pg';
import { allowedFrom, FINISHED_PARTITION_STATUSES, PARTITION_TRANSITIONS, type PartitionStatus } from '../domain/statuses';
import type { PartitionBounds, PartitionReport, PlannedPartition, RowCounts } from '../domain/types';

type Queryable = pg.Pool | pg.PoolClient;

export interface PartitionRow {
  run_id: string;
  partition_id: string;
  ordinal: number;
  bounds: PartitionBounds;
  status: PartitionStatus;
  cursor: string | null;
  rows_read: string;
  rows_written: string;
  rows_unchanged: string;
  chunks: number;
  attempts: number;
  completions: number;
  last_error: string | null;
  error_range: string | null;
  rows_skipped: string;
  /** PostgreSQL's full message and detail, row values included: never leaves the ledger. */
  error_detail: string | null;
  /** Chunks rolled back and computed again because the application changed their rows meanwhile. */
  concurrent_retries: number;
  hold_reason: string | null;
  /** The run attempt that last ran it (retry-failed starts the next). */
  run_attempt: number;
  /** The partition it was cut from while that one ran (limits.splitTail); null for the plan's own. */
  split_from: string | null;
  /** The revert run that put its rows back (migration 0015); null while nothing has. */
  reverted_by: string | null;
  /** The workflow that ran its latest attempt, its own or its group's (migration 0019); null before. */
  workflow_id: string | null;
  started_at: Date | null;
  finished_at: Date | null;
}

/** Inserts the plan; returns how many partitions went in (a run's plan goes in once, whole). */
export async function insertPartitions(db: Queryable, runId: string, partitions: PlannedPartition[]): Promise<number> {
  // one statement for any plan size: arrays instead of a VALUES list that would hit the parameter limit
  const res = await db.query(
    `INSERT INTO backfill.partitions (run_id, partition_id, ordinal, bounds, status)
     SELECT $1, p.id, p.ordinal, p.bounds, 'pending'
       FROM unnest($2::text[], $3::int[], $4::jsonb[]) AS p(id, ordinal, bounds)
     ON CONFLICT (run_id, partition_id) DO NOTHING`,
    [runId, partitions.map((p) => p.id), partitions.map((p) => p.ordinal), partitions.map((p) => JSON.stringify(p.bounds))],
  );
  return res.rowCount ?? 0;
}

/** The next partitions to start, in plan order: those not yet finished at or after `fromOrdinal`. */
export async function nextUnfinished(db: Queryable, runId: string, fromOrdinal: number, limit: number): Promise<{ id: string; ordinal: number }[]> {
  const { rows } = await db.query<{ partition_id: string; ordinal: number }>(
    `SELECT partition_id, ordinal FROM backfill.partitions
      WHERE run_id = $1 AND ordinal >= $2 AND NOT status = ANY($4)
      ORDER BY ordinal LIMIT $3`,
    [runId, fromOrdinal, limit, FINISHED_PARTITION_STATUSES],
  );
  return rows.map((r) => ({ id: r.partition_id, ordinal: r.ordinal }));
}

export async function getPartition(db: Queryable, runId: string, partitionId: string): Promise<PartitionRow | undefined> {
  const { rows } = await db.query<PartitionRow>('SELECT * FROM backfill.partitions WHERE run_id = $1 AND partition_id = $2', [runId, partitionId]);
  return rows[0];
}

/** Locks the partition's row for the rest of the caller's transaction and returns it. */
export async function lockPartition(client: pg.PoolClient, runId: string, partitionId: string): Promise<PartitionRow> {
  const { rows } = await client.query<PartitionRow>('SELECT * FROM backfill.partitions WHERE run_id = $1 AND partition_id = $2 FOR UPDATE', [
    runId,
    partitionId,
  ]);
  if (!rows[0]) throw new Error(`partition ${partitionId} of run ${runId} is not in the ledger`);
  return rows[0];
}

/**
 * Marks an attempt as started; counts attempts so the audit shows every restart. `continues`:
 * the partition's activity taking over what its local attempt handed over in good order
 * (process-partition.ts), the same attempt carried on, not counted again.
 */
export async function startAttempt(db: Queryable, runId: string, partitionId: string, continues = false, workflowId?: string): Promise<PartitionRow> {
  const { rows } = await db.query<PartitionRow>(
    `UPDATE backfill.partitions
        SET status = 'running', attempts = attempts + CASE WHEN $4 THEN 0 ELSE 1 END, started_at = coalesce(started_at, now()), updated_at = now(),
            last_error = NULL, error_range = NULL, error_detail = NULL, workflow_id = coalesce($5, workflow_id)
      WHERE run_id = $1 AND partition_id = $2 AND status = ANY($3)
      RETURNING *`,
    [runId, partitionId, allowedFrom(PARTITION_TRANSITIONS, 'running'), continues, workflowId ?? null],
  );
  if (rows[0]) return rows[0];
  const existing = await getPartition(db, runId, partitionId);
  if (!existing) throw new Error(`partition ${partitionId} of run ${runId} is not in the ledger`);
  return existing;
}

/**
 * Records a partition's end, from the statuses PARTITION_TRANSITIONS allows into it (a
 * pending partition can fail or be cancelled, never succeed). `completions` counts
 * transitions into succeeded, so the audit can prove each partition succeeded exactly
 * once; a repeated call changes nothing and returns the row as it is.
 */
export async function finishPartition(
  db: Queryable,
  runId: string,
  partitionId: string,
  status: 'succeeded' | 'failed' | 'cancelled',
  error?: { message: string; range?: string; detail?: string },
): Promise<PartitionRow> {
  const { rows } = await db.query<PartitionRow>(
    `UPDATE backfill.partitions
        SET status = $3, finished_at = now(), updated_at = now(),
            completions = completions + CASE WHEN $3 = 'succeeded' THEN 1 ELSE 0 END,
            last_error = coalesce($4, last_error), error_range = coalesce($5, error_range),
            error_detail = coalesce($7, error_detail)
      WHERE run_id = $1 AND partition_id = $2 AND status = ANY($6)
      RETURNING *`,
    [runId, partitionId, status, error?.message ?? null, error?.range ?? null, allowedFrom(PARTITION_TRANSITIONS, status), error?.detail ?? null],
  );
  return rows[0] ?? (await getPartition(db, runId, partitionId))!;
}

/** A chunk met a concurrent change and will be computed again: counted, for status and the audit. */
export async function countConcurrentChange(db: Queryable, runId: string, partitionId: string): Promise<PartitionRow> {
  const { rows } = await db.query<PartitionRow>(
    'UPDATE backfill.partitions SET concurrent_retries = concurrent_retries + 1, updated_at = now() WHERE run_id = $1 AND partition_id = $2 RETURNING *',
    [runId, partitionId],
  );
  return rows[0];
}

/** Partitions that never started when a run ends cancelled are recorded as cancelled too. */
export async function cancelPending(db: Queryable, runId: string): Promise<number> {
  const res = await db.query(
    `UPDATE backfill.partitions SET status = 'cancelled', updated_at = now(), finished_at = now()
      WHERE run_id = $1 AND status = 'pending'`,
    [runId],
  );
  return res.rowCount ?? 0;
}

export interface RunTotals extends RowCounts {
  byStatus: Record<PartitionStatus, number>;
  /** Chunks computed again because the application changed their rows while they ran. */
  concurrentRetries: number;
  total: number;
  /** Of `total`, the partitions cut from running ones (`limits.splitTail`). */
  cutWhileRunning: number;
}

export async function runTotals(db: Queryable, runId: string): Promise<RunTotals> {
  const { rows } = await db.query<{ status: PartitionStatus; n: string; rr: string; rw: string; ru: string; rs: string; cr: string; cut: string }>(
    `SELECT status, count(*) n, sum(rows_read) rr, sum(rows_written) rw, sum(rows_unchanged) ru, sum(rows_skipped) rs, sum(concurrent_retries) cr,
            count(*) FILTER (WHERE split_from IS NOT NULL) cut
       FROM backfill.partitions WHERE run_id = $1 GROUP BY status`,
    [runId],
  );
  const byStatus: Record<PartitionStatus, number> = { pending: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0, reverted: 0 };
  const totals: RunTotals = { byStatus, total: 0, rowsRead: 0, rowsWritten: 0, rowsUnchanged: 0, rowsSkipped: 0, concurrentRetries: 0, cutWhileRunning: 0 };
  for (const r of rows) {
    byStatus[r.status] = Number(r.n);
    totals.total += Number(r.n);
    totals.rowsRead += Number(r.rr);
    totals.rowsWritten += Number(r.rw);
    totals.rowsUnchanged += Number(r.ru);
    totals.rowsSkipped! += Number(r.rs);
    totals.concurrentRetries += Number(r.cr);
    totals.cutWhileRunning += Number(r.cut);
  }
  return totals;
}

/** Rows read, written and unchanged by the run's succeeded partitions. */
export async function succeededRowCounts(db: Queryable, runId: string): Promise<RowCounts> {
  const { rows } = await db.query<RowCounts>(
    `SELECT coalesce(sum(rows_read), 0)::float8 AS "rowsRead", coalesce(sum(rows_written), 0)::float8 AS "rowsWritten",
            coalesce(sum(rows_unchanged), 0)::float8 AS "rowsUnchanged"
       FROM backfill.partitions WHERE run_id = $1 AND status = 'succeeded'`,
    [runId],
  );
  return rows[0];
}

/** In plan order, or with `statusOrder` by status in that order first (what needs attention first). */
export async function listPartitions(
  db: Queryable,
  runId: string,
  filter: { status?: PartitionStatus[]; limit?: number; statusOrder?: readonly PartitionStatus[] } = {},
): Promise<PartitionRow[]> {
  const { rows } = await db.query<PartitionRow>(
    `SELECT * FROM backfill.partitions WHERE run_id = $1 AND ($2::text[] IS NULL OR status = ANY($2))
      ORDER BY array_position($4::text[], status), ordinal LIMIT $3`,
    [runId, filter.status ?? null, filter.limit ?? 1000, filter.statusOrder ?? []],
  );
  return rows;
}

export interface ChunkRecord {
  seq: number;
  keyFrom: string | null;
  keyTo: string | null;
  counts: RowCounts;
  chunkSize: number;
  durationMs: number;
  waitMs: number;
  governedBy: string;
  guardValue?: number;
  /** The worker process that wrote it (its Temporal identity). */
  worker?: string;
}

/**
 * A chunk's checkpoint, in one statement inside its transaction (the partition row locked, its
 * status running): the cursor advanced and the counts added, the chunk logged, and with
 * `finishes` the partition succeeded (as finishPartition records it). Returns the row after.
 */
export async function checkpointChunk(
  client: pg.PoolClient,
  runId: string,
  partitionId: string,
  cursor: string | null,
  c: ChunkRecord,
  finishes = false,
): Promise<PartitionRow> {
  const { rows } = await client.query<PartitionRow>(
    `WITH advanced AS (
       UPDATE backfill.partitions
          SET cursor = $3, rows_read = rows_read + $6, rows_written = rows_written + $7, rows_unchanged = rows_unchanged + $8,
              rows_skipped = rows_skipped + $14, chunks = chunks + 1, updated_at = now(),
              status = CASE WHEN $16 THEN 'succeeded' ELSE status END,
              finished_at = CASE WHEN $16 THEN now() ELSE finished_at END,
              completions = completions + CASE WHEN $16 THEN 1 ELSE 0 END
        WHERE run_id = $1 AND partition_id = $2
        RETURNING *),
     logged AS (
       INSERT INTO backfill.chunks (run_id, partition_id, seq, key_from, key_to, rows_read, rows_written, rows_unchanged,
         chunk_size, duration_ms, wait_ms, governed_by, guard_value, rows_skipped, worker, xid)
       VALUES ($1, $2, $17, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, pg_current_xact_id()))
     SELECT * FROM advanced`,
    [
      runId,
      partitionId,
      cursor,
      c.keyFrom,
      c.keyTo,
      c.counts.rowsRead,
      c.counts.rowsWritten,
      c.counts.rowsUnchanged,
      c.chunkSize,
      Math.round(c.durationMs),
      Math.round(c.waitMs),
      c.governedBy,
      c.guardValue ?? null,
      c.counts.rowsSkipped ?? 0,
      c.worker ?? null,
      finishes,
      c.seq,
    ],
  );
  return rows[0];
}

/** Says why a running partition is not writing (or clears it with null); writes only on change. */
export async function setHoldReason(db: Queryable, runId: string, partitionId: string, reason: string | null): Promise<void> {
  await db.query('UPDATE backfill.partitions SET hold_reason = $3 WHERE run_id = $1 AND partition_id = $2 AND hold_reason IS DISTINCT FROM $3', [
    runId,
    partitionId,
    reason,
  ]);
}

/** A partition's outcome as workflows carry it: ids and counts, never row data. */
export function partitionReport(row: PartitionRow): PartitionReport {
  return {
    partitionId: row.partition_id,
    status: row.status,
    rowsRead: Number(row.rows_read),
    rowsWritten: Number(row.rows_written),
    rowsUnchanged: Number(row.rows_unchanged),
    chunks: row.chunks,
    error: row.last_error ?? undefined,
    runAttempt: row.run_attempt,
  };
}
