/**
 * The run's pace over time from its chunk log, for the live partition grid: rows read per second
 * in fixed buckets, and the highest reading of each guard that governed a chunk in the bucket.
 */
import type pg from 'pg';

export interface SeriesPoint {
  /** The bucket's start. */
  at: string;
  rowsPerSecond: number;
  /** Guard name → its highest reading in the bucket (only guards that held a chunk back). */
  guards: Record<string, number>;
}

/** The last `buckets` buckets of `seconds` each, up to the newest chunk, oldest first. */
export async function chunkSeries(db: pg.Pool | pg.PoolClient, runId: string, seconds: number, buckets: number): Promise<SeriesPoint[]> {
  const { rows } = await db.query<{ at: Date; rows: string; guards: Record<string, number> | null }>(
    `WITH c AS (
       SELECT to_timestamp(floor(extract(epoch FROM committed_at) / $2::float8) * $2::float8) AS at, rows_read, governed_by, guard_value
         FROM backfill.chunks
        WHERE run_id = $1 AND committed_at > (SELECT max(committed_at) FROM backfill.chunks WHERE run_id = $1) - make_interval(secs => $2::float8 * $3::float8)),
     g AS (SELECT at, substr(governed_by, 7) AS guard, max(guard_value) AS v FROM c
            WHERE governed_by LIKE 'guard:%' AND guard_value IS NOT NULL GROUP BY 1, 2),
     r AS (SELECT at, sum(rows_read) AS rows FROM c GROUP BY at)
     SELECT r.at, r.rows::text AS rows, (SELECT jsonb_object_agg(g.guard, g.v) FROM g WHERE g.at = r.at) AS guards FROM r ORDER BY r.at`,
    [runId, seconds, buckets],
  );
  return rows.map((r) => ({ at: r.at.toISOString(), rowsPerSecond: Math.round(Number(r.rows) / seconds), guards: r.guards ?? {} }));
}
