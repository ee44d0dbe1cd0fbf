/**
 * How recent runs in this ledger spent their time: per finished run, its partitions, its
 * concurrency, the span from its first partition's start to its last partition's finish, and
 * its chunks' own time. `plan` calibrates Temporal's part of a partition from these
 * (operations/orchestration-pace.ts) instead of assuming another machine's figures.
 */
import type { Queryable } from './runs';

const INSUFFICIENT_PRIVILEGE = '42501';
const UNDEFINED_COLUMN = '42703';

export interface RunTiming {
  runId: string;
  finishedAt: Date;
  partitions: number;
  concurrency: number;
  /** The first partition's start to the last partition's finish. */
  spanMs: number;
  /** The chunks' own time (each chunk's transaction), summed over every partition. */
  chunkMs: number;
  /** Its partitions ran in groups (workflows/backfill-partition.ts), as the ledger's workflow ids say. */
  grouped: boolean;
}

/**
 * The newest runs that ran as planned and undisturbed, so their span is orchestration and
 * chunks alone: succeeded at their first attempt, not a revert, every partition succeeded at its
 * first attempt (no worker died under it, no error was retried), no pause, gate or live change
 * of limits, no rows/s cap or allowed hours, no chunk that waited (a guard, the pace), and
 * enough partitions that the slots were kept full.
 */
export async function recentUndisturbedRuns(db: Queryable, options: { limit: number; minPartitions: number; withinDays: number }): Promise<RunTiming[]> {
  try {
    return await readRecentRuns(db, options);
  } catch (e) {
    // a role that may plan but not read the ledger, or a ledger a worker has not yet migrated
    // to this version: no history to measure by, which the plan says; anything else is a fault
    const code = (e as { code?: string }).code;
    if (code === INSUFFICIENT_PRIVILEGE || code === UNDEFINED_COLUMN) return [];
    throw e;
  }
}

async function readRecentRuns(db: Queryable, options: { limit: number; minPartitions: number; withinDays: number }): Promise<RunTiming[]> {
  // a database without the ledger has no history: `plan` works before any run
  const { rows: ledger } = await db.query<{ t: string | null }>("SELECT to_regclass('backfill.chunks')::text AS t");
  if (ledger[0].t === null) return [];
  const { rows } = await db.query<{
    run_id: string;
    finished_at: Date;
    partitions: number;
    concurrency: number;
    span_ms: number;
    chunk_ms: string;
    grouped: boolean;
  }>(
    // the newest candidates first, so a ledger of years costs a few runs' partitions and chunks
    `WITH candidates AS (
         SELECT * FROM backfill.runs r
          WHERE r.status = 'succeeded' AND r.attempt = 1 AND r.reverts IS NULL
            AND r.finished_at > now() - make_interval(days => $3)
            AND r.limits->>'rowsPerSecond' IS NULL AND r.limits->'window' IS NULL
            AND NOT EXISTS (SELECT 1 FROM backfill.run_events e WHERE e.run_id = r.run_id
                              AND e.kind IN ('paused', 'resumed', 'limits-changed', 'canary-passed', 'canary-failed', 'stage-passed', 'stage-failed', 'approved'))
          ORDER BY r.finished_at DESC
          LIMIT 50)
       SELECT r.run_id, r.finished_at, p.partitions, (r.limits->>'concurrency')::int AS concurrency, p.span_ms, c.chunk_ms, p.grouped
         FROM candidates r
        CROSS JOIN LATERAL (
          SELECT count(*)::int AS partitions,
                 (extract(epoch FROM max(finished_at) - min(started_at)) * 1000)::float8 AS span_ms,
                 bool_and(status = 'succeeded' AND attempts = 1 AND started_at IS NOT NULL AND finished_at IS NOT NULL) AS all_succeeded,
                 coalesce(bool_or(workflow_id LIKE '%/group/%'), false) AS grouped
            FROM backfill.partitions WHERE run_id = r.run_id) p
        CROSS JOIN LATERAL (
          SELECT coalesce(sum(duration_ms), 0) AS chunk_ms, bool_or(wait_ms > 0) AS waited
            FROM backfill.chunks WHERE run_id = r.run_id) c
        WHERE p.all_succeeded AND p.partitions >= greatest($2, 2 * (r.limits->>'concurrency')::int) AND c.waited IS NOT TRUE
        ORDER BY r.finished_at DESC
        LIMIT $1`,
    [options.limit, options.minPartitions, options.withinDays],
  );
  return rows.map((r) => ({
    runId: r.run_id,
    finishedAt: r.finished_at,
    partitions: r.partitions,
    concurrency: r.concurrency,
    spanMs: r.span_ms,
    chunkMs: Number(r.chunk_ms),
    grouped: r.grouped,
  }));
}
