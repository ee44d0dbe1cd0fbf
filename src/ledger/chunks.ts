/**
 * Reads of backfill.chunks, the chunk log (one row per committed chunk, written in the chunk's
 * own transaction by checkpointChunk in partitions.ts): the report's timeline, status's writers and
 * pace, and the chunk starts a gate samples from.
 */
import type pg from 'pg';

type Queryable = pg.Pool | pg.PoolClient;

export interface TimelineChunk {
  partition_id: string;
  rows_read: string;
  rows_written: string;
  duration_ms: number;
  wait_ms: number;
  chunk_size: number;
  governed_by: string;
  /** When the run's first chunk committed. */
  first: Date;
  /** Milliseconds after `first`. */
  at_ms: string;
}

/** The chunks in commit order, at most `max`: a longer log is thinned evenly. */
export async function chunkTimeline(db: Queryable, runId: string, max: number): Promise<TimelineChunk[]> {
  const { rows } = await db.query<TimelineChunk>(
    `WITH c AS (SELECT *, row_number() OVER (ORDER BY committed_at) AS i, count(*) OVER () AS n, min(committed_at) OVER () AS first FROM backfill.chunks WHERE run_id = $1)
     SELECT partition_id, rows_read, rows_written, duration_ms, wait_ms, chunk_size, governed_by, first,
            (extract(epoch FROM committed_at - first) * 1000)::bigint AS at_ms
       FROM c WHERE n <= $2 OR i % ceil(n::numeric / $2)::bigint = 0 ORDER BY committed_at`,
    [runId, max],
  );
  return rows;
}

/** The workers that wrote the run's chunks, each with its chunks and rows, most rows first. */
export async function chunkWriters(db: Queryable, runId: string): Promise<{ worker: string; chunks: number; rows: number }[]> {
  const { rows } = await db.query<{ worker: string; chunks: number; rows: string }>(
    `SELECT coalesce(worker, 'unrecorded') AS worker, count(*)::int AS chunks, sum(rows_read) AS rows
       FROM backfill.chunks WHERE run_id = $1 GROUP BY 1 ORDER BY sum(rows_read) DESC, 1`,
    [runId],
  );
  return rows.map((r) => ({ worker: r.worker, chunks: r.chunks, rows: Number(r.rows) }));
}

/** Rows read by the chunks committed in the last `seconds`, and when the first of them committed. */
export async function recentChunks(db: Queryable, runId: string, seconds: number): Promise<{ rows: number; since: Date | null }> {
  const { rows } = await db.query<{ n: string; since: Date | null }>(
    `SELECT coalesce(sum(rows_read), 0) AS n, min(committed_at) AS since FROM backfill.chunks
      WHERE run_id = $1 AND committed_at > now() - make_interval(secs => $2)`,
    [runId, seconds],
  );
  return { rows: Number(rows[0].n), since: rows[0].since };
}

/** A partition's chunks in order: where each started and how many rows it read. */
export async function chunkStarts(db: Queryable, runId: string, partitionId: string): Promise<{ key_from: string | null; rows_read: string }[]> {
  const { rows } = await db.query<{ key_from: string | null; rows_read: string }>(
    'SELECT key_from, rows_read FROM backfill.chunks WHERE run_id = $1 AND partition_id = $2 ORDER BY seq',
    [runId, partitionId],
  );
  return rows;
}
